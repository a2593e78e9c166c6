"""debug_traceCall with ``blockOverrides`` and ``stateOverrides`` together, for every tracer,
as geth applies them (eth/tracers/api.go, ``TraceCall``: the block overrides to the block
context, then the state overrides to the state, with or without ``txIndex``): a contract put in
place by a state override (its code, a storage slot, a balance) returns the overridden block
number and time and the overridden slot, and each tracer shows it.
"""

from __future__ import annotations

from typing import Any

import pytest

import ethread
from ethread.devchain import DevChain, contracts
from ethread.devchain.genesis import PRAGUE_FORKS
from tests.support.rpc_cases import answer_of

TARGET = "0x" + "c0" * 20
NUMBER, TIME, SLOT_VALUE, BALANCE = 0x4242, 0x7777_0000, 0x99, 0x1234
ECHO = contracts.assemble(
    "NUMBER", 0, "MSTORE", "TIMESTAMP", 32, "MSTORE", 0, "SLOAD", 64, "MSTORE",
    "SELFBALANCE", 96, "MSTORE", 128, 0, "RETURN")
EXPECTED = "0x" + b"".join(v.to_bytes(32, "big") for v in (NUMBER, TIME, SLOT_VALUE,
                                                           BALANCE)).hex()
SELECTOR = "0x12345678"


@pytest.fixture(scope="module")
def backend() -> Any:
    dev = DevChain(ethread.MemoryBackend(), forks=PRAGUE_FORKS, accounts=2)
    a = dev.accounts
    dev.send(a[0], a[1].address, value=1)
    dev.send(a[1], a[0].address, value=1)
    dev.mine()
    return dev.backend


def _overrides(tx_index: int | None = None) -> dict[str, Any]:
    config: dict[str, Any] = {
        "blockOverrides": {"number": hex(NUMBER), "time": hex(TIME)},
        "stateOverrides": {TARGET: {"code": "0x" + ECHO.hex(), "balance": hex(BALANCE),
                                    "state": {"0x" + "00" * 32: "0x" + (SLOT_VALUE).to_bytes(32, "big").hex()}}},
    }
    if tx_index is not None:
        config["txIndex"] = hex(tx_index)
    return config


def _trace(backend: Any, block: str, config: dict[str, Any]) -> Any:
    answer = answer_of(backend, "debug_traceCall", {"to": TARGET, "data": SELECTOR}, block, config)
    assert "error" not in answer, answer
    return answer["result"]


CASES = [(None, "latest"), (1, "0x1")]
"""(txIndex, block): on the block's state, and before its second transaction."""


@pytest.mark.parametrize(("tx_index", "block"), CASES)
def test_call_tracers(backend: Any, tx_index: int | None, block: str) -> None:
    top = _trace(backend, block, {**_overrides(tx_index), "tracer": "callTracer"})
    assert top["output"] == EXPECTED and top["to"] == TARGET
    flat = _trace(backend, block, {**_overrides(tx_index), "tracer": "flatCallTracer"})
    assert flat[0]["result"]["output"] == EXPECTED
    counts = _trace(backend, block, {**_overrides(tx_index), "tracer": "4byteTracer"})
    assert counts == {SELECTOR + "-0": 1}
    assert _trace(backend, block, {**_overrides(tx_index), "tracer": "noopTracer"}) == {}


@pytest.mark.parametrize(("tx_index", "block"), CASES)
def test_state_tracers(backend: Any, tx_index: int | None, block: str) -> None:
    pre = _trace(backend, block, {**_overrides(tx_index), "tracer": "prestateTracer"})
    account = pre[TARGET]
    assert account["code"] == "0x" + ECHO.hex() and account["balance"] == hex(BALANCE)
    assert account["storage"] == {"0x" + "00" * 32: "0x" + SLOT_VALUE.to_bytes(32, "big").hex()}


@pytest.mark.parametrize(("tx_index", "block"), CASES)
def test_opcode_logger(backend: Any, tx_index: int | None, block: str) -> None:
    logs = _trace(backend, block, _overrides(tx_index))
    assert logs["returnValue"] == EXPECTED and not logs["failed"]
    steps = logs["structLogs"]
    after_number = steps[[s["op"] for s in steps].index("NUMBER") + 1]
    assert after_number["stack"][-1] == hex(NUMBER)
    sload = next(s for s in steps if s["op"] == "SLOAD")
    assert sload["storage"] == {"0x" + "00" * 32: "0x" + SLOT_VALUE.to_bytes(32, "big").hex()}


@pytest.mark.parametrize(("tx_index", "block"), CASES)
def test_mux(backend: Any, tx_index: int | None, block: str) -> None:
    mux = _trace(backend, block, {**_overrides(tx_index), "tracer": "muxTracer",
                                  "tracerConfig": {"callTracer": {}, "prestateTracer": {}}})
    assert mux["callTracer"]["output"] == EXPECTED
    assert mux["prestateTracer"][TARGET]["balance"] == hex(BALANCE)


def test_parity_trace_call_takes_both(backend: Any) -> None:
    state = _overrides()["stateOverrides"]
    blocks = _overrides()["blockOverrides"]
    answer = answer_of(backend, "trace_call", {"to": TARGET, "data": SELECTOR},
                       ["trace", "vmTrace"], "latest", state, blocks)["result"]
    assert answer["output"] == EXPECTED
    assert answer["vmTrace"]["code"] == "0x" + ECHO.hex()
