"""The in-process web3.py providers: ``Web3(EthreadProvider(backend))`` with no server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from web3 import AsyncWeb3, Web3
from web3.exceptions import ContractLogicError

from ethread.devchain import contracts
from ethread.devchain.demo import Demo
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


def _execution_checks(w3: Web3, demo: Demo) -> None:
    """eth_estimateGas, eth_createAccessList and eth_call's overrides through web3.py."""
    storage, reverter = Web3.to_checksum_address(demo.storage), demo.reverter
    assert reverter is not None
    sender = Web3.to_checksum_address(demo.chain.accounts[1].address)
    other = Web3.to_checksum_address(demo.chain.accounts[2].address)
    assert w3.eth.estimate_gas({"from": sender, "to": other, "value": 1}) == 21_000
    store: Any = {"from": sender, "to": storage, "data": contracts.store_calldata({77: 1})}
    gas = w3.eth.estimate_gas(store)
    assert 21_000 + 20_000 < gas < 60_000  # one fresh slot: SSTORE from zero costs 20,000 (+ cold)
    listed = w3.eth.create_access_list(store)
    assert [entry["address"] for entry in listed["accessList"]] == [storage]
    assert [str(k) for k in listed["accessList"][0]["storageKeys"]] == ["0x" + (77).to_bytes(32, "big").hex()]
    with pytest.raises(ContractLogicError, match="user error"):
        w3.eth.estimate_gas({"to": Web3.to_checksum_address(reverter), "data": contracts.ERROR_CALL})
    slot, value = "0x" + (5).to_bytes(32, "big").hex(), "0x" + (99).to_bytes(32, "big").hex()
    override: Any = {storage: {"stateDiff": {slot: value}}}
    answer = w3.eth.call({"to": storage, "data": contracts.load_calldata(5)}, "latest", override)
    assert int.from_bytes(answer, "big") == 99


def test_execution_methods_through_the_provider() -> None:
    demo = shared_demo()
    _execution_checks(Web3(EthreadProvider(demo.chain.backend)), demo)


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
