"""geth's debug namespace of tracing: ``TraceConfig`` and ``TraceCallConfig`` in, the traces
out as geth 1.17 writes them (the tracing itself is :mod:`ethread.methods.tracing`). A trace
runs for its ``timeout`` (geth's 5 s by default), at most :data:`MAX_TRACE_TIMEOUT`; the
opcode log stops with -32003 past the answer-byte limit (the context's ``answer_bytes``).
"""

from __future__ import annotations

import ctypes
import functools
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import orjson

from ..codec.hex import go_quote, parse_bytes_param, parse_hash_param, parse_quantity, wrong_type
from ..codec.params import (
    parse_block_overrides,
    parse_block_ref,
    parse_call_request,
    parse_number_or_tag,
    parse_state_override,
)
from ..errors import InvalidParams, go_json_type
from ..methods import raw
from ..methods.resolve import resolve_header
from ..methods.tracing import (
    DEFAULT_TRACE_TIMEOUT,
    CallFrame,
    CallLog,
    FlatCall,
    FlatCalls,
    FourBytes,
    LoggerConfig,
    MuxResult,
    NoResult,
    NotTraceable,
    Prestate,
    PrestateAccount,
    PrestateDiff,
    ReplayStates,
    StructLog,
    StructLogResult,
    TraceOptions,
    TraceResult,
    TransactionTrace,
    block_by_ref,
    intermediate_roots,
    trace_block,
    trace_call,
    trace_raw_block,
    trace_transaction,
)
from ..models import Block, BlockHashRef, BlockRef, Hash32
from .context import MAX_TRACE_TIMEOUT, Context
from .row import Method, Param, Scope, lookup, opt

MAX_STRUCT_LOG_BYTES = 64 * 1024 * 1024
"""The most JSON the opcode logger writes for one transaction when the service names none."""


# -- parameters ---------------------------------------------------------------------------------

_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0,
                   "m": 60.0, "h": 3600.0}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_go_duration(text: str) -> float:
    """Seconds of a Go duration (``5s``, ``1m30s``, ``500ms``), refused in Go's words."""
    body = text
    sign = 1.0
    if body[:1] in "+-" and body:
        sign = -1.0 if body[0] == "-" else 1.0
        body = body[1:]
    if body == "0":
        return 0.0
    position, total = 0, 0.0
    while position < len(body):
        match = _DURATION_PART.match(body, position)
        if match is None:
            break
        total += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        position = match.end()
    if not body or position != len(body):
        raise InvalidParams(f"time: invalid duration {go_quote(text)}")
    return sign * total


def _field(config: Mapping[str, Any], key: str, kind: type, typename: str) -> Any:
    value = config.get(key)
    if value is None:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise InvalidParams(f"json: cannot unmarshal {go_json_type(value)} into Go struct field "
                            f"TraceConfig.{key} of type {typename}")
    return value


def parse_trace_config(value: Any, cap: float = MAX_TRACE_TIMEOUT,
                       answer_bytes: int = MAX_STRUCT_LOG_BYTES) -> TraceOptions:
    """geth's ``TraceConfig``; ``cap`` bounds the timeout and ``answer_bytes`` the opcode log."""
    if value is None:
        return TraceOptions(timeout=min(DEFAULT_TRACE_TIMEOUT, cap),
                            logger=LoggerConfig(cap=answer_bytes))
    if not isinstance(value, dict):
        raise wrong_type(value, "tracers.TraceConfig")
    flags = {key: bool(_field(value, key, bool, "bool"))
             for key in ("enableMemory", "disableStack", "disableStorage", "enableReturnData")}
    limit = max(_field(value, "limit", int, "int") or 0, 0)
    logger = LoggerConfig(enable_memory=flags["enableMemory"], disable_stack=flags["disableStack"],
                          disable_storage=flags["disableStorage"],
                          enable_return_data=flags["enableReturnData"], limit=limit,
                          cap=answer_bytes)
    tracer = _field(value, "tracer", str, "string")
    timeout_text = _field(value, "timeout", str, "string")
    timeout = DEFAULT_TRACE_TIMEOUT if timeout_text is None else parse_go_duration(timeout_text)
    if cap > 0:
        timeout = min(timeout, cap)
    tracer_config = value.get("tracerConfig")
    if tracer_config is not None and not isinstance(tracer_config, dict):
        raise wrong_type(tracer_config, "map[string]interface {}")
    return TraceOptions(tracer=tracer or None, tracer_config=tracer_config, logger=logger,
                        timeout=timeout)


