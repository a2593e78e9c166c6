"""debug_intermediateRoots (geth's ``IntermediateRoots``), trace_callMany and
trace_rawTransaction (reth's ``trace_call_many`` and ``trace_raw_transaction``), each
checked against what it must equal:

- before Byzantium a receipt commits to the state root after its transaction, which is what
  debug_intermediateRoots answers, one root per transaction (on the fast path and on
  py-evm's own);
- trace_callMany runs each call on the state the calls before it left: a write is seen by
  the read after it, and one call alone answers what trace_call answers;
- trace_rawTransaction of a mined transaction's own encoding, on the state before it, makes
  the calls its trace_replayTransaction shows.
"""

from __future__ import annotations

from typing import Any

import pytest

import ethread
from ethread.devchain import DevChain, contracts
from ethread.devchain.genesis import PRAGUE_FORKS, ForkSchedule
from ethread.rlpcodec.transactions import encode_transaction
from tests.support.plain_replay import on_path
from tests.support.rpc_cases import answer_of


def _hex(data: bytes) -> str:
    return "0x" + data.hex()


@pytest.fixture(scope="module")
def homestead() -> DevChain:
    chain = DevChain(ethread.MemoryBackend(), forks=ForkSchedule.from_genesis("homestead"),
                     accounts=3)
    a = chain.accounts
    storage = chain.deploy_runtime(a[0], contracts.STORAGE)
    chain.mine()
    chain.send(a[1], storage, data=(1).to_bytes(32, "big") + (7).to_bytes(32, "big"))
    chain.send(a[2], a[0].address, value=10**15)
    chain.send(a[1], storage, data=(1).to_bytes(32, "big") + (0).to_bytes(32, "big"))
    chain.mine()
    return chain


@pytest.mark.parametrize("fast", [True, False])
def test_intermediate_roots_are_the_receipts_roots(homestead: DevChain, fast: bool) -> None:
    block = homestead.block(2)
    with on_path(fast):
        answer = answer_of(homestead.backend, "debug_intermediateRoots", _hex(block.hash))
    receipts = answer_of(homestead.backend, "eth_getBlockReceipts", _hex(block.hash))["result"]
    assert len(receipts) == 3
    assert answer["result"] == [r["root"] for r in receipts]
    assert answer["result"][-1] != answer["result"][0]


def test_intermediate_roots_refusals(homestead: DevChain) -> None:
    missing = answer_of(homestead.backend, "debug_intermediateRoots", "0x" + "11" * 32)
    assert missing["error"]["message"] == "block 0x" + "11" * 32 + " not found"
    genesis = answer_of(homestead.backend, "debug_intermediateRoots",
                        _hex(homestead.block(0).hash))
    assert genesis["error"]["message"] == "genesis is not traceable"


@pytest.fixture(scope="module")
def prague() -> dict[str, Any]:
    chain = DevChain(ethread.MemoryBackend(), forks=PRAGUE_FORKS, accounts=3)
    a = chain.accounts
    storage = chain.deploy_runtime(a[0], contracts.STORAGE)
    chain.mine()
    tx_hash = chain.send(a[1], storage, data=(3).to_bytes(32, "big") + (9).to_bytes(32, "big"),
                         gas=100_000)
    chain.mine()
    return {"chain": chain, "storage": storage, "tx_hash": tx_hash}


def test_call_many_sees_the_calls_before(prague: dict[str, Any]) -> None:
    chain, storage = prague["chain"], prague["storage"]
    sender = _hex(chain.accounts[2].address)
    write = {"from": sender, "to": _hex(storage),
             "data": _hex((5).to_bytes(32, "big") + (42).to_bytes(32, "big"))}
    read = {"from": sender, "to": _hex(storage), "data": _hex((5).to_bytes(32, "big"))}
    both = answer_of(chain.backend, "trace_callMany",
                     [[write, ["trace", "stateDiff"]], [read, ["trace"]]], "latest")["result"]
    assert len(both) == 2
    assert both[1]["output"] == _hex((42).to_bytes(32, "big"))
    assert both[1]["stateDiff"] is None
    slot = _hex((5).to_bytes(32, "big"))
    assert both[0]["stateDiff"][_hex(storage)]["storage"][slot] == {
        "*": {"from": _hex(bytes(32)), "to": _hex((42).to_bytes(32, "big"))}}
    alone = answer_of(chain.backend, "trace_call", read, ["trace"], "latest")["result"]
    assert alone["output"] == _hex(bytes(32))  # (without the write before it)
    single = answer_of(chain.backend, "trace_callMany", [[write, ["trace", "stateDiff"]]])
    assert single["result"] == [answer_of(chain.backend, "trace_call", write,
                                          ["trace", "stateDiff"], "latest")["result"]]


def test_call_many_refusals(prague: dict[str, Any]) -> None:
    chain = prague["chain"]
    bad = answer_of(chain.backend, "trace_callMany", [[{"to": "0x12"}, ["trace"]]])
    assert bad["error"]["code"] == -32602 and "call 0" in bad["error"]["message"]
    shape = answer_of(chain.backend, "trace_callMany", [[{}, ["trace"], 1]])
    assert shape["error"]["code"] == -32602
    unknown = answer_of(chain.backend, "trace_callMany", [[{}, ["vmTraces"]]])
    assert unknown["error"]["code"] == -32602 and "unknown trace type" in unknown["error"]["message"]


def test_raw_transaction_makes_its_replays_calls(prague: dict[str, Any]) -> None:
    chain, tx_hash = prague["chain"], prague["tx_hash"]
    block = chain.block(2)
    (itx,) = block.transactions
    raw = _hex(encode_transaction(itx.transaction))
    ran = answer_of(chain.backend, "trace_rawTransaction", raw, ["trace"], hex(1))["result"]
    replayed = answer_of(chain.backend, "trace_replayTransaction", _hex(tx_hash),
                         ["trace"])["result"]
    assert ran["trace"] == replayed["trace"] and ran["output"] == replayed["output"]
    assert ran["trace"][0]["action"]["from"] == _hex(chain.accounts[1].address)


def test_raw_transaction_refusals(prague: dict[str, Any]) -> None:
    chain = prague["chain"]
    garbage = answer_of(chain.backend, "trace_rawTransaction", "0x02c0", ["trace"])
    assert garbage["error"]["code"] == -32602
    assert garbage["error"]["message"].startswith("invalid transaction")
