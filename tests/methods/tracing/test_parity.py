"""methods/tracing/parity.py: the parity-style ``trace_`` namespace as reth answers it, on a
proof-of-work dev chain (London: block rewards, an uncle) with a forwarder calling a storage
contract: a transaction's flat calls with where they stand, a block's with its rewards after
them, one trace by position, trace_filter's addresses, modes, window and bounds, replays
with the traces asked for (output, flat list, state diff), trace_call, and the call a signed
transaction makes."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

import ethread
from ethread.devchain import DevChain, ForkSchedule, contracts
from ethread.devchain.signing import sign_transaction
from ethread.errors import InvalidParams, LimitExceeded
from ethread.methods.tracing import NotTraceable
from ethread.methods.tracing.parity import (
    MAX_FILTER_BLOCKS,
    MAX_FILTER_RESULTS,
    UNCHANGED,
    Delta,
    RewardTrace,
    TraceFilter,
    block_traces,
    call_traces,
    filter_traces,
    replay_block,
    replay_transaction,
    signed_request,
    trace_at,
    transaction_traces,
)
from ethread.models import CallRequest, LegacyTransaction
from ethread.rlpcodec.transactions import encode_transaction
from tests.support.contracts import FORWARDER, load_calldata

ETHER = 10**18


@pytest.fixture(scope="module")
def scene() -> dict[str, Any]:
    chain = DevChain(ethread.MemoryBackend(), forks=ForkSchedule.from_genesis("london"), accounts=2)
    a = chain.accounts
    store = chain.deploy_runtime(a[0], contracts.STORAGE)
    forwarder = chain.deploy_runtime(a[0], FORWARDER)
    chain.mine()
    uncle = chain.sibling(1)
    forwarded = chain.send(a[1], forwarder, data=store + contracts.store_calldata({1: 7}))
    transfer = chain.send(a[0], a[1].address, value=5)
    block = chain.mine(uncles=[uncle])
    return {"chain": chain, "backend": chain.backend, "store": store, "forwarder": forwarder,
            "a": a, "forwarded": forwarded, "transfer": transfer, "block": block, "uncle": uncle}


def test_a_transactions_calls_with_where_they_stand(scene: dict[str, Any]) -> None:
    calls = transaction_traces(scene["backend"], scene["forwarded"])
    assert calls is not None
    assert [(c.type, c.call_type, c.trace_address, c.subtraces) for c in calls] == [
        ("call", "call", (), 1), ("call", "call", (0,), 0)]
    top, inner = calls
    assert top.sender == scene["a"][1].address and top.to == scene["forwarder"]
    assert inner.sender == scene["forwarder"] and inner.to == scene["store"]
    assert {(c.block_number, c.block_hash, c.transaction_hash, c.transaction_position)
            for c in calls} == {(2, scene["block"].hash, scene["forwarded"], 0)}
    assert trace_at(scene["backend"], scene["forwarded"], (1,)) == inner
    assert trace_at(scene["backend"], scene["forwarded"], (2,)) is None
    assert trace_at(scene["backend"], scene["forwarded"], (0, 0)) is None  # reth takes one index
    assert transaction_traces(scene["backend"], b"\x00" * 32) is None


def test_a_blocks_traces_end_with_its_rewards(scene: dict[str, Any]) -> None:
    block, uncle = scene["block"], scene["uncle"]
    traces = block_traces(scene["backend"], block)
    *calls, miner, uncle_reward = traces
    assert [c.transaction_hash for c in calls] == [scene["forwarded"], scene["forwarded"],
                                                  scene["transfer"]]
    base = 2 * ETHER  # Constantinople on: 2 ether a block
    assert miner == RewardTrace(author=block.header.coinbase, reward_type="block",
                                value=base + base // 32, block_hash=block.hash, block_number=2)
    assert uncle_reward.reward_type == "uncle" and uncle_reward.author == uncle.coinbase
    assert uncle_reward.value == (8 + uncle.number - 2) * base // 8
    merged = DevChain(ethread.MemoryBackend(), accounts=1)
    assert block_traces(merged.backend, merged.mine()) == ()  # after the merge: no rewards


def test_trace_filter_by_address_mode_and_window(scene: dict[str, Any]) -> None:
    backend, a = scene["backend"], scene["a"]
    everything = filter_traces(backend, TraceFilter(from_block=1, to_block=2))
    assert len(everything) == len(block_traces(backend, scene["block"])) + len(
        block_traces(backend, scene["chain"].block(1)))
    to_store = filter_traces(backend, TraceFilter(from_block=2, to_block=2,
                                                  to_addresses=frozenset({scene["store"]})))
    assert [t.to for t in to_store] == [scene["store"]]  # type: ignore[union-attr]
    either = TraceFilter(from_block=2, to_block=2, from_addresses=frozenset({a[0].address}),
                         to_addresses=frozenset({scene["store"]}))
    assert len(filter_traces(backend, either)) == 2  # the transfer, the inner call
    both = TraceFilter(from_block=2, to_block=2, from_addresses=frozenset({a[0].address}),
                       to_addresses=frozenset({scene["store"]}), mode="intersection")
    assert filter_traces(backend, both) == ()
    window = filter_traces(backend, TraceFilter(from_block=1, to_block=2, after=1, count=2))
    assert window == everything[1:3]


@pytest.mark.parametrize(("query", "error", "message"), [
    (TraceFilter(from_block=2, to_block=1), InvalidParams, "fromBlock cannot be greater"),
    (TraceFilter(from_block=0, to_block=MAX_FILTER_BLOCKS), InvalidParams, "block range too large"),
    (TraceFilter(from_block=1, to_block=2, count=MAX_FILTER_RESULTS + 1), LimitExceeded,
     "count too large"),
])
def test_trace_filter_bounds(scene: dict[str, Any], query: TraceFilter, error: type,
                             message: str) -> None:
    with pytest.raises(error, match=message):
        filter_traces(scene["backend"], query)


def test_a_replay_gives_what_was_asked(scene: dict[str, Any]) -> None:
    backend, store, sender = scene["backend"], scene["store"], scene["a"][1].address
    replayed = replay_transaction(backend, scene["forwarded"], ["trace", "stateDiff"])
    assert replayed.output == b"" and replayed.vm_trace is None
    assert replayed.trace is not None and len(replayed.trace) == 2
    assert all(t.block_hash is None and t.transaction_hash is None for t in replayed.trace)
    assert replayed.state_diff is not None
    slot = (1).to_bytes(32, "big")
    assert replayed.state_diff[store].storage == {slot: Delta("*", bytes(32), (7).to_bytes(32, "big"))}
    assert replayed.state_diff[store].balance == UNCHANGED
    nonce = replayed.state_diff[sender].nonce
    assert nonce.kind == "*" and nonce.after == nonce.before + 1  # type: ignore[operator]
    only_diff = replay_transaction(backend, scene["forwarded"], ["stateDiff"])
    assert only_diff.trace is None and only_diff.state_diff == replayed.state_diff
    block = replay_block(backend, scene["block"], ["trace"])
    assert [r.tx_hash for r in block] == [scene["forwarded"], scene["transfer"]]
    assert block[0].trace is not None
    # (a replay's entries carry no block in JSON; only the number, which JSON leaves out, differs)
    assert [replace(t, block_number=0) for t in block[0].trace] == list(replayed.trace)
    with pytest.raises(NotTraceable, match="transaction not found"):
        replay_transaction(backend, b"\x00" * 32, ["trace"])


def test_trace_call_and_the_call_a_signed_transaction_makes(scene: dict[str, Any]) -> None:
    backend, store, a = scene["backend"], scene["store"], scene["a"]
    read = call_traces(backend, CallRequest(sender=a[0].address, to=store,
                                            data=load_calldata(1)), ["trace"])
    assert read.output == (7).to_bytes(32, "big") and read.state_diff is None
    assert read.trace is not None and read.trace[0].to == store
    tx = sign_transaction(LegacyTransaction(nonce=9, gas_price=3, gas=50_000, to=store, value=1,
                                            data=b"\x01", v=0, r=0, s=0), a[1], 1337)
    request = signed_request(encode_transaction(tx))
    assert (request.sender, request.to, request.nonce, request.gas, request.value, request.data,
            request.gas_price) == (a[1].address, store, 9, 50_000, 1, b"\x01", 3)
    with pytest.raises(InvalidParams, match="invalid transaction"):
        signed_request(b"\xc3\x01\x02\x03")
