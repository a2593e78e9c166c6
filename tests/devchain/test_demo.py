"""The methods and their JSON on the dev chain's demo: every transaction type, blob receipts,
set-code authorizations, uncles, withdrawals, reverts and the safe/finalized pointers."""

from __future__ import annotations

import json

import pytest

import ethread
from ethread import methods
from ethread.devchain import PRAGUE_FORKS, DevChain, contracts
from ethread.devchain.demo import TICK_TOPIC, Demo, demo_chain
from ethread.errors import ExecutionReverted
from ethread.models import (
    AccessListTransaction,
    BlobTransaction,
    CallRequest,
    DynamicFeeTransaction,
    LegacyTransaction,
    SetCodeTransaction,
)
from tests.support.chain_reads import receipts_of
from tests.support.contracts import load_calldata

TYPED_KEYS = {"chainId", "accessList", "yParity", "v", "r", "s"}
FEE_KEYS = {"maxFeePerGas", "maxPriorityFeePerGas"}


@pytest.fixture(scope="module")
def demo() -> tuple[ethread.MemoryBackend, Demo]:
    backend = ethread.MemoryBackend()
    return backend, demo_chain(backend)


def rpc(backend: ethread.MemoryBackend, method: str, *params: object) -> object:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}).encode()
    answer = json.loads(ethread.handle(backend, body))  # type: ignore[arg-type]
    assert "error" not in answer, answer
    return answer["result"]


def all_transactions(backend: ethread.MemoryBackend) -> list[ethread.IncludedTransaction]:
    head = backend.pointer("latest")
    assert head is not None
    out = []
    for number in range(head + 1):
        block = methods.get_block_by_number(backend, number)
        assert block is not None
        out.extend(block.transactions)
    return out


def test_every_transaction_type_is_there_with_its_json_shape(demo: tuple[ethread.MemoryBackend, Demo]) -> None:
    backend, _ = demo
    seen: set[type] = set()
    for itx in all_transactions(backend):
        tx = itx.transaction
        seen.add(type(tx))
        as_json = rpc(backend, "eth_getTransactionByHash", "0x" + itx.hash.hex())
        assert isinstance(as_json, dict)
        assert as_json["type"] == hex(tx.type)
        assert as_json["from"] == "0x" + itx.sender.hex()
        assert as_json["blockNumber"] == hex(itx.block_number)
        assert as_json["gasPrice"] == hex(itx.gas_price)
        if isinstance(tx, LegacyTransaction):
            assert "yParity" not in as_json and "accessList" not in as_json
            assert ("chainId" in as_json) == (tx.v >= 35)
        else:
            assert set(as_json) >= TYPED_KEYS
            assert as_json["v"] == as_json["yParity"]
        if isinstance(tx, DynamicFeeTransaction | BlobTransaction | SetCodeTransaction):
            assert set(as_json) >= FEE_KEYS
            assert itx.gas_price <= tx.max_fee_per_gas
        if isinstance(tx, BlobTransaction):
            assert as_json["blobVersionedHashes"] and as_json["maxFeePerBlobGas"]
        if isinstance(tx, SetCodeTransaction):
            assert as_json["authorizationList"][0].keys() == {"chainId", "address", "nonce", "yParity", "r", "s"}
    assert {LegacyTransaction, AccessListTransaction, DynamicFeeTransaction, BlobTransaction,
            SetCodeTransaction} <= seen


def test_blob_receipts_carry_blob_gas(demo: tuple[ethread.MemoryBackend, Demo]) -> None:
    backend, _ = demo
    blob = [t for t in all_transactions(backend) if isinstance(t.transaction, BlobTransaction)]
    assert blob
    receipts = rpc(backend, "eth_getBlockReceipts", hex(blob[0].block_number))
    assert isinstance(receipts, list)
    mine = next(r for r in receipts if r["transactionHash"] == "0x" + blob[0].hash.hex())
    assert int(mine["blobGasUsed"], 16) == 131072 * len(blob[0].transaction.blob_versioned_hashes)  # type: ignore[union-attr]
    assert int(mine["blobGasPrice"], 16) >= 1
    others = [r for r in receipts if r["type"] != "0x3"]
    assert all("blobGasUsed" not in r for r in others)


