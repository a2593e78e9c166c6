"""web3.py's read-side calls, in process through ``EthreadProvider`` and over HTTP: receipts,
balances, nonces, code, storage, fee history and polling filters
(``create_filter(...).get_new_entries()``), on the rpc-compat chain (answers known from its
conformance cases) and on a dev chain that grows while the filters poll."""

from __future__ import annotations

import time
from typing import Any

from eth_utils import keccak
from web3 import Web3
from web3.providers import HTTPProvider

import ethread
from ethread.devchain import PRAGUE_FORKS, DevChain, contracts
from ethread.devchain.demo import TICK_TOPIC
from ethread.web3 import EthreadProvider
from tests.support.server_harness import serve_in_thread, url_of

EMITTER = Web3.to_checksum_address("0x7dcd17433742f4c0ca53122ab541d0ba67fc27df")
DELEGATED = Web3.to_checksum_address("0xeda8645ba6948855e3b3cd596bbb07596d59c603")
BLOB_TX = "0x6bcea0da8e703d3283c8f1124377a63023290cd188de3274d12441e15dc14794"
LEGACY_TX = "0x0d6999c0e9e4bec347945593e97bdcdf7c25be08ca1a1efdc520dbe75be985f3"
PING_ABI = [{"type": "event", "name": "Ping", "anonymous": False,
             "inputs": [{"name": "value", "type": "uint256", "indexed": True}]}]
TICK_ABI = [{"type": "event", "name": "Tick", "anonymous": False,
             "inputs": [{"name": "number", "type": "uint256", "indexed": True},
                        {"name": "sender", "type": "address", "indexed": True}]}]
PING = keccak(b"Ping(uint256)")


def read_rpc_compat(w3: Web3) -> None:
    """What the rpc-compat chain's conformance cases say, read through web3.py's own calls."""
    blob = w3.eth.get_transaction_receipt(BLOB_TX)
    assert blob["blockNumber"] == 42 and blob["status"] == 1 and blob["type"] == 3
    assert blob["blobGasUsed"] == 0x20000 and blob["blobGasPrice"] == 1
    assert blob["logs"][0]["address"] == EMITTER
    legacy = w3.eth.get_transaction_receipt(LEGACY_TX)  # pre-Byzantium: a root, no status
    assert legacy["root"] == "0x7e099d847594c44aed09000b17536bab7dbc64be4572474bae7b4dd04ce8c2df"
    assert legacy["gasUsed"] == 21000 and "status" not in legacy
    assert w3.eth.get_balance(EMITTER) == 0x56
    assert w3.eth.get_balance(EMITTER, "0x61857226df2f4c8affcf75e02a6b279e9b35cf6dea8994ab98ffafbcc4d497b3") == 0x3c
    assert w3.eth.get_transaction_count(DELEGATED) == 1
    assert w3.eth.get_code(DELEGATED).hex() == "ef010058f8fe237b593c19546e1e758a2544561d04bfe0"
    assert w3.eth.get_storage_at(EMITTER, 0) == (0x2A).to_bytes(32, "big")
    history = w3.eth.fee_history(1, 0x1b, [95, 99])
    assert history["oldestBlock"] == 0x1b and history["reward"] == [[1, 1]]
    assert history["baseFeePerGas"] == [0x3B9ACA00, 0x342DC057]
    assert w3.eth.get_block_transaction_count(1) == 4
    assert w3.eth.blob_base_fee == 1
    # A filter over a chain that does not grow: nothing new, everything old.
    log_filter = w3.eth.filter({"fromBlock": 0, "address": EMITTER})
    assert log_filter.get_new_entries() == []
    assert log_filter.get_all_entries() == w3.eth.get_logs({"fromBlock": 0, "address": EMITTER})
    assert len(log_filter.get_all_entries()) > 5
    assert w3.eth.uninstall_filter(log_filter.filter_id) is True


def test_rpc_compat_through_the_provider(rpc_compat_memory: ethread.MemoryBackend) -> None:
    read_rpc_compat(Web3(EthreadProvider(rpc_compat_memory)))


