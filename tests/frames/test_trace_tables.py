"""frames.traces and frames.native_transfers against the trace_block answers they are read
from: the rpc-compat chain (proof-of-work and proof-of-stake blocks) and the router chain of
tests/differential/test_anvil_traces.py (nested calls, a reverted callee, creates, self-destructs)."""

from __future__ import annotations

from typing import Any

import pytest

import ethread
from ethread import frames
from tests.support.paths import conformance_dir
from tests.support.router import BENEFICIARY, RouterChain
from tests.support.rpc_cases import answer_of

pytest.importorskip("pyarrow")


def _calls(backend: Any, start: int, stop: int) -> list[dict[str, Any]]:
    return [t for n in range(start, stop) for t in answer_of(backend, "trace_block", hex(n))["result"]
            if t["type"] != "reward"]


def _check_traces(backend: Any, start: int, stop: int) -> Any:
    table = frames.traces(backend, start, stop, progress=False)
    ours = _calls(backend, start, stop)
    rows = table.to_pylist()
    assert len(rows) == len(ours)
    for row, trace in zip(rows, ours, strict=True):
        action, result = trace["action"], trace.get("result") or {}
        assert row["block_number"] == trace["blockNumber"]
        assert row["block_hash"] == trace["blockHash"]
        assert row["transaction_index"] == trace["transactionPosition"]
        assert row["transaction_hash"] == trace["transactionHash"]
        assert row["trace_address"] == trace["traceAddress"]
        assert row["depth"] == len(trace["traceAddress"])
        assert row["type"] == trace["type"]
        assert row["error"] == trace.get("error")
        if trace["type"] == "suicide":
            assert (row["from"], row["to"], int(row["value"])) == (
                action["address"], action["refundAddress"], int(action["balance"], 16))
            continue
        assert row["from"] == action["from"]
        assert row["to"] == (result.get("address") if trace["type"] == "create" else action["to"])
        assert int(row["value"]) == int(action["value"], 16)
        assert row["gas"] == int(action["gas"], 16)
        assert row["gas_used"] == (int(result["gasUsed"], 16) if result else None)
        assert row["call_type"] == action.get("callType", action.get("creationMethod"))
    return table


def test_rpc_compat_chain() -> None:
    folder = conformance_dir() / "rpc-compat"
    backend = ethread.MemoryBackend()
    ethread.import_chain(backend, folder / "genesis.json", folder / "chain.rlp", verify_seals=False)
    table = _check_traces(backend, 0, 46)
    assert table.num_rows == 160  # (trace_block's 214 less its 54 rewards)
    transfers = frames.native_transfers(backend, 0, 46, progress=False).to_pylist()
    assert all(int(t["value"]) > 0 for t in transfers)
    known = [t for t in transfers if t["transaction_hash"]
             == "0x5bc704d4eb4ce7fe319705d2f888516961426a177f2799c9f934b5df7466dd33"]
    assert [(t["from"], t["to"], int(t["value"]), t["kind"]) for t in known] == [
        ("0x7435ed30a8b4aeb0877cef0c6e8cffe834eb865f", "0x7dcd17433742f4c0ca53122ab541d0ba67fc27df", 2, "call")]
    succeeded = [t for t in _calls(backend, 0, 46)
                 if "error" not in t and int(t["action"].get("value", t["action"].get("balance", "0x0")), 16)]
    assert len(transfers) == len(succeeded)  # (no reverted parent moves value on this chain)


def test_router_chain() -> None:
    deployed = RouterChain.deployed()
    chain, routed, doomed = deployed.chain, deployed.routed, deployed.doomed
    backend = chain.backend
    a = chain.accounts
    deployed.send_calls(logging_value=7)
    chain.mine()
    table = _check_traces(backend, 1, 3)
    assert table.column("depth").to_pylist().count(2) == 1  # the constructor's self-destruct
    transfers = frames.native_transfers(backend, 0, 3, progress=False).to_pylist()
    moved = [(t["kind"], t["to"], int(t["value"])) for t in transfers]
    hexed = "0x" + routed.hex()
    assert moved == [
        ("call", hexed, 10**6),                       # into the router, which then
        ("create", moved[1][1], 1000),                # funds a contract that self-destructs
        ("suicide", "0x" + BENEFICIARY.hex(), 1000),  # in its constructor, to the beneficiary
        ("call", "0x" + doomed.hex(), 10**15),
        ("suicide", "0x" + BENEFICIARY.hex(), 10**15),
        ("call", "0x" + a[2].address.hex(), 10**12),
    ]  # (the 7 wei sent with the reverted custom-error call moved nothing)
    empty = frames.traces(backend, 0, 1, progress=False)
    assert empty.num_rows == 0 and empty.column_names == list(frames.trace_tables.TRACE_COLUMNS)
