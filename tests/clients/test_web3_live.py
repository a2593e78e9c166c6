"""web3.py, a client nobody here wrote, against a live server: over HTTP and over WebSocket.

Blocks with full transactions, block receipts, logs by address, a reverting eth_call that
web3.py must turn into ContractLogicError, and a newHeads subscription fed by the demo
chain growing while it is served.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from web3 import AsyncWeb3, Web3
from web3.exceptions import ContractLogicError
from web3.providers import HTTPProvider, WebSocketProvider

from ethread.devchain import contracts
from tests.support.server_harness import shared_demo, url_of, ws_url_of


def test_web3_over_http(growing_server: Any) -> None:
    demo = shared_demo()
    w3 = Web3(HTTPProvider(url_of(growing_server)))
    assert w3.is_connected()
    assert w3.eth.chain_id == 1337
    block = w3.eth.get_block(10, full_transactions=True)
    assert block["number"] == 10 and len(block["transactions"]) == 5
    assert block["transactions"][0]["blockHash"] == block["hash"]
    assert w3.eth.get_block(block["hash"])["number"] == 10
    tx = w3.eth.get_transaction(block["transactions"][1]["hash"])
    assert tx["blockNumber"] == 10 and tx["transactionIndex"] == 1
    receipts = w3.eth.get_block_receipts(10)
    assert [r["status"] for r in receipts][:3] == [0, 0, 0]  # the three reverts
    assert receipts[0]["transactionHash"] == block["transactions"][0]["hash"]
    logs = w3.eth.get_logs({"fromBlock": 0, "toBlock": 50, "address": demo.log_emitter})
    assert len(logs) >= 30
    assert all(entry["address"] == Web3.to_checksum_address(demo.log_emitter) for entry in logs)
    with pytest.raises(ContractLogicError, match="user error"):
        w3.eth.call({"to": demo.reverter, "data": contracts.ERROR_CALL})
    with w3.batch_requests() as batch:
        batch.add(w3.eth.get_block(1))
        batch.add(w3.eth.get_block(2))
        answers = batch.execute()
    assert [b["number"] for b in answers] == [1, 2]


def test_web3_over_websocket_with_a_new_heads_subscription(growing_server: Any) -> None:
    demo = shared_demo()

    async def scenario() -> None:
        async with AsyncWeb3(WebSocketProvider(ws_url_of(growing_server))) as w3:
            assert await w3.eth.chain_id == 1337
            block = await w3.eth.get_block(10, full_transactions=True)
            assert len(block["transactions"]) == 5
            receipts = await w3.eth.get_block_receipts(10)
            assert len(receipts) == 5
            logs = await w3.eth.get_logs({"fromBlock": 0, "toBlock": 50,
                                          "address": demo.log_emitter})
            assert len(logs) >= 30
            with pytest.raises(ContractLogicError, match="user error"):
                await w3.eth.call({"to": demo.reverter, "data": contracts.ERROR_CALL})
            start = await w3.eth.block_number
            subscription = await w3.eth.subscribe("newHeads")
            heads = []
            async for message in w3.socket.process_subscriptions():
                assert message["subscription"] == subscription
                heads.append(message["result"])
                if len(heads) == 2:
                    break
            assert heads[0]["number"] > start - 1
            assert heads[1]["number"] == heads[0]["number"] + 1
            assert heads[1]["parentHash"] == heads[0]["hash"]
            assert await w3.eth.unsubscribe(subscription) is True

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_execution_methods_over_http(growing_server: Any) -> None:
    from tests.support.web3_checks import execution_checks

    execution_checks(Web3(HTTPProvider(url_of(growing_server))), shared_demo())