# -- answers ------------------------------------------------------------------------------------


def _hex(data: bytes) -> str:
    return "0x" + data.hex()


def struct_log_json(log: StructLog) -> dict[str, Any]:
    """One step as geth's legacy struct log JSON."""
    out: dict[str, Any] = {"pc": log.pc, "op": log.op, "gas": log.gas, "gasCost": log.gas_cost,
                           "depth": log.depth}
    if log.error:
        out["error"] = log.error
    if log.stack is not None:
        out["stack"] = [hex(v) for v in log.stack]
    if log.return_data:
        out["returnData"] = _hex(log.return_data)
    if log.memory:
        memory = log.memory
        out["memory"] = [_hex(memory[i:i + 32].ljust(32, b"\x00")) for i in range(0, len(memory), 32)]
    if log.storage:
        out["storage"] = {_hex(k): _hex(v) for k, v in sorted(log.storage.items())}
    if log.refund:
        out["refund"] = log.refund
    return out


def _call_log_json(log: CallLog) -> dict[str, Any]:
    return {"address": _hex(log.address), "topics": [_hex(t) for t in log.topics],
            "data": _hex(log.data), "index": hex(log.index), "position": hex(log.position)}


def call_frame_json(frame: CallFrame) -> dict[str, Any]:
    """callTracer's frame as geth writes it."""
    out: dict[str, Any] = {"from": _hex(frame.sender), "gas": hex(frame.gas),
                           "gasUsed": hex(frame.gas_used)}
    if frame.to is not None:
        out["to"] = _hex(frame.to)
    out["input"] = _hex(frame.input)
    if frame.output:
        out["output"] = _hex(frame.output)
    if frame.error:
        out["error"] = frame.error
    if frame.revert_reason:
        out["revertReason"] = frame.revert_reason
    if frame.calls:
        out["calls"] = [call_frame_json(call) for call in frame.calls]
    if frame.logs:
        out["logs"] = [_call_log_json(log) for log in frame.logs]
    if frame.value is not None:
        out["value"] = hex(frame.value)
    out["type"] = frame.type
    return out


def _account_json(account: PrestateAccount) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if account.balance is not None:
        out["balance"] = hex(account.balance)
    if account.code is not None:
        out["code"] = _hex(account.code)
    if account.code_hash is not None:
        out["codeHash"] = _hex(account.code_hash)
    if account.nonce:
        out["nonce"] = account.nonce
    if account.storage:
        out["storage"] = {_hex(k): _hex(v) for k, v in sorted(account.storage.items())}
    return out


def _accounts_json(accounts: Mapping[bytes, PrestateAccount]) -> dict[str, Any]:
    return {_hex(address): _account_json(account) for address, account in sorted(accounts.items())}


def flat_call_json(call: FlatCall) -> dict[str, Any]:
    """One entry of flatCallTracer's list (parity's shape)."""
    action: dict[str, Any] = {}
    result: dict[str, Any] | None = None
    if call.type == "suicide":
        action = {"address": _hex(call.address or b""), "balance": hex(call.balance or 0),
                  "refundAddress": _hex(call.refund_address or b"")}
    elif call.type == "create":
        action = {"creationMethod": call.creation_method, "from": _hex(call.sender or b""),
                  "gas": hex(call.gas or 0), "init": _hex(call.input or b""),
                  "value": hex(call.value or 0)}
        if call.gas_used is not None:  # (no address for a create that reverted, as geth)
            result = {"code": _hex(call.output or b""), "gasUsed": hex(call.gas_used)}
            if call.address is not None:
                result = {"address": _hex(call.address), **result}
    else:
        action = {"callType": call.call_type, "from": _hex(call.sender or b""),
                  "gas": hex(call.gas or 0), "input": _hex(call.input or b""),
                  "to": _hex(call.to or b""), "value": hex(call.value or 0)}
        if call.gas_used is not None:
            result = {"gasUsed": hex(call.gas_used), "output": _hex(call.output or b"")}
    out: dict[str, Any] = {
        "action": action,
        "blockHash": None if call.block_hash is None else _hex(call.block_hash),
        "blockNumber": call.block_number,
    }
    if call.error:
        out["error"] = call.error
    if result is not None:
        out["result"] = result
    out.update({"subtraces": call.subtraces, "traceAddress": list(call.trace_address),
                "transactionHash": None if call.transaction_hash is None else _hex(call.transaction_hash),
                "transactionPosition": call.transaction_position, "type": call.type})
    return out