def test_uncles_and_withdrawals(demo: tuple[ethread.MemoryBackend, Demo]) -> None:
    backend, _ = demo
    uncles = withdrawals = 0
    for number in range(backend.pointer("latest") + 1):  # type: ignore[operator]
        block = rpc(backend, "eth_getBlockByNumber", hex(number), False)
        assert isinstance(block, dict)
        for index, uncle_hash in enumerate(block["uncles"]):
            uncle = rpc(backend, "eth_getUncleByBlockHashAndIndex", block["hash"], hex(index))
            assert isinstance(uncle, dict) and uncle["hash"] == uncle_hash
            assert rpc(backend, "eth_getUncleByBlockNumberAndIndex", hex(number), hex(index)) == uncle
            uncles += 1
        if "withdrawals" in block:
            assert "withdrawalsRoot" in block
            withdrawals += len(block["withdrawals"])
    assert uncles > 0 and withdrawals > 0


def test_pointers_move_tags(demo: tuple[ethread.MemoryBackend, Demo]) -> None:
    backend, _ = demo
    head = backend.pointer("latest")
    assert head is not None
    assert rpc(backend, "eth_getBlockByNumber", "safe", False)["number"] == hex(head - 1)  # type: ignore[index]
    assert rpc(backend, "eth_getBlockByNumber", "finalized", False)["number"] == hex(head - 2)  # type: ignore[index]
    assert rpc(backend, "eth_getBlockByNumber", "pending", False)["number"] == hex(head)  # type: ignore[index]


def test_revert_on_the_demo_chain(demo: tuple[ethread.MemoryBackend, Demo]) -> None:
    backend, info = demo
    assert info.reverter is not None
    with pytest.raises(ExecutionReverted) as reverted:
        methods.call(backend, CallRequest(to=info.reverter, data=b"\x00"), "latest")
    assert reverted.value.message == "execution reverted: assert(false)"
    failed = [r for b in range(backend.pointer("latest") + 1)  # type: ignore[operator]
              for r in methods.get_block_receipts(backend, b) or () if r.status == 0]
    assert failed, "the demo's reverting transactions leave receipts with status 0"


def test_logs_of_every_topic_count(demo: tuple[ethread.MemoryBackend, Demo]) -> None:
    backend, _ = demo
    logs = rpc(backend, "eth_getLogs", {"fromBlock": "earliest", "toBlock": "latest"})
    assert isinstance(logs, list)
    assert {len(log["topics"]) for log in logs} >= {0, 1, 2, 3, 4}


def test_calls_on_a_reused_state_see_no_other_call(demo: tuple[ethread.MemoryBackend, Demo]) -> None:
    """eth_call reuses post-block states; every call must still start from the block's state."""
    from ethread.devchain import contracts
    from ethread.methods.call import CallStates

    backend, info = demo
    rich = info.chain.accounts[1].address
    sequence = [
        CallRequest(to=info.storage, data=load_calldata(0)),
        CallRequest(to=info.storage, data=contracts.store_calldata({0: 99, 1: 98})),
        CallRequest(to=info.storage, data=load_calldata(0)),
        CallRequest(sender=rich, to=info.storage, value=10**18, data=load_calldata(1)),
        CallRequest(to=info.reverter, data=b"\x00"),
        CallRequest(to=info.storage, data=load_calldata(1)),
    ]

    def outcomes(states: CallStates | None) -> list[object]:
        out: list[object] = []
        for request in sequence * 2:
            for block in ("latest", 44):
                try:
                    out.append(methods.call(backend, request, block, states))
                except ethread.EthreadError as exc:
                    out.append((exc.code, exc.message))
        return out

    states = CallStates()
    cached = outcomes(states)
    assert len(states._states) == 2  # one state per block, reused by every later call
    assert outcomes(None) == cached
    assert cached[0] == cached[4]  # the store between them left no trace


def test_next_block_adds_a_block_with_a_tick_log() -> None:
    backend = ethread.MemoryBackend()
    chain = DevChain(backend, forks=PRAGUE_FORKS, accounts=3)
    demo = Demo(chain=chain, log_emitter=chain.deploy_runtime(chain.accounts[0], contracts.LOG_EMITTER),
                storage=chain.deploy_runtime(chain.accounts[0], contracts.STORAGE))
    chain.mine()
    chain.mine()
    block = demo.next_block()
    assert block.number == 3 and backend.pointer("finalized") == 1
    (receipt,) = receipts_of(backend, block)
    (log,) = receipt.logs
    assert log.address == demo.log_emitter and log.topics[0] == TICK_TOPIC
    assert log.topics[1] == (3).to_bytes(32, "big")

