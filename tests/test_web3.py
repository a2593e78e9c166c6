"""The in-process web3.py providers: ``Web3(EthreadProvider(backend))`` with no server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from web3 import AsyncWeb3, Web3
from web3.exceptions import ContractLogicError

from ethread.devchain import contracts
from ethread.web3 import AsyncEthreadProvider, EthreadProvider
from tests.support.server_harness import shared_demo
from tests.support.web3_checks import execution_checks


def test_sync_provider_reads_blocks_receipts_logs_and_raises_on_revert() -> None:
    demo = shared_demo()
    w3 = Web3(EthreadProvider(demo.chain.backend))
    assert w3.is_connected() and w3.eth.chain_id == 1337
    block = w3.eth.get_block(10, full_transactions=True)
    assert len(block["transactions"]) == 5
    assert len(w3.eth.get_block_receipts(block["hash"])) == 5
    logs = w3.eth.get_logs({"fromBlock": 1, "toBlock": 2, "address": demo.log_emitter})
    assert [len(entry["topics"]) for entry in logs] == [0, 1, 2, 3, 4]
    with pytest.raises(ContractLogicError, match="user error"):
        w3.eth.call({"to": demo.reverter, "data": contracts.ERROR_CALL})
    with w3.batch_requests() as batch:
        batch.add(w3.eth.get_block(3))
        batch.add(w3.eth.get_block(4))
        assert [b["number"] for b in batch.execute()] == [3, 4]


def test_async_provider() -> None:
    demo = shared_demo()

    async def scenario() -> None:
        w3 = AsyncWeb3(AsyncEthreadProvider(demo.chain.backend))
        assert await w3.is_connected()
        assert (await w3.eth.get_block(5))["number"] == 5
        with pytest.raises(ContractLogicError, match="user error"):
            await w3.eth.call({"to": demo.reverter, "data": contracts.ERROR_CALL})

    asyncio.run(scenario())


def test_the_library_imports_without_the_server_extra() -> None:
    """``import ethread`` must not pull in the server (or web3)."""
    import subprocess
    import sys

    code = ("import sys, ethread, ethread.cli; "
            "assert not [m for m in sys.modules if m.split('.')[0] in "
            "('uvicorn', 'websockets', 'web3') or m.startswith('ethread.server')], "
            "sorted(m for m in sys.modules if 'uvicorn' in m or 'web3' in m)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_execution_methods_through_the_provider() -> None:
    demo = shared_demo()
    execution_checks(Web3(EthreadProvider(demo.chain.backend)), demo)


def test_requests_are_encoded_as_web3_encodes_them() -> None:
    """The provider encodes requests with orjson and decodes answers without web3.py's
    wrappers; every request answers as through web3.py's own encoder, including what orjson
    cannot take (an integer beyond 64 bits goes through web3.py's encoder)."""
    from hexbytes import HexBytes
    from web3.datastructures import AttributeDict

    demo = shared_demo()
    provider = EthreadProvider(demo.chain.backend)
    head = hex(demo.chain.head.number)
    requests: list[tuple[str, list[Any]]] = [
        ("eth_getBlockByNumber", [head, False]),
        ("eth_getBalance", [HexBytes(b"\x01" * 20), "latest"]),
        ("eth_call", [AttributeDict({"to": "0x" + demo.reverter.hex(), "data": contracts.ERROR_CALL}),
                      "latest"]),
        ("eth_getBlockByNumber", [2**70, False]),
        ("eth_getBalance", ["0x" + "01" * 20, "not a block"]),
        ("no_such_method", []),
    ]
    for method, params in requests:
        answer: dict[str, Any] = dict(provider.make_request(method, params))  # type: ignore[arg-type]
        raw = provider.dispatcher.handle(provider.encode_rpc_request(method, params))  # type: ignore[arg-type]
        assert raw is not None
        expected: dict[str, Any] = dict(provider.decode_rpc_response(raw))
        answer.pop("id"), expected.pop("id")
        assert answer == expected, method
