"""The parity-style trace_* namespace compared with anvil's, field by field, on the dev chain
of tests/differential/test_anvil_traces.py (the same signed transactions in both: calls, delegate and
static calls, precompiles, a reverting callee, CREATE and CREATE2, a contract that
self-destructs in its constructor, a custom-error revert, a revert after a successful call, a
plain self-destruct, a plain transfer).

ethread answers as reth does (revm-inspectors' parity builder). Where the pinned anvil answers
otherwise, the test takes the difference out in :func:`_as_reth`, naming it:

- anvil lists calls to precompiles (sha256, identity) as traces; reth (``default_parity``:
  ``exclude_precompile_calls``) and geth's flatCallTracer leave them out, and so does ethread.
  anvil's lists are compared with those entries removed and the rest renumbered.
- a block's hash: anvil seals the replayed blocks with hashes of its own; each side's
  ``blockHash`` is compared with its own ``eth_getBlockByNumber``.
- an unknown transaction or block: reth answers null, anvil an empty list.
- anvil has no trace_replayTransaction, trace_get or trace_call (-32601): ethread's
  trace_replayTransaction is compared with the same transaction's entry of anvil's
  trace_replayBlockTransactions, and trace_get with the entry of anvil's trace_transaction.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import ethread
from ethread.devchain import DevChain, contracts
from tests.support.router import Traced
from tests.support.rpc_cases import answer_of, first_difference

PRECOMPILES = {"0x" + n.to_bytes(20, "big").hex() for n in range(1, 0x12)}


def _without_precompiles(traces: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """anvil's list with the calls to precompiles taken out and the trace addresses and
    subtrace counts of the rest recomputed, as reth numbers them."""
    by_tx: dict[Any, list[dict[str, Any]]] = {}
    for entry in traces:
        by_tx.setdefault(entry.get("transactionHash"), []).append(entry)
    out: list[dict[str, Any]] = []
    for entries in by_tx.values():
        kept = {tuple(e["traceAddress"]): e for e in entries
                if not (e["type"] == "call" and e["action"].get("to") in PRECOMPILES)}
        renumbered: dict[tuple[int, ...], tuple[int, ...]] = {(): ()}
        children: dict[tuple[int, ...], int] = {}
        for address in sorted(kept):
            if not address:
                continue
            parent = address[:-1]
            if parent not in renumbered:
                continue
            position = children.get(parent, 0)
            children[parent] = position + 1
            renumbered[address] = (*renumbered[parent], position)
        for address, entry in kept.items():
            if address in renumbered:
                out.append({**entry, "traceAddress": list(renumbered[address]),
                            "subtraces": children.get(address, 0)})
    return out


def _hashes(source: Any, numbers: set[int]) -> dict[int, str]:
    return {n: source("eth_getBlockByNumber", hex(n), False)["hash"]
            for n in numbers}


class _Ours:
    def __init__(self, backend: ethread.MemoryBackend) -> None:
        self.backend = backend

    def __call__(self, method: str, *params: Any) -> Any:
        return answer_of(self.backend, method, *params)["result"]


def _as_reth(mine: Any, theirs: Any, ours_hashes: dict[int, str],
             their_hashes: dict[int, str]) -> tuple[Any, Any]:
    theirs = _without_precompiles(theirs)
    for entry in mine:
        if entry.get("blockHash") is not None:
            assert entry["blockHash"] == ours_hashes[entry["blockNumber"]]
            entry["blockHash"] = "<block>"
    for entry in theirs:
        if entry.get("blockHash") is not None:
            assert entry["blockHash"] == their_hashes[entry["blockNumber"]]
            entry["blockHash"] = "<block>"
    return mine, theirs


@pytest.fixture(scope="module")
def hashes(traced: Traced) -> tuple[dict[int, str], dict[int, str]]:
    ours = _Ours(traced.backend)
    return _hashes(ours, {1, 2}), _hashes(traced.peer, {1, 2})


@pytest.mark.anvil
def test_trace_transaction_agrees_with_anvil(traced: Traced, hashes: Any) -> None:
    for index, tx_hash in enumerate(traced.hashes):
        mine = answer_of(traced.backend, "trace_transaction", tx_hash)["result"]
        theirs = traced.peer("trace_transaction", tx_hash)
        diff = first_difference(*_as_reth(mine, theirs, *hashes))
        assert diff is None, (index, diff, json.dumps(mine, indent=1))
    # traces kept: the router's calls (precompiles left out), its creates and the self-destruct
    counts = [len(answer_of(traced.backend, "trace_transaction", h)["result"]) for h in traced.hashes]
    assert counts == [1, 1, 1, 1, 4, 5, 1, 2, 2, 1]


@pytest.mark.anvil
@pytest.mark.parametrize("number", [1, 2])
def test_trace_block_agrees_with_anvil(traced: Traced, hashes: Any, number: int) -> None:
    mine = answer_of(traced.backend, "trace_block", hex(number))["result"]
    theirs = traced.peer("trace_block", hex(number))
    assert first_difference(*_as_reth(mine, theirs, *hashes)) is None
    assert not any(entry["type"] == "reward" for entry in mine)  # (a proof-of-stake block)


@pytest.mark.anvil
@pytest.mark.parametrize("types", [["trace"], ["stateDiff"], ["trace", "stateDiff"]])
def test_replays_agree_with_anvil(traced: Traced, types: list[str]) -> None:
    for number in (1, 2):
        mine = answer_of(traced.backend, "trace_replayBlockTransactions", hex(number), types)["result"]
        theirs = traced.peer("trace_replayBlockTransactions", hex(number), types)
        for entry in theirs:
            entry["trace"] = _without_precompiles(entry["trace"])
        assert first_difference(mine, theirs) is None, number
        for replay in mine:  # trace_replayTransaction: the same, without the hash
            alone = answer_of(traced.backend, "trace_replayTransaction", replay["transactionHash"],
                              types)["result"]
            assert alone == {k: v for k, v in replay.items() if k != "transactionHash"}


@pytest.mark.anvil
def test_state_diff_values(traced: Traced) -> None:
    """The creating transactions' accounts are all added; the router's CREATEs add two
    contracts (the one that self-destructed in its constructor is left out); the self-destruct
    moves its balance to a beneficiary that did not exist (a change from 0, as reth shows it)."""
    replay = answer_of(traced.backend, "trace_replayTransaction", traced.hashes[5], ["stateDiff"])
    diff = replay["result"]["stateDiff"]
    added = sorted(a for a, d in diff.items() if d["nonce"] == {"+": "0x1"})
    assert len(added) == 2 and all(diff[a]["code"] == {"+": "0x00"} for a in added)
    assert diff["0x" + "be" * 20]["balance"] == {"*": {"from": "0x0", "to": "0x3e8"}}
    assert replay["result"]["trace"] == [] and replay["result"]["vmTrace"] is None


@pytest.mark.anvil
def test_trace_filter_agrees_with_anvil(traced: Traced, hashes: Any) -> None:
    storage = "0x5fbdb2315678afecb367f032d93f642f64180aa3"
    sender = "0x90f79bf6eb2c4f870365e785982e1f101e93b906"
    for query in ({"fromBlock": "0x1", "toBlock": "0x2"},
                  {"fromBlock": "0x1", "toBlock": "0x2", "toAddress": [storage]},
                  {"fromBlock": "0x1", "toBlock": "0x2", "fromAddress": [sender],
                   "toAddress": [storage], "mode": "union"},
                  {"fromBlock": "0x2", "toBlock": "0x2", "fromAddress": [sender],
                   "toAddress": [storage], "mode": "intersection"}):
        mine = answer_of(traced.backend, "trace_filter", query)["result"]
        theirs = traced.peer("trace_filter", query)
        assert first_difference(*_as_reth(mine, theirs, *hashes)) is None, query
    everything = answer_of(traced.backend, "trace_filter", {"fromBlock": "0x1", "toBlock": "0x2"})
    window = answer_of(traced.backend, "trace_filter",
                       {"fromBlock": "0x1", "toBlock": "0x2", "after": 3, "count": 4})
    assert window["result"] == everything["result"][3:7]


@pytest.mark.anvil
def test_trace_get_and_unknowns(traced: Traced) -> None:
    tx_hash = traced.hashes[5]
    whole = answer_of(traced.backend, "trace_transaction", tx_hash)["result"]
    assert answer_of(traced.backend, "trace_get", tx_hash, ["0x2"])["result"] == whole[2]
    assert answer_of(traced.backend, "trace_get", tx_hash, ["0x9"])["result"] is None
    assert answer_of(traced.backend, "trace_get", tx_hash, ["0x1", "0x2"])["result"] is None
    # reth: null; anvil: []
    assert answer_of(traced.backend, "trace_transaction", "0x" + "11" * 32)["result"] is None
    assert traced.peer("trace_transaction", "0x" + "11" * 32) == []
    assert answer_of(traced.backend, "trace_block", "0x99")["result"] is None
    assert answer_of(traced.backend, "trace_block", "0x0")["result"] == []


def test_trace_call() -> None:
    chain = DevChain(ethread.MemoryBackend())
    alice = chain.accounts[0]
    reverter = chain.deploy_runtime(alice, contracts.REVERTER)
    chain.mine()
    call = {"from": "0x" + alice.address.hex(), "to": "0x" + reverter.hex(), "data": "0x01"}
    answer = answer_of(chain.backend, "trace_call", call, ["trace", "stateDiff"], "latest")["result"]
    (top,) = answer["trace"]
    assert top["error"] == "Reverted" and top["result"]["output"].startswith("0x08c379a0")
    assert answer["output"] == top["result"]["output"]
    assert answer["stateDiff"]["0x" + alice.address.hex()]["nonce"] == {"*": {"from": "0x1", "to": "0x2"}}
    overridden = answer_of(chain.backend, "trace_call", call, ["trace"], "latest",
                           {"0x" + reverter.hex(): {"code": "0x00"}})["result"]
    assert "error" not in overridden["trace"][0] and overridden["stateDiff"] is None


@pytest.mark.parametrize(("method", "params", "code", "words"), [
    ("trace_replayTransaction", ["0x" + "11" * 32, ["trace"]], -32000, "transaction not found"),
    ("trace_replayTransaction", ["0x" + "11" * 32, ["traces"]], -32602, "unknown trace type"),
    ("trace_replayTransaction", ["0x" + "11" * 32, "trace"], -32602, "expected a list"),
    ("trace_replayBlockTransactions", ["0x1", ["vmtrace", "trace"]], -32602, "unknown trace type"),
    ("trace_filter", [{"fromBlock": "0x0", "toBlock": "0x64"}], -32602, "limited to 100 blocks"),
    ("trace_filter", [{"fromBlock": "0x2", "toBlock": "0x1"}], -32602, "greater than toBlock"),
    ("trace_filter", [{"count": 10_001}], -32005, "limited to 10000 traces"),
    ("trace_filter", [{"mode": "both"}], -32602, "union or intersection"),
    ("trace_filter", [{"fromAddress": "0x00"}], -32602, "list of addresses"),
    ("trace_filter", [{"after": -1}], -32602, "non-negative"),
    ("trace_filter", ["latest"], -32602, "trace filter object"),
    ("trace_get", ["0x" + "11" * 32, "0x1"], -32602, "list of indices"),
    ("trace_transaction", ["0x11"], -32602, "invalid argument 0"),
    ("trace_block", [], -32602, "missing value for required argument 0"),
])
def test_bad_input(method: str, params: list[Any], code: int, words: str) -> None:
    chain = DevChain(ethread.MemoryBackend())
    chain.send(chain.accounts[0], chain.accounts[1].address, value=1)
    chain.mine()
    chain.mine()
    chain.mine()
    error = answer_of(chain.backend, method, *params)["error"]
    assert error["code"] == code and words in error["message"], error


@pytest.mark.anvil
def test_the_time_limit_spans_a_block(traced: Traced) -> None:
    """A request replaying several transactions stops, in geth's words, once its whole time
    has run out (trace_block, trace_filter, trace_replayBlockTransactions)."""
    from ethread.backend import Deadline
    from ethread.errors import ExecutionFailed
    from ethread.methods.tracing import block_by_ref
    from ethread.methods.tracing.parity import TraceFilter, block_traces, filter_traces, replay_block

    block = block_by_ref(traced.backend, 2)
    spent = Deadline.after(-1.0)
    for run in (lambda: block_traces(traced.backend, block, deadline=spent),
                lambda: replay_block(traced.backend, block, ["trace"], deadline=spent),
                lambda: filter_traces(traced.backend, TraceFilter(from_block=1, to_block=2),
                                      deadline=spent)):
        with pytest.raises(ExecutionFailed, match="execution timeout"):
            run()