def test_rpc_compat_over_http(rpc_compat_memory: ethread.MemoryBackend) -> None:
    with serve_in_thread(rpc_compat_memory) as server:
        read_rpc_compat(Web3(HTTPProvider(url_of(server))))


def test_dev_chain_through_the_provider() -> None:
    chain = DevChain(ethread.MemoryBackend(), forks=PRAGUE_FORKS)
    sender, other = chain.accounts[0], chain.accounts[1]
    emitter = chain.deploy_runtime(sender, contracts.LOG_EMITTER)
    chain.mine()
    w3 = Web3(EthreadProvider(chain.backend))
    pings = w3.eth.contract(address=Web3.to_checksum_address(emitter), abi=PING_ABI).events.Ping
    new_pings = pings.create_filter(from_block="latest")
    new_blocks = w3.eth.filter("latest")
    before = w3.eth.get_balance(other.address)
    tx = chain.send(sender, emitter, data=contracts.log_calldata([PING, (7).to_bytes(32, "big")]))
    chain.send(sender, emitter, data=contracts.log_calldata([keccak(b"Other()")]))
    chain.fund(other.address, 12345)
    block = chain.mine()
    entries = new_pings.get_new_entries()
    assert [(e["event"], e["args"]["value"], e["blockNumber"]) for e in entries] == \
        [("Ping", 7, block.number)]
    assert new_pings.get_new_entries() == []
    assert new_blocks.get_new_entries() == [block.hash]
    receipt = w3.eth.get_transaction_receipt(tx)
    assert receipt["status"] == 1 and receipt["blockHash"] == block.hash and receipt["type"] == 2
    assert w3.eth.get_balance(other.address) == before + 12345
    assert w3.eth.get_transaction_count(sender.address) == 4
    assert w3.eth.get_code(Web3.to_checksum_address(emitter)) == contracts.LOG_EMITTER
    history = w3.eth.fee_history(2, "latest", [50])
    assert history["oldestBlock"] == block.number - 1 and len(history["reward"]) == 2
    assert history["baseFeePerGas"][-2] == block.header.base_fee_per_gas


def test_dev_chain_over_http_while_it_grows(growing_server: Any) -> None:
    from tests.support.server_harness import shared_demo

    demo = shared_demo()
    w3 = Web3(HTTPProvider(url_of(growing_server)))
    ticks = w3.eth.contract(address=Web3.to_checksum_address(demo.log_emitter), abi=TICK_ABI).events.Tick
    tick_filter = ticks.create_filter(from_block="latest")
    block_filter = w3.eth.filter("latest")
    seen: list[Any] = []
    hashes: list[bytes] = []
    deadline = time.monotonic() + 30
    while (len(seen) < 2 or len(hashes) < 2) and time.monotonic() < deadline:
        seen += tick_filter.get_new_entries()
        hashes += block_filter.get_new_entries()
        time.sleep(0.1)
    assert len(seen) >= 2 and len(hashes) >= 2
    assert [e["args"]["number"] for e in seen] == [e["blockNumber"] for e in seen]
    assert all(e["event"] == "Tick" for e in seen)
    numbers = [w3.eth.get_block(h)["number"] for h in hashes]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    receipt = w3.eth.get_transaction_receipt(seen[0]["transactionHash"])
    assert receipt["logs"][0]["topics"][0] == TICK_TOPIC
    sender = receipt["from"]
    assert w3.eth.get_transaction_count(sender) >= 1
    assert w3.eth.get_balance(sender) > 0
    assert w3.eth.get_code(Web3.to_checksum_address(demo.log_emitter)) == contracts.LOG_EMITTER
    assert w3.eth.get_storage_at(Web3.to_checksum_address(demo.log_emitter), 0) == bytes(32)
    assert w3.eth.gas_price > 0 and w3.eth.max_priority_fee > 0
    assert len(w3.eth.fee_history(4, "latest", [25, 75])["reward"]) == 4