def trace_json(result: TraceResult) -> Any:
    """Any tracer's answer as geth writes it."""
    if isinstance(result, StructLogResult):
        return {"gas": result.gas, "failed": result.failed, "returnValue": _hex(result.return_value),
                "structLogs": [struct_log_json(log) for log in result.struct_logs]}
    if isinstance(result, CallFrame):
        return call_frame_json(result)
    if isinstance(result, Prestate):
        return _accounts_json(result.accounts)
    if isinstance(result, PrestateDiff):
        return {"post": _accounts_json(result.post), "pre": _accounts_json(result.pre)}
    if isinstance(result, FourBytes):
        return {f"{_hex(selector)}-{size}": count
                for (selector, size), count in sorted(result.counts.items())}
    if isinstance(result, NoResult):
        return {}
    if isinstance(result, FlatCalls):
        return [flat_call_json(call) for call in result.calls]
    if isinstance(result, MuxResult):
        return {name: trace_json(value) for name, value in result.results.items()}
    raise TypeError(f"not a trace: {type(result).__name__}")


def block_traces_json(traces: tuple[TransactionTrace, ...]) -> list[dict[str, Any]]:
    """A traced block: ``{txHash, result}`` (or ``error``) per transaction."""
    out = []
    for trace in traces:
        entry: dict[str, Any] = {"txHash": _hex(trace.tx_hash)}
        if trace.result is not None:
            entry["result"] = trace_json(trace.result)
        if trace.error:
            entry["error"] = trace.error
        out.append(entry)
    return out


# -- the methods --------------------------------------------------------------------------------

LARGE_ANSWER_BYTES = 8 * 1024 * 1024
"""An answer past this size gives the process's freed memory back to the system once sent."""
RELEASE_DELAY = 1.0
"""Seconds after a large answer is made that the freed memory is given back."""


def encoded_answer(build: Callable[[], Any]) -> orjson.Fragment:
    """``build()``'s JSON value encoded at once (the objects freed before it returns). After a
    large one the freed pages go back to the system on a timer (:func:`release_memory`)."""
    encoded = orjson.dumps(build())
    if len(encoded) > LARGE_ANSWER_BYTES:
        _release_soon()
    return orjson.Fragment(encoded)


_release_lock = threading.Lock()
_release_timer: threading.Timer | None = None


def _release_soon() -> None:
    global _release_timer
    with _release_lock:
        if _release_timer is not None:
            return
        _release_timer = threading.Timer(RELEASE_DELAY, _release_now)
        _release_timer.daemon = True
        _release_timer.start()


def _release_now() -> None:
    global _release_timer
    with _release_lock:
        _release_timer = None
    release_memory()


def release_memory() -> None:
    """Give the heap's free pages back to the system (glibc's ``malloc_trim``, if any)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def replays(scope: Scope) -> ReplayStates | None:
    """The dispatcher's kept replays (None without a trace cache)."""
    return None if scope.ctx.traces is None else scope.ctx.traces.replays


def _read_config(value: Any) -> TraceOptions:
    """A ``TraceConfig`` as the request wrote it, its timeout not yet capped (:func:`_limited`)."""
    return parse_trace_config(value, 0)


def _limited(options: TraceOptions | None, scope: Scope) -> TraceOptions:
    """``options`` (None: the defaults) within the service's trace timeout and answer bytes."""
    cap, answer_bytes = scope.ctx.trace_timeout, scope.ctx.answer_bytes
    if answer_bytes is None:
        answer_bytes = MAX_STRUCT_LOG_BYTES
    if options is None:
        return parse_trace_config(None, cap, answer_bytes)
    timeout = min(options.timeout, cap) if cap > 0 else options.timeout
    return replace(options, timeout=timeout, logger=replace(options.logger, cap=answer_bytes))


def _trace_transaction(scope: Scope, tx_hash: Hash32, options: TraceOptions | None) -> Any:
    backend, limited = scope.backend, _limited(options, scope)
    return encoded_answer(lambda: trace_json(trace_transaction(backend, tx_hash, limited,
                                                               states=replays(scope))))


def block_at(backend: Any, ref: BlockRef) -> Block | None:
    """The block a number, tag or hash names, read as a replay reads it (None: not held)."""
    header = resolve_header(backend, ref)
    return None if header is None else block_by_ref(backend, BlockHashRef(hash=header.hash))


