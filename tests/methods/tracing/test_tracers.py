"""methods/tracing/tracers.py: geth's native tracers and the opcode logger, each checked on
transactions of a dev chain built to show what it reports: a forwarder that calls a storage
contract, a log emitter and a reverter (nested frames, logs, a failed inner call), by the typed
answers of :func:`trace_transaction`; each tracer's options; the mux of several; the flat list
and parity's error words; the logger's size accounting; and the names and options refused in
geth's words."""

from __future__ import annotations

from typing import Any

import pytest
from eth_utils import keccak

import ethread
from ethread.devchain import DevChain, contracts
from ethread.devchain.genesis import PRAGUE_FORKS
from ethread.errors import ExecutionFailed
from ethread.methods.tracing import (
    CallFrame,
    FlatCalls,
    FourBytes,
    LoggerConfig,
    MuxResult,
    NoResult,
    Prestate,
    PrestateDiff,
    StructLogResult,
    TraceContext,
    TraceOptions,
    UnknownTracer,
    flatten,
    make_tracer,
    trace_transaction,
)
from ethread.methods.tracing.tracers import parity_error, struct_log_size
from tests.support.contracts import FORWARDER

TOPIC = keccak(b"tick")


@pytest.fixture(scope="module")
def scene() -> dict[str, Any]:
    chain = DevChain(ethread.MemoryBackend(), forks=PRAGUE_FORKS, accounts=2)
    a = chain.accounts
    store = chain.deploy_runtime(a[0], contracts.STORAGE)
    emitter = chain.deploy_runtime(a[0], contracts.LOG_EMITTER)
    reverter = chain.deploy_runtime(a[0], contracts.REVERTER)
    forwarder = chain.deploy_runtime(a[0], FORWARDER)
    chain.mine()
    hashes = {
        "store": chain.send(a[1], forwarder, data=store + contracts.store_calldata({1: 7})),
        "log": chain.send(a[1], forwarder, data=emitter + contracts.log_calldata([TOPIC], b"hi")),
        "inner-revert": chain.send(a[1], forwarder, data=reverter + contracts.ERROR_CALL),
        "revert": chain.send(a[1], reverter, data=contracts.ERROR_CALL),
        "transfer": chain.send(a[1], a[0].address, value=5),
    }
    chain.mine()
    return {"chain": chain, "backend": chain.backend, "store": store, "emitter": emitter,
            "reverter": reverter, "forwarder": forwarder, "sender": a[1].address,
            "hashes": hashes}


def _trace(scene: dict[str, Any], name: str, tracer: str | None = None,
           config: dict[str, Any] | None = None, logger: LoggerConfig | None = None) -> Any:
    logger = logger or LoggerConfig()
    return trace_transaction(scene["backend"], scene["hashes"][name],
                             TraceOptions(tracer=tracer, tracer_config=config, logger=logger))


def test_the_call_tracer_gives_the_tree(scene: dict[str, Any]) -> None:
    top = _trace(scene, "store", "callTracer")
    assert isinstance(top, CallFrame) and top.type == "CALL" and top.error is None
    assert top.sender == scene["sender"] and top.to == scene["forwarder"]
    (inner,) = top.calls
    assert inner.type == "CALL" and inner.sender == scene["forwarder"] and inner.to == scene["store"]
    assert inner.input == contracts.store_calldata({1: 7}) and inner.value == 0
    assert 0 < inner.gas_used < top.gas_used and inner.gas < top.gas
    only_top = _trace(scene, "store", "callTracer", {"onlyTopCall": True})
    assert only_top.calls == () and only_top.gas_used == top.gas_used


def test_logs_only_when_asked_and_never_from_a_failed_frame(scene: dict[str, Any]) -> None:
    plain = _trace(scene, "log", "callTracer")
    assert plain.calls[0].logs == ()
    logged = _trace(scene, "log", "callTracer", {"withLog": True})
    (log,) = logged.calls[0].logs
    assert log.address == scene["emitter"] and log.topics == (TOPIC,) and log.data == b"hi"
    assert log.index == 0 and logged.logs == ()


def test_a_failed_call_and_its_reason(scene: dict[str, Any]) -> None:
    failed = _trace(scene, "revert", "callTracer")
    assert failed.error == "execution reverted" and failed.revert_reason == contracts.USER_ERROR
    inner = _trace(scene, "inner-revert", "callTracer")
    assert inner.error is None and inner.calls[0].error == "execution reverted"
    assert inner.calls[0].output == contracts.error_data(contracts.USER_ERROR)
    steps = _trace(scene, "revert")
    assert isinstance(steps, StructLogResult) and steps.failed
    assert steps.return_value == contracts.error_data(contracts.USER_ERROR)
    assert steps.struct_logs[-1].op == "REVERT"


