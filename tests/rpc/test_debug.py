"""geth's debug namespace (:mod:`ethread.rpc.debug`): a ``TraceConfig``'s timeout as a Go
duration, capped by the service's limit whatever the request asks (and only by it); its
errors naming the argument as geth does; the traces and raw encodings as answered."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import ethread
from ethread.devchain import DevChain
from ethread.errors import InvalidParams
from ethread.rpc.context import Context
from ethread.rpc.debug import (
    DEFAULT_TRACE_TIMEOUT,
    MAX_STRUCT_LOG_BYTES,
    _limited,
    _read_config,
    parse_go_duration,
    parse_trace_config,
)
from ethread.rpc.row import Scope
from ethread.rpc.table import call_method
from tests.support.rpc_cases import error


@pytest.mark.parametrize(("text", "seconds"), [
    ("5s", 5.0), ("1m30s", 90.0), ("500ms", 0.5), ("0", 0.0), ("1.5h", 5400.0), ("-2s", -2.0),
])
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["5", "5 s", "s", "", "1d"])
def test_a_duration_go_refuses(text: str) -> None:
    with pytest.raises(InvalidParams, match=r"^time: invalid duration "):
        parse_go_duration(text)


def _scope(backend: Any, **limits: Any) -> Scope:
    return Scope(backend, Context(**limits), "debug_traceTransaction")


def test_the_service_caps_the_timeout_asked_for_and_nothing_else(chain: DevChain) -> None:
    asked = _read_config({"timeout": "100s"})
    assert asked.timeout == 100.0  # (as written: not yet capped)
    assert _limited(asked, _scope(chain.backend, trace_timeout=10.0)).timeout == 10.0
    assert _limited(asked, _scope(chain.backend, trace_timeout=120.0)).timeout == 100.0
    assert _limited(asked, _scope(chain.backend, trace_timeout=0.0)).timeout == 100.0
    default = _limited(None, _scope(chain.backend, trace_timeout=2.0))
    assert default.timeout == 2.0 and default == parse_trace_config(None, 2.0)
    assert _limited(None, _scope(chain.backend)).timeout == DEFAULT_TRACE_TIMEOUT


def test_the_answer_byte_limit_bounds_the_opcode_log(chain: DevChain) -> None:
    asked = _read_config({"enableMemory": True, "limit": 5})
    assert _limited(asked, _scope(chain.backend)).logger.cap == MAX_STRUCT_LOG_BYTES
    bounded = _limited(asked, _scope(chain.backend, answer_bytes=1000)).logger
    assert (bounded.cap, bounded.limit, bounded.enable_memory) == (1000, 5, True)


def test_a_bad_config_names_its_argument(chain: DevChain) -> None:
    tx = "0x" + "00" * 32
    assert error(chain.backend, "debug_traceTransaction", tx, {"timeout": 5}) == (
        InvalidParams.code, "invalid argument 1: json: cannot unmarshal number into Go struct "
        "field TraceConfig.timeout of type string")
    assert error(chain.backend, "debug_traceTransaction", tx, {"timeout": "5"}) == (
        InvalidParams.code, 'invalid argument 1: time: invalid duration "5"')
    call = {"to": "0x" + "00" * 20}
    assert error(chain.backend, "debug_traceCall", call, "latest", {"txIndex": "0x01"}) == (
        InvalidParams.code, "invalid argument 2: hex number with leading zero digits")
    assert error(chain.backend, "debug_traceCall", call, "latest", {"tracerConfig": 1}) == (
        InvalidParams.code, "invalid argument 2: json: cannot unmarshal number into Go value "
        "of type map[string]interface {}")


def test_traces_of_a_mined_transaction(chain: DevChain) -> None:
    sender, receiver = chain.accounts[0], chain.accounts[1]
    tx_hash = "0x" + chain.send(sender, receiver.address, value=5).hex()
    chain.mine()
    logged = orjson.loads(call_method(chain.backend, "debug_traceTransaction", [tx_hash]))
    assert logged == {"gas": 21000, "failed": False, "returnValue": "0x", "structLogs": []}
    frame = orjson.loads(call_method(chain.backend, "debug_traceTransaction",
                                     [tx_hash, {"tracer": "callTracer"}]))
    assert (frame["type"], frame["from"], frame["to"], frame["value"]) == (
        "CALL", "0x" + sender.address.hex(), "0x" + receiver.address.hex(), "0x5")
    head = hex(chain.head.number)
    block = orjson.loads(call_method(chain.backend, "debug_traceBlockByNumber",
                                     [head, {"tracer": "callTracer"}]))
    assert [entry["txHash"] for entry in block] == [tx_hash] and block[0]["result"] == frame
    roots = orjson.loads(call_method(chain.backend, "debug_intermediateRoots",
                                     ["0x" + chain.head.hash.hex()]))
    assert roots == ["0x" + chain.head.state_root.hex()]


def test_a_block_not_held_is_geths_not_found(chain: DevChain) -> None:
    with pytest.raises(ethread.EthreadError, match="block #1000 not found"):
        call_method(chain.backend, "debug_traceBlockByNumber", ["0x3e8"])


def test_raw_encodings(chain: DevChain) -> None:
    header = orjson.loads(call_method(chain.backend, "debug_getRawHeader", ["latest"]))
    assert isinstance(header, str) and header.startswith("0xf9")
    assert orjson.loads(call_method(chain.backend, "debug_getRawHeader", ["0x3e8"])) is None
    assert orjson.loads(call_method(chain.backend, "debug_getRawReceipts", ["latest"])) == []