def _trace_block_by_number(scope: Scope, ref: Any, options: TraceOptions | None) -> Any:
    block = block_at(scope.backend, ref)
    if block is None:
        raise NotTraceable(f"block #{ref} not found")
    return _traced_block(scope, block, options)


def _trace_block_by_hash(scope: Scope, block_hash: Hash32, options: TraceOptions | None) -> Any:
    return _traced_block(scope, block_by_ref(scope.backend, BlockHashRef(hash=block_hash)),
                         options)


def _traced_block(scope: Scope, block: Any, options: TraceOptions | None) -> Any:
    backend, limited = scope.backend, _limited(options, scope)
    return encoded_answer(lambda: block_traces_json(trace_block(backend, block, limited)))


def _trace_block(scope: Scope, raw: bytes, options: TraceOptions | None) -> Any:
    backend, limited = scope.backend, _limited(options, scope)
    return encoded_answer(lambda: block_traces_json(trace_raw_block(backend, raw, limited)))


CallConfig = tuple[TraceOptions | None, Any, Any, int | None]


def _call_config(value: Any) -> CallConfig:
    """geth's ``TraceCallConfig``: ``TraceConfig``, ``stateOverrides``, ``blockOverrides``, ``txIndex``."""
    options = _read_config(value)
    state_override: Any = ()
    block_overrides = tx_index = None
    if isinstance(value, dict):
        if value.get("stateOverrides") is not None:
            state_override = parse_state_override(value["stateOverrides"])
        if value.get("blockOverrides") is not None:
            block_overrides = parse_block_overrides(value["blockOverrides"])
        if value.get("txIndex") is not None:
            tx_index = parse_quantity(value["txIndex"], "hexutil.Uint", bits=64)
    return options, state_override, block_overrides, tx_index


def _trace_call(scope: Scope, request: Any, block: BlockRef, config: CallConfig) -> Any:
    options, state_override, block_overrides, tx_index = config
    backend, limited = scope.backend, _limited(options, scope)
    return encoded_answer(lambda: trace_json(trace_call(
        backend, request, block, limited, state_override=state_override,
        block_overrides=block_overrides, tx_index=tx_index, states=replays(scope))))


def _intermediate_roots(scope: Scope, block_hash: Hash32, options: TraceOptions | None) -> Any:
    # (geth takes a TraceConfig and reads nothing of it)
    return [_hex(root) for root in intermediate_roots(scope.backend, block_hash)]


def _hex_answer(data: bytes, ctx: Context) -> str:
    return _hex(data)


def _data_list(values: tuple[bytes, ...], ctx: Context) -> list[str]:
    return [_hex(value) for value in values]


CONFIG = opt("config", _read_config)
HASH = Param("hash", parse_hash_param)
BLOCK_REF = Param("block", parse_block_ref)


def traced(name: str, answer: Callable[..., Any], price: int, *params: Param,
           keeps_traces: bool = False) -> Method:
    """A trace method: slow, its answer kept in the answer cache."""
    return Method(name, answer, params, price, slow=True, keeps_traces=keeps_traces)


ROWS = (
    Method("debug_getRawHeader", lookup(raw.get_raw_header, _hex_answer), (BLOCK_REF,), 80),
    Method("debug_getRawBlock", lookup(raw.get_raw_block, _hex_answer), (BLOCK_REF,), 80),
    Method("debug_getRawReceipts", lookup(raw.get_raw_receipts, _data_list), (BLOCK_REF,), 80),
    Method("debug_getRawTransaction", lookup(raw.get_raw_transaction, _hex_answer), (HASH,), 80),
    traced("debug_traceTransaction", _trace_transaction, 300, HASH, CONFIG, keeps_traces=True),
    traced("debug_traceBlockByNumber", _trace_block_by_number, 1000,
           Param("block", parse_number_or_tag), CONFIG),
    traced("debug_traceBlockByHash", _trace_block_by_hash, 1000, HASH, CONFIG),
    traced("debug_traceBlock", _trace_block, 1000, Param("rlp", parse_bytes_param), CONFIG),
    traced("debug_traceCall", _trace_call, 300, Param("call", parse_call_request),
           opt("block", parse_block_ref, "latest"), opt("config", _call_config, (None, (), None, None))),
    traced("debug_intermediateRoots", _intermediate_roots, 1000, HASH, CONFIG),
)
