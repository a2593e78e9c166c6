"""``ethread serve`` on a dev chain: the demo network sends (automining each transaction) and a
``--block-time`` network mines what was sent on its interval; web3.py over HTTP."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from eth_utils import to_checksum_address
from web3 import Web3

import ethread
from ethread.devchain import DevChain
from ethread.devchain.demo import demo_chain
from ethread.server import make_network
from tests.support.server_harness import KEY, serve_in_thread


@pytest.fixture(scope="module")
def demo() -> Any:
    return demo_chain(ethread.MemoryBackend())


def _web3(thread: Any) -> Web3:
    return Web3(Web3.HTTPProvider(f"http://127.0.0.1:{thread.port}/v3/{KEY}"))


def test_the_demo_network_sends_and_automines(demo: Any) -> None:
    network = make_network("demo", demo.chain.backend, miner=demo)
    with serve_in_thread(networks=[network]) as thread:
        w3 = _web3(thread)
        accounts = w3.eth.accounts
        assert accounts[0] == "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266" and len(accounts) == 10
        before = w3.eth.block_number
        tx_hash = w3.eth.send_transaction({"from": accounts[0], "to": accounts[5], "value": 12345,
                                           "gas": 21_000})
        assert w3.eth.block_number == before + 1
        included = w3.eth.get_transaction(tx_hash)
        assert included["blockNumber"] == before + 1 and included["value"] == 12345
        snapshot = w3.provider.make_request("evm_snapshot", [])["result"]  # type: ignore[arg-type]
        w3.provider.make_request("evm_mine", [])  # type: ignore[arg-type]
        assert w3.eth.block_number == before + 2
        assert w3.provider.make_request("evm_revert", [snapshot])["result"] is True  # type: ignore[arg-type]
        assert w3.eth.block_number == before + 1


def test_a_block_time_network_mines_what_was_sent_on_its_interval() -> None:
    chain = DevChain(ethread.MemoryBackend(), accounts=2)
    network = make_network("timed", chain.backend, miner=chain, block_time=0.2)
    assert chain.automine is False
    a, b = (to_checksum_address(account.address) for account in chain.accounts)
    before = chain.balance(b)
    # Sent before the server (and so its miner) starts: it waits in the pending list.
    answer = network.dispatcher.handle(json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "eth_sendTransaction",
        "params": [{"from": a, "to": b, "value": "0x1", "gas": "0x5208"}]}).encode())
    first = bytes.fromhex(json.loads(answer or b"{}")["result"][2:])
    assert len(chain.pending) == 1 and chain.head.number == 0 and chain.balance(b) == before
    with serve_in_thread(networks=[network]) as thread:
        w3 = _web3(thread)
        second = w3.eth.send_transaction({"from": a, "to": b, "value": 1, "gas": 21_000})
        deadline = time.monotonic() + 10
        while chain.receipt(first) is None or chain.receipt(bytes(second)) is None:
            assert time.monotonic() < deadline, "the interval miner never took the transactions"
            time.sleep(0.05)
        assert w3.eth.get_transaction(second)["blockNumber"] >= 1
        assert chain.balance(b) == before + 2


def test_a_network_over_a_plain_backend_refuses_sending(demo: Any) -> None:
    network = make_network("plain", demo.chain.backend)
    with serve_in_thread(networks=[network]) as thread:
        answer = _web3(thread).provider.make_request("eth_sendRawTransaction", ["0x00"])  # type: ignore[arg-type]
        assert answer["error"]["code"] == -32601
