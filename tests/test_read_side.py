"""The rest of the read side, method by method, against answers worked out independently:
trie roots recomputed from the raw encodings, fee rules computed by hand, a dev chain whose
every transaction this test chose."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
import rlp
from eth_utils import keccak
from trie import HexaryTrie

import ethread
from ethread import methods
from ethread.codec.dispatch import Context
from ethread.codec.jsonrpc import Dispatcher
from ethread.devchain import PRAGUE_FORKS, DevChain, Fees, contracts
from ethread.errors import HeaderNotFound
from ethread.methods.fees import next_base_fee
from ethread.methods.filters import FilterRegistry
from ethread.models import Header, LogFilter

EMITTER = bytes.fromhex("7dcd17433742f4c0ca53122ab541d0ba67fc27df")
NOBODY = bytes.fromhex("c1cadaffffffffffffffffffffffffffffffffff")


def ask(backend: Any, method: str, *params: Any, dispatcher: Dispatcher | None = None) -> Any:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)})
    raw = dispatcher.handle(body.encode()) if dispatcher else ethread.handle(backend, body.encode())
    assert raw is not None
    return json.loads(raw)


def result(backend: Any, method: str, *params: Any, dispatcher: Dispatcher | None = None) -> Any:
    answer = ask(backend, method, *params, dispatcher=dispatcher)
    assert "error" not in answer, answer
    return answer["result"]


def error(backend: Any, method: str, *params: Any) -> tuple[int, str]:
    answer = ask(backend, method, *params)
    assert "result" not in answer, answer
    return answer["error"]["code"], answer["error"]["message"]


def trie_root(items: list[bytes]) -> bytes:
    trie = HexaryTrie({})
    for index, item in enumerate(items):
        trie[rlp.encode(index)] = item
    return bytes(trie.root_hash)


# -- receipts ------------------------------------------------------------------------------------


def test_every_transaction_has_its_receipt(rpc_compat_memory: ethread.MemoryBackend) -> None:
    shapes = set()
    for number in range(46):
        block = methods.get_block_by_number(rpc_compat_memory, number)
        receipts = methods.get_block_receipts(rpc_compat_memory, number)
        assert block is not None and receipts is not None
        for itx, receipt in zip(block.transactions, receipts, strict=True):
            assert methods.get_transaction_receipt(rpc_compat_memory, itx.hash) == receipt
            answer = result(rpc_compat_memory, "eth_getTransactionReceipt", "0x" + itx.hash.hex())
            shapes.add((answer["type"], "root" in answer, "status" in answer, "blobGasUsed" in answer))
    # pre-Byzantium roots, typed receipts with status, blob fields on blob transactions only
    assert ("0x0", True, False, False) in shapes
    assert ("0x2", False, True, False) in shapes
    assert ("0x3", False, True, True) in shapes
    assert ("0x4", False, True, False) in shapes
    assert all(not blob for kind, _, _, blob in shapes if kind != "0x3")
    assert result(rpc_compat_memory, "eth_getTransactionReceipt", "0x" + "ab" * 32) is None


# -- account state -------------------------------------------------------------------------------


def test_state_methods_agree_with_the_verified_proof(rpc_compat_memory: ethread.MemoryBackend) -> None:
    for number in (5, 27, 45):
        proof = methods.get_proof(rpc_compat_memory, EMITTER, [b"\x00"], number)
        header = methods.get_block_by_number(rpc_compat_memory, number).header  # type: ignore[union-attr]
        ethread.verify_account_proof(header.state_root, proof)
        at = hex(number)
        assert result(rpc_compat_memory, "eth_getBalance", "0x" + EMITTER.hex(), at) == hex(proof.balance)
        assert result(rpc_compat_memory, "eth_getTransactionCount", "0x" + EMITTER.hex(), at) == \
            hex(proof.nonce)
        code = result(rpc_compat_memory, "eth_getCode", "0x" + EMITTER.hex(), at)
        assert keccak(bytes.fromhex(code[2:])) == proof.code_hash
        slot = result(rpc_compat_memory, "eth_getStorageAt", "0x" + EMITTER.hex(), "0x0", at)
        assert int(slot, 16) == proof.storage_proof[0].value and len(slot) == 66


def test_the_block_argument_is_optional_and_takes_every_form(rpc_compat_memory: ethread.MemoryBackend) -> None:
    address = "0x" + EMITTER.hex()
    head_hash = "0x" + rpc_compat_memory.canonical_hash(45).hex()  # type: ignore[union-attr]
    latest = result(rpc_compat_memory, "eth_getBalance", address)
    assert result(rpc_compat_memory, "eth_getBalance", address, "latest") == latest
    assert result(rpc_compat_memory, "eth_getBalance", address, head_hash) == latest
    assert result(rpc_compat_memory, "eth_getBalance", address, {"blockHash": head_hash}) == latest
    assert result(rpc_compat_memory, "eth_getBalance", address, {"blockNumber": "0x2d"}) == latest
    assert error(rpc_compat_memory, "eth_getBalance", address, "0x3e8") == (-32000, "header not found")
    assert error(rpc_compat_memory, "eth_getCode", address, "0x" + "ab" * 32) == \
        (-32000, "header for hash not found")
    with pytest.raises(HeaderNotFound):
        methods.get_balance(rpc_compat_memory, EMITTER, 1000)


def test_absent_accounts_read_as_zero(rpc_compat_memory: ethread.MemoryBackend) -> None:
    assert methods.get_balance(rpc_compat_memory, NOBODY) == 0
    assert methods.get_transaction_count(rpc_compat_memory, NOBODY) == 0
    assert methods.get_code(rpc_compat_memory, NOBODY) == b""
    assert methods.get_storage_at(rpc_compat_memory, NOBODY, b"\x01") == bytes(32)


def test_storage_keys_are_read_leniently_as_geth_does(rpc_compat_memory: ethread.MemoryBackend) -> None:
    address = "0x" + EMITTER.hex()
    zero = result(rpc_compat_memory, "eth_getStorageAt", address, "0x" + "00" * 32)
    for key in ("0x0", "0x", "0", "00", "0X00"):
        assert result(rpc_compat_memory, "eth_getStorageAt", address, key) == zero
    assert error(rpc_compat_memory, "eth_getStorageAt", address, "0xzz") == \
        (-32602, 'invalid hex in storage key: "0xzz"')
    assert error(rpc_compat_memory, "eth_getStorageAt", address, 5) == \
        (-32602, "invalid argument 1: json: cannot unmarshal number into Go value of type string")


def test_get_storage_values(rpc_compat_memory: ethread.MemoryBackend) -> None:
    slot0, slot1 = "0x" + "00" * 32, "0x" + "00" * 31 + "01"
    address = "0x" + EMITTER.hex()
    answer = result(rpc_compat_memory, "eth_getStorageValues",
                    {address: [slot1, slot0], "0x" + NOBODY.hex(): [slot0]}, "0x2d")
    assert answer == {
        address: [result(rpc_compat_memory, "eth_getStorageAt", address, slot1),
                  result(rpc_compat_memory, "eth_getStorageAt", address, slot0)],
        "0x" + NOBODY.hex(): ["0x" + "00" * 32],
    }
    assert error(rpc_compat_memory, "eth_getStorageValues", {address: []}) == (-32602, "empty request")
    too_many = {address: [slot0] * 1000, "0x" + NOBODY.hex(): [slot0] * 25}
    assert error(rpc_compat_memory, "eth_getStorageValues", too_many) == (-32005, "too many slots (max 1024)")
    assert error(rpc_compat_memory, "eth_getStorageValues", [address]) == (
        -32602, "invalid argument 0: json: cannot unmarshal array into Go value of type "
                "map[common.Address][]common.Hash")


# -- eth_getProof findings -----------------------------------------------------------------------


def test_get_proof_takes_keys_without_0x(rpc_compat_memory: ethread.MemoryBackend) -> None:
    with_prefix = result(rpc_compat_memory, "eth_getProof", "0x" + EMITTER.hex(), ["0x" + "00" * 32], "latest")
    without = result(rpc_compat_memory, "eth_getProof", "0x" + EMITTER.hex(), ["00" * 32], "latest")
    assert without == with_prefix
    short = result(rpc_compat_memory, "eth_getProof", "0x" + EMITTER.hex(), ["1"], "latest")
    assert short["storageProof"][0]["key"] == "0x1"  # not 32 bytes: answered as a quantity
    assert error(rpc_compat_memory, "eth_getProof", "0x" + EMITTER.hex(), ["0x" + "0" * 65]) == (
        -32602, 'storage key too long (want at most 32 bytes): "0x' + "0" * 65 + '"')
    assert error(rpc_compat_memory, "eth_getProof", "0x" + EMITTER.hex(), ["0x00"] * 1025)[1] == \
        "too many storage keys requested (max 1024, got 1025)"


def test_get_proof_of_an_absent_account(rpc_compat_memory: ethread.MemoryBackend) -> None:
    answer = result(rpc_compat_memory, "eth_getProof", "0x" + NOBODY.hex(), ["0x01"], "latest")
    assert answer["codeHash"] == "0x" + "00" * 32
    assert answer["storageHash"] == "0x" + "00" * 32
    assert answer["balance"] == "0x0" and answer["nonce"] == "0x0"
    assert answer["storageProof"] == [{"key": "0x1", "value": "0x0", "proof": []}]
    assert answer["accountProof"]  # a proof of absence
    proof = methods.get_proof(rpc_compat_memory, NOBODY, [b"\x01"], "latest")
    ethread.verify_account_proof(rpc_compat_memory.header_by_hash(  # type: ignore[union-attr]
        rpc_compat_memory.canonical_hash(45)).state_root, proof)  # type: ignore[arg-type]


# -- counts and raw encodings --------------------------------------------------------------------


def test_counts(rpc_compat_memory: ethread.MemoryBackend) -> None:
    for number in range(46):
        block = methods.get_block_by_number(rpc_compat_memory, number)
        assert block is not None
        by_hash = "0x" + block.hash.hex()
        assert result(rpc_compat_memory, "eth_getBlockTransactionCountByNumber", hex(number)) == \
            hex(len(block.transactions))
        assert result(rpc_compat_memory, "eth_getBlockTransactionCountByHash", by_hash) == \
            hex(len(block.transactions))
        assert result(rpc_compat_memory, "eth_getUncleCountByBlockNumber", hex(number)) == hex(len(block.uncles))
        assert result(rpc_compat_memory, "eth_getUncleCountByBlockHash", by_hash) == hex(len(block.uncles))
    uncles = sum(int(result(rpc_compat_memory, "eth_getUncleCountByBlockNumber", hex(n)), 16) for n in range(46))
    assert uncles == 19  # the chain's README counts them
    for method in ("eth_getBlockTransactionCountByNumber", "eth_getUncleCountByBlockNumber"):
        assert result(rpc_compat_memory, method, "0x3e8") is None
    for method in ("eth_getBlockTransactionCountByHash", "eth_getUncleCountByBlockHash"):
        assert result(rpc_compat_memory, method, "0x" + "ab" * 32) is None


def test_raw_encodings_hash_to_what_the_headers_commit_to(rpc_compat_memory: ethread.MemoryBackend) -> None:
    for number in range(46):
        block = methods.get_block_by_number(rpc_compat_memory, number)
        assert block is not None
        header_rlp = bytes.fromhex(result(rpc_compat_memory, "debug_getRawHeader", hex(number))[2:])
        assert keccak(header_rlp) == block.hash
        raw_block = bytes.fromhex(result(rpc_compat_memory, "debug_getRawBlock", "0x" + block.hash.hex())[2:])
        assert len(raw_block) == block.size
        items = rlp.decode(raw_block)
        assert keccak(rlp.encode(items[0])) == block.hash
        assert keccak(rlp.encode(items[2])) == block.header.uncles_hash
        transactions = [t if isinstance(t, bytes) else rlp.encode(t) for t in items[1]]
        assert trie_root(transactions) == block.header.transactions_root
        receipts = [bytes.fromhex(r[2:]) for r in result(rpc_compat_memory, "debug_getRawReceipts", hex(number))]
        assert trie_root(receipts) == block.header.receipts_root
        for itx, encoded in zip(block.transactions, transactions, strict=True):
            raw = result(rpc_compat_memory, "debug_getRawTransaction", "0x" + itx.hash.hex())
            assert keccak(bytes.fromhex(raw[2:])) == itx.hash == keccak(encoded)
    for method in ("debug_getRawHeader", "debug_getRawBlock", "debug_getRawReceipts"):
        assert result(rpc_compat_memory, method, "0x3e8") is None
    missing = "0x" + "01" * 32
    assert error(rpc_compat_memory, "debug_getRawHeader", missing) == \
        (-32000, "header #[" + " ".join(["1"] * 32) + "] not found")
    assert error(rpc_compat_memory, "debug_getRawBlock", missing)[1].startswith("block #[1 1 ")
    assert result(rpc_compat_memory, "debug_getRawReceipts", missing) == []
    assert result(rpc_compat_memory, "debug_getRawTransaction", missing) is None


# -- fees ----------------------------------------------------------------------------------------


def test_fee_history_matches_geth_exactly(rpc_compat_memory: ethread.MemoryBackend) -> None:
    """The conformance case is speconly; ethread's answer is geth's to the last digit."""
    assert result(rpc_compat_memory, "eth_feeHistory", "0x1", "0x1b", [95, 99]) == {
        "oldestBlock": "0x1b", "reward": [["0x1", "0x1"]],
        "baseFeePerGas": ["0x3b9aca00", "0x342dc057"], "gasUsedRatio": [0.0016543629259729885],
        "baseFeePerBlobGas": ["0x0", "0x0"], "blobGasUsedRatio": [0],
    }


def header(**fields: Any) -> Header:
    base: dict[str, Any] = dict(parent_hash=b"", uncles_hash=b"", coinbase=b"", state_root=b"",
                                transactions_root=b"", receipts_root=b"", logs_bloom=b"",
                                difficulty=0, number=100, gas_limit=30_000_000, gas_used=15_000_000,
                                timestamp=0, extra_data=b"", mix_hash=b"", nonce=b"",
                                base_fee_per_gas=10**9)
    base.update(fields)
    return Header(**base)


def test_next_base_fee_by_hand(rpc_compat_memory: ethread.MemoryBackend) -> None:
    config = rpc_compat_memory.chain_config()
    assert config is not None
    assert next_base_fee(config, header()) == 10**9  # at target: unchanged
    assert next_base_fee(config, header(gas_used=30_000_000)) == 1_125_000_000  # full: +12.5%
    assert next_base_fee(config, header(gas_used=0)) == 875_000_000  # empty: -12.5%
    assert next_base_fee(config, header(gas_used=15_000_001, base_fee_per_gas=7)) == 8  # at least +1
    assert next_base_fee(config, header(number=0, base_fee_per_gas=None)) == 10**9  # before London


def test_fee_history_ranges_and_errors(rpc_compat_memory: ethread.MemoryBackend) -> None:
    whole = result(rpc_compat_memory, "eth_feeHistory", "0x40", "latest", [])
    assert whole["oldestBlock"] == "0x0" and len(whole["gasUsedRatio"]) == 46
    assert len(whole["baseFeePerGas"]) == 47 and "reward" not in whole
    assert result(rpc_compat_memory, "eth_feeHistory", 10, "latest", None)["oldestBlock"] == "0x24"
    assert result(rpc_compat_memory, "eth_feeHistory", "10", "0x2d", [])["oldestBlock"] == "0x24"
    pending = result(rpc_compat_memory, "eth_feeHistory", "0x2", "pending", [])
    assert pending["oldestBlock"] == "0x2d" and len(pending["gasUsedRatio"]) == 1
    assert result(rpc_compat_memory, "eth_feeHistory", "0x0", "latest", []) == \
        {"oldestBlock": "0x0", "gasUsedRatio": None}
    assert error(rpc_compat_memory, "eth_feeHistory", "0x1", "0x2e", []) == \
        (-32000, "request beyond head block: requested 46, head 45")
    assert error(rpc_compat_memory, "eth_feeHistory", "0x1", "latest", [99, 95]) == \
        (-32000, "invalid reward percentile: #0:99.000000 >= #1:95.000000")
    assert error(rpc_compat_memory, "eth_feeHistory", "0x1", "latest", [101]) == \
        (-32000, "invalid reward percentile: 101.000000")
    assert error(rpc_compat_memory, "eth_feeHistory", "0x1", "latest", list(range(101)))[1] == \
        "invalid reward percentile: over the query limit 100"
    assert error(rpc_compat_memory, "eth_feeHistory", "abc", "latest", []) == \
        (-32602, 'invalid argument 0: invalid hex or decimal integer "abc"')
    assert error(rpc_compat_memory, "eth_feeHistory", "0x1", "latest") == \
        (-32602, "missing value for required argument 2")
    blob_block = result(rpc_compat_memory, "eth_feeHistory", "0x1", "0x2a", [50])
    assert blob_block["blobGasUsedRatio"] == [1 / 6]  # one blob of Cancun's six (block 42 is at 420)
    assert blob_block["baseFeePerBlobGas"] == ["0x1", "0x1"]


def test_blob_base_fee_is_the_heads(rpc_compat_memory: ethread.MemoryBackend) -> None:
    assert result(rpc_compat_memory, "eth_blobBaseFee") == "0x1"
    assert methods.get_blob_base_fee(rpc_compat_memory) == 1


# -- the dev chain: gas price, accounts, filters -------------------------------------------------


@pytest.fixture()
def dev() -> DevChain:
    chain = DevChain(ethread.MemoryBackend(), forks=PRAGUE_FORKS)
    chain.mine()
    return chain


def test_gas_price_is_the_60th_percentile_tip_plus_base_fee(dev: DevChain) -> None:
    sender = dev.accounts[1]
    gwei = 10**9
    # Three blocks with tips 1..9 gwei (three each): the oracle samples the three lowest tips
    # of each, here every tip. Sorted, the 60th percentile of [1..9] is index (9-1)*60//100=4.
    for block in range(3):
        for i in range(3):
            tip = (block * 3 + i + 1) * gwei
            dev.send(sender, dev.accounts[2].address, value=1, fees=Fees(max_fee_per_gas=100 * gwei,
                                                                          max_priority_fee_per_gas=tip))
        dev.mine()
    # Earlier blocks (genesis excluded) have no transactions: each stands for the start price,
    # 0.001 gwei, and the oracle looks further back while blocks give one sample at most.
    tips = methods.suggest_tip_cap(dev.backend)
    samples = sorted([n * gwei for n in range(1, 10)] + [10**6])  # block 1 is empty
    assert tips == samples[(len(samples) - 1) * 60 // 100]
    dispatcher = Dispatcher(dev.backend)
    assert result(None, "eth_maxPriorityFeePerGas", dispatcher=dispatcher) == hex(tips)
    base_fee = dev.head.base_fee_per_gas
    assert base_fee is not None
    assert result(None, "eth_gasPrice", dispatcher=dispatcher) == hex(tips + base_fee)


def test_tips_of_the_miner_and_below_two_wei_are_not_sampled(dev: DevChain) -> None:
    sender = dev.accounts[1]
    dev.send(sender, dev.accounts[2].address, value=1,
             fees=Fees(max_fee_per_gas=10**11, max_priority_fee_per_gas=1))
    dev.mine()
    assert methods.suggest_tip_cap(dev.backend, last_price=777) == 777
    dev.send(sender, dev.accounts[2].address, value=1,
             fees=Fees(max_fee_per_gas=10**11, max_priority_fee_per_gas=5 * 10**9))
    dev.mine(coinbase=sender.address)
    assert methods.suggest_tip_cap(dev.backend, last_price=777) == 777


def test_accounts_are_a_hook_for_the_dev_chain(dev: DevChain) -> None:
    assert result(dev.backend, "eth_accounts") == []
    addresses = tuple(a.address for a in dev.accounts[:2])
    dispatcher = Dispatcher(dev.backend, Context(accounts=addresses))
    assert result(None, "eth_accounts", dispatcher=dispatcher) == ["0x" + a.hex() for a in addresses]


def test_node_answers(rpc_compat_memory: ethread.MemoryBackend) -> None:
    assert result(rpc_compat_memory, "eth_syncing") is False
    assert result(rpc_compat_memory, "net_listening") is True
    assert result(rpc_compat_memory, "net_peerCount") == "0x0"
    assert result(rpc_compat_memory, "web3_sha3", "0x68656c6c6f20776f726c64") == \
        "0x47173285a8d7341e5e972fc677286384f802f8ef42a5ec5f03bbfa254cb01fad"
    assert result(rpc_compat_memory, "web3_sha3", "0x") == "0x" + keccak(b"").hex()
    assert error(rpc_compat_memory, "web3_sha3", "68") == (
        -32602, "invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go "
                "value of type hexutil.Bytes")


def emit(dev: DevChain, emitter: bytes, *topics: bytes) -> None:
    dev.send(dev.accounts[0], emitter, data=contracts.log_calldata(list(topics)))


def test_block_and_log_filters_report_what_came_after_them(dev: DevChain) -> None:
    emitter = dev.deploy_runtime(dev.accounts[0], contracts.LOG_EMITTER)
    dev.mine()
    dispatcher = Dispatcher(dev.backend)
    blocks = result(None, "eth_newBlockFilter", dispatcher=dispatcher)
    topic = b"\x11" * 32
    logs = result(None, "eth_newFilter", {"address": "0x" + emitter.hex(), "topics": ["0x" + topic.hex()]},
                  dispatcher=dispatcher)
    assert blocks != logs and blocks.startswith("0x") and logs.startswith("0x")
    assert result(None, "eth_getFilterChanges", blocks, dispatcher=dispatcher) == []
    emit(dev, emitter, topic)
    emit(dev, emitter, b"\x22" * 32)
    emit(dev, emitter)
    first = dev.mine()
    emit(dev, emitter, topic, b"\x33" * 32)
    second = dev.mine()
    assert result(None, "eth_getFilterChanges", blocks, dispatcher=dispatcher) == \
        ["0x" + first.hash.hex(), "0x" + second.hash.hex()]
    changes = result(None, "eth_getFilterChanges", logs, dispatcher=dispatcher)
    assert [entry["blockNumber"] for entry in changes] == [hex(first.number), hex(second.number)]
    assert all(entry["topics"][0] == "0x" + topic.hex() for entry in changes)
    assert result(None, "eth_getFilterChanges", logs, dispatcher=dispatcher) == []
    # eth_getFilterLogs runs the whole query (fromBlock defaults to latest: the head's logs).
    assert [e["blockNumber"] for e in result(None, "eth_getFilterLogs", logs, dispatcher=dispatcher)] == \
        [hex(second.number)]
    assert result(None, "eth_uninstallFilter", logs, dispatcher=dispatcher) is True
    assert result(None, "eth_uninstallFilter", logs, dispatcher=dispatcher) is False
    gone = ask(None, "eth_getFilterChanges", logs, dispatcher=dispatcher)
    assert gone["error"] == {"code": -32000, "message": "filter not found"}
    assert ask(None, "eth_getFilterLogs", blocks, dispatcher=dispatcher)["error"]["message"] == \
        "filter not found"  # a block filter has no logs to query


def test_filter_ranges_as_geth_accepts_them(dev: DevChain) -> None:
    dispatcher = Dispatcher(dev.backend)
    for good in ({}, {"fromBlock": "0x1"}, {"fromBlock": "0x1", "toBlock": "0x5"},
                 {"fromBlock": "earliest"}):
        assert result(None, "eth_newFilter", good, dispatcher=dispatcher).startswith("0x")
    for bad, message in (({"fromBlock": "pending"}, "pending logs are not supported"),
                         ({"fromBlock": "0x5", "toBlock": "0x1"}, "invalid block range params"),
                         ({"fromBlock": "latest", "toBlock": "0x5"}, "invalid block range params"),
                         ({"fromBlock": "safe"}, "invalid block range params")):
        assert ask(None, "eth_newFilter", bad, dispatcher=dispatcher)["error"] == \
            {"code": -32602, "message": message}


def test_filters_expire_when_unpolled_and_are_bounded(dev: DevChain) -> None:
    now = [1000.0]
    registry = FilterRegistry(timeout=300, max_filters=3, clock=lambda: now[0])
    polled = registry.new_block_filter(dev.backend)
    idle = registry.new_log_filter(dev.backend, LogFilter())
    registry.new_block_filter(dev.backend)
    with pytest.raises(ethread.errors.LimitExceeded, match="too many filters installed"):
        registry.new_block_filter(dev.backend)
    now[0] += 200
    registry.changes(dev.backend, polled)  # polling keeps a filter alive
    registry.logs(dev.backend, idle)  # eth_getFilterLogs does not (as in geth)
    now[0] += 150
    assert registry.changes(dev.backend, polled) == []
    with pytest.raises(ethread.methods.filters.FilterNotFound):
        registry.changes(dev.backend, idle)
    assert len(registry) == 1  # the two idle ones are gone, so there is room again
    registry.new_block_filter(dev.backend)


def test_dispatchers_do_not_share_filters(dev: DevChain) -> None:
    one, other = Dispatcher(dev.backend), Dispatcher(dev.backend)
    filter_id = result(None, "eth_newBlockFilter", dispatcher=one)
    assert ask(None, "eth_getFilterChanges", filter_id, dispatcher=other)["error"]["message"] == \
        "filter not found"


# -- eth_getLogs topic positions (a differential-run finding) -----------------------------------


def test_wildcard_positions_need_a_topic_there(dev: DevChain) -> None:
    emitter = dev.deploy_runtime(dev.accounts[0], contracts.LOG_EMITTER)
    dev.mine()
    a, b = b"\xaa" * 32, b"\xbb" * 32
    for topics in ((), (a,), (a, b), (b,)):
        emit(dev, emitter, *topics)
    dev.mine()

    def count(topics: list[Any]) -> list[int]:
        logs = result(dev.backend, "eth_getLogs", {"fromBlock": "0x0", "toBlock": "latest",
                                                   "address": "0x" + emitter.hex(), "topics": topics})
        return [len(entry["topics"]) for entry in logs]

    assert count([]) == [0, 1, 2, 1]
    assert count([None]) == [1, 2, 1]  # logs with no topics do not match one position
    assert count([[]]) == [1, 2, 1]
    assert count(["0x" + a.hex(), None]) == [2]  # [a] alone has no second topic
    assert count([None, None]) == [2]
    assert count([None, None, None, None]) == []


def test_concurrent_polls_report_each_block_once(dev: DevChain) -> None:
    registry = FilterRegistry()
    filter_id = registry.new_block_filter(dev.backend)
    mined = [dev.mine().hash for _ in range(3)]
    barrier = threading.Barrier(8)
    answers: list[list[Any]] = []

    def poll() -> None:
        barrier.wait()
        answers.append(registry.changes(dev.backend, filter_id))

    threads = [threading.Thread(target=poll) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(h for answer in answers for h in answer) == sorted(mined)
