"""The in-process web3.py providers: ``Web3(EthreadProvider(backend))`` with no server."""

from __future__ import annotations

import asyncio

import pytest
from web3 import AsyncWeb3, Web3
from web3.exceptions import ContractLogicError

from ethread.devchain import contracts
from ethread.web3 import AsyncEthreadProvider, EthreadProvider

from .server_harness import shared_demo


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