def test_the_opcode_logger_and_its_options(scene: dict[str, Any]) -> None:
    full = _trace(scene, "store")
    assert isinstance(full, StructLogResult) and not full.failed
    ops = [log.op for log in full.struct_logs]
    assert "CALL" in ops and "SSTORE" in ops and ops[-1] == "STOP"
    sstore = next(log for log in full.struct_logs if log.op == "SSTORE")
    assert sstore.depth == 2 and sstore.stack is not None and sstore.memory is None
    assert sstore.storage == {(1).to_bytes(32, "big"): (7).to_bytes(32, "big")}
    assert all(log.gas_cost >= 0 and log.depth in (1, 2) for log in full.struct_logs)
    lean = _trace(scene, "store", logger=LoggerConfig(disable_stack=True, disable_storage=True,
                                                       enable_memory=True))
    assert [log.op for log in lean.struct_logs] == ops
    assert all(log.stack is None and log.storage is None for log in lean.struct_logs)
    assert any(log.memory for log in lean.struct_logs)
    limited = _trace(scene, "store", logger=LoggerConfig(limit=2000))
    assert 0 < len(limited.struct_logs) < len(ops)
    assert sum(map(struct_log_size, limited.struct_logs[:-1])) <= 2000
    assert _trace(scene, "transfer").struct_logs == ()


def test_the_prestate_tracer_and_its_diff(scene: dict[str, Any]) -> None:
    store = scene["store"]
    pre = _trace(scene, "store", "prestateTracer")
    assert isinstance(pre, Prestate)
    assert {scene["sender"], scene["forwarder"], store} <= set(pre.accounts)
    assert pre.accounts[store].code == contracts.STORAGE
    assert pre.accounts[store].storage == {(1).to_bytes(32, "big"): bytes(32)}
    bare = _trace(scene, "store", "prestateTracer", {"disableCode": True, "disableStorage": True})
    assert bare.accounts[store].code is None and bare.accounts[store].storage is None
    diff = _trace(scene, "store", "prestateTracer", {"diffMode": True})
    assert isinstance(diff, PrestateDiff)
    assert diff.post[store].storage == {(1).to_bytes(32, "big"): (7).to_bytes(32, "big")}
    assert diff.post[scene["sender"]].nonce == diff.pre[scene["sender"]].nonce + 1


def test_four_bytes_noop_flat_and_mux(scene: dict[str, Any]) -> None:
    inner = contracts.store_calldata({1: 7})
    four = _trace(scene, "store", "4byteTracer")
    assert isinstance(four, FourBytes)
    assert four.counts == {(scene["store"][:4], 20 + len(inner) - 4): 1, (inner[:4], len(inner) - 4): 1}
    assert _trace(scene, "revert", "4byteTracer").counts == {}  # one byte of input: no selector
    assert isinstance(_trace(scene, "store", "noopTracer"), NoResult)
    flat = _trace(scene, "inner-revert", "flatCallTracer", {"convertParityErrors": True})
    assert isinstance(flat, FlatCalls)
    assert [(c.trace_address, c.subtraces, c.error) for c in flat.calls] == [
        ((), 1, None), ((0,), 0, "Reverted")]
    assert flat.calls[0].transaction_hash == scene["hashes"]["inner-revert"]
    mux = _trace(scene, "store", "muxTracer", {"callTracer": {}, "4byteTracer": None})
    assert isinstance(mux, MuxResult) and set(mux.results) == {"callTracer", "4byteTracer"}
    assert mux.results["callTracer"] == _trace(scene, "store", "callTracer")


def test_a_tree_flattens_in_depth_first_order_with_parity_words() -> None:
    leaf = CallFrame(type="STATICCALL", sender=b"\x02" * 20, to=b"\x03" * 20, value=None,
                     gas=10, gas_used=10, input=b"", error="out of gas: not enough gas")
    made = CallFrame(type="CREATE2", sender=b"\x02" * 20, to=b"\x04" * 20, value=0, gas=9,
                     gas_used=5, input=b"\x60", output=b"\x00")
    top = CallFrame(type="CALL", sender=b"\x01" * 20, to=b"\x02" * 20, value=1, gas=100,
                    gas_used=50, input=b"", calls=(leaf, made))
    context = TraceContext(block_hash=b"\x0b" * 32, block_number=7, tx_index=2, tx_hash=b"\x0f" * 32)
    flat = flatten(top, context, convert_errors=True)
    assert [(c.type, c.call_type, c.creation_method, c.trace_address) for c in flat] == [
        ("call", "call", None, ()), ("call", "staticcall", None, (0,)),
        ("create", None, "create2", (1,))]
    assert flat[1].error == "Out of gas" and flat[1].gas_used is None and flat[1].output is None
    assert flat[2].address == b"\x04" * 20 and flat[0].subtraces == 2
    assert {(c.block_number, c.transaction_position) for c in flat} == {(7, 2)}
    assert [parity_error(e) for e in ("execution reverted", "invalid opcode: 0xfe",
                                      "stack underflow (0 <=> 2)", "something else")] == [
        "Reverted", "Bad instruction", "Stack underflow", "something else"]


@pytest.mark.parametrize(("name", "config", "message"), [
    ("callTracer", {"onlyTopCall": 1}, "cannot unmarshal number into Go struct field .onlyTopCall"),
    ("muxTracer", {"callTracer": 3}, "cannot unmarshal number into Go value"),
    ("myTracer", None, "ReferenceError: myTracer is not defined"),
    ("{step: function() {}}", None, "JavaScript tracers are not supported"),
])
def test_names_and_options_refused_in_geths_words(name: str, config: Any, message: str) -> None:
    with pytest.raises(ExecutionFailed, match=message) as refused:
        make_tracer(name, config)
    assert isinstance(refused.value, UnknownTracer) == (config is None)
