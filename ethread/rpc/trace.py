"""The parity-style ``trace_`` namespace on the wire, as reth writes it (the work is
:mod:`ethread.methods.tracing.parity`). Each transaction's trace runs for at most geth's 5 s
(:data:`DEFAULT_TRACE_TIMEOUT`); a method replaying several stops with ``execution timeout``
once the whole request has run for the service's trace cap.
"""

from __future__ import annotations

from typing import Any

from ..backend import Deadline
from ..codec.hex import parse_address, parse_bytes_param, parse_hash_param, parse_quantity
from ..codec.params import (
    parse_block_overrides,
    parse_block_ref,
    parse_call_request,
    parse_number_or_tag,
    parse_state_override,
)
from ..errors import InvalidParams, go_json_type
from ..methods.tracing import FlatCall
from ..methods.tracing.parity import (
    TRACE_TYPES,
    AccountDiff,
    Delta,
    ParityTrace,
    ReplayResult,
    RewardTrace,
    TraceFilter,
    block_traces,
    call_many_traces,
    call_traces,
    filter_traces,
    raw_transaction_traces,
    replay_block,
    replay_transaction,
    trace_at,
    transaction_traces,
)
from ..methods.tracing.replay import DEFAULT_TRACE_TIMEOUT
from ..methods.tracing.vm_trace import VmOp, VmTrace
from ..models import BlockRef, Hash32
from .debug import block_at, replays, traced
from .row import Param, Scope, opt


def _hex(data: bytes) -> str:
    return "0x" + data.hex()


# -- answers ------------------------------------------------------------------------------------


def _action(call: FlatCall) -> dict[str, Any]:
    if call.type == "suicide":
        return {"address": _hex(call.address or b""), "balance": hex(call.balance or 0),
                "refundAddress": _hex(call.refund_address or b"")}
    if call.type == "create":
        return {"from": _hex(call.sender or b""), "gas": hex(call.gas or 0),
                "init": _hex(call.input or b""), "value": hex(call.value or 0),
                "creationMethod": call.creation_method}
    return {"from": _hex(call.sender or b""), "callType": call.call_type,
            "gas": hex(call.gas or 0), "input": _hex(call.input or b""),
            "to": _hex(call.to or b""), "value": hex(call.value or 0)}


def _result(call: FlatCall) -> dict[str, Any] | None:
    if call.gas_used is None:
        return None
    if call.type == "create":
        return {"address": _hex(call.address or b""), "code": _hex(call.output or b""),
                "gasUsed": hex(call.gas_used)}
    return {"gasUsed": hex(call.gas_used), "output": _hex(call.output or b"")}


def trace_entry_json(call: FlatCall) -> dict[str, Any]:
    """One call of a replay's ``trace`` list (no block or transaction)."""
    out: dict[str, Any] = {"type": call.type, "action": _action(call)}
    if call.error:
        out["error"] = call.error
    out.update({"result": _result(call), "subtraces": call.subtraces,
                "traceAddress": list(call.trace_address)})
    return out


def localized_json(entry: ParityTrace) -> dict[str, Any]:
    """One trace of trace_transaction, trace_block, trace_get or trace_filter."""
    if isinstance(entry, RewardTrace):
        return {"action": {"author": _hex(entry.author), "rewardType": entry.reward_type,
                           "value": hex(entry.value)},
                "blockHash": _hex(entry.block_hash), "blockNumber": entry.block_number,
                "result": None, "subtraces": 0, "traceAddress": [], "transactionHash": None,
                "transactionPosition": None, "type": "reward"}
    out: dict[str, Any] = {"action": _action(entry),
                           "blockHash": None if entry.block_hash is None else _hex(entry.block_hash),
                           "blockNumber": entry.block_number}
    if entry.error:
        out["error"] = entry.error
    out.update({"result": _result(entry), "subtraces": entry.subtraces,
                "traceAddress": list(entry.trace_address),
                "transactionHash": None if entry.transaction_hash is None
                else _hex(entry.transaction_hash),
                "transactionPosition": entry.transaction_position, "type": entry.type})
    return out


def _value(value: int | bytes | None, data: bool) -> str:
    if isinstance(value, bytes):
        return _hex(value)
    return hex(value or 0) if not data else "0x"


def _delta_json(delta: Delta, data: bool = False) -> Any:
    if delta.kind == "=":
        return "="
    if delta.kind == "+":
        return {"+": _value(delta.after, data)}
    if delta.kind == "-":
        return {"-": _value(delta.before, data)}
    return {"*": {"from": _value(delta.before, data), "to": _value(delta.after, data)}}


def account_diff_json(diff: AccountDiff) -> dict[str, Any]:
    """One account of a ``stateDiff``."""
    return {"balance": _delta_json(diff.balance), "code": _delta_json(diff.code, True),
            "nonce": _delta_json(diff.nonce),
            "storage": {_hex(slot): _delta_json(delta, True)
                        for slot, delta in sorted(diff.storage.items())}}


def vm_trace_json(trace: VmTrace) -> dict[str, Any]:
    """A frame's ``vmTrace``, as reth writes it (alloy's ``VmTrace``)."""
    return {"code": _hex(trace.code), "ops": [_vm_op_json(op) for op in trace.ops]}


def _vm_op_json(op: VmOp) -> dict[str, Any]:
    memory = op.memory
    return {
        "cost": op.cost,
        "ex": {"mem": None if memory is None else {"data": _hex(memory), "off": len(memory)},
               "push": [hex(item) for item in op.push],
               "store": None if op.store is None else {"key": hex(op.store[0]),
                                                       "val": hex(op.store[1])},
               "used": op.used},
        "pc": op.pc,
        "sub": None if op.sub is None else vm_trace_json(op.sub),
        "op": op.op,
    }


def replay_json(result: ReplayResult) -> dict[str, Any]:
    """A replayed transaction or call (``transactionHash`` for a block's replays)."""
    out: dict[str, Any] = {
        "output": _hex(result.output),
        "stateDiff": None if result.state_diff is None else
        {_hex(address): account_diff_json(diff) for address, diff in sorted(result.state_diff.items())},
        "trace": [trace_entry_json(call) for call in result.trace or ()],
        "vmTrace": None if result.vm_trace is None else vm_trace_json(result.vm_trace),
    }
    if result.tx_hash is not None:
        out["transactionHash"] = _hex(result.tx_hash)
    return out


# -- parameters ---------------------------------------------------------------------------------


def parse_trace_types(value: Any) -> tuple[str, ...]:
    """A ``traceTypes`` list: each of ``trace``, ``stateDiff``, ``vmTrace``."""
    if not isinstance(value, list):
        raise InvalidParams(f"invalid type: {go_json_type(value)}, expected a list of trace types")
    for item in value:
        if item not in TRACE_TYPES:
            shown = item if isinstance(item, str) else go_json_type(item)
            raise InvalidParams(f"unknown trace type {shown!r}, expected one of "
                                + ", ".join(TRACE_TYPES))
    return tuple(value)


def _count(obj: dict[str, Any], key: str) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InvalidParams(f"{key}: expected a number, got {go_json_type(value)}")
    number = value if isinstance(value, int) else parse_quantity(value, key, bits=64)
    if number < 0:
        raise InvalidParams(f"{key}: expected a non-negative number")
    return number


def _addresses(obj: dict[str, Any], key: str) -> frozenset[bytes]:
    value = obj.get(key)
    if value is None:
        return frozenset()
    if not isinstance(value, list):
        raise InvalidParams(f"{key}: expected a list of addresses, got {go_json_type(value)}")
    return frozenset(parse_address(item, key) for item in value)


def parse_trace_filter(value: Any) -> TraceFilter:
    """``trace_filter``'s object (``mode``: ``union`` by default, or ``intersection``)."""
    if not isinstance(value, dict):
        raise InvalidParams(f"invalid type: {go_json_type(value)}, expected a trace filter object")
    mode = value.get("mode", "union")
    if mode not in ("union", "intersection"):
        raise InvalidParams(f"mode: expected union or intersection, got {mode!r}")
    blocks = {key: "latest" if value.get(key) is None else parse_number_or_tag(value[key])
              for key in ("fromBlock", "toBlock")}
    return TraceFilter(from_block=blocks["fromBlock"], to_block=blocks["toBlock"],
                       from_addresses=_addresses(value, "fromAddress"),
                       to_addresses=_addresses(value, "toAddress"), mode=mode,
                       after=_count(value, "after") or 0, count=_count(value, "count"))


def _timeout(scope: Scope) -> float:
    cap = scope.ctx.trace_timeout
    return min(DEFAULT_TRACE_TIMEOUT, cap) if cap > 0 else DEFAULT_TRACE_TIMEOUT


def _deadline(scope: Scope) -> Deadline | None:
    cap = scope.ctx.trace_timeout
    return Deadline.after(cap) if cap > 0 else None


# -- the methods --------------------------------------------------------------------------------


def _trace_transaction(scope: Scope, tx_hash: Hash32) -> Any:
    traces = transaction_traces(scope.backend, tx_hash, _timeout(scope), replays(scope))
    return None if traces is None else [localized_json(t) for t in traces]


def _trace_block(scope: Scope, ref: BlockRef) -> Any:
    block = block_at(scope.backend, ref)
    if block is None:
        return None
    return [localized_json(t)
            for t in block_traces(scope.backend, block, _timeout(scope), _deadline(scope))]


def _indices(value: Any) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise InvalidParams(f"invalid type: {go_json_type(value)}, expected a list of indices")
    return tuple(parse_quantity(item, "index", bits=64) if isinstance(item, str)
                 else _count({"index": item}, "index") or 0 for item in value)


def _trace_get(scope: Scope, tx_hash: Hash32, indices: tuple[int, ...]) -> Any:
    found = trace_at(scope.backend, tx_hash, indices, _timeout(scope), replays(scope))
    return None if found is None else localized_json(found)


def _trace_filter(scope: Scope, query: TraceFilter) -> Any:
    return [localized_json(t)
            for t in filter_traces(scope.backend, query, _timeout(scope), _deadline(scope))]


def _trace_call(scope: Scope, request: Any, types: tuple[str, ...], block: BlockRef,
                state_override: Any, block_overrides: Any) -> Any:
    return replay_json(call_traces(scope.backend, request, types, block,
                                   state_override=state_override, block_overrides=block_overrides,
                                   timeout=_timeout(scope), states=replays(scope)))


def _replay_transaction(scope: Scope, tx_hash: Hash32, types: tuple[str, ...]) -> Any:
    return replay_json(replay_transaction(scope.backend, tx_hash, types, _timeout(scope),
                                          replays(scope)))


def _replay_block(scope: Scope, ref: BlockRef, types: tuple[str, ...]) -> Any:
    block = block_at(scope.backend, ref)
    if block is None:
        return None
    return [replay_json(r) for r in replay_block(scope.backend, block, types, _timeout(scope),
                                                 _deadline(scope))]


def _calls(value: Any) -> list[tuple[Any, tuple[str, ...]]]:
    """trace_callMany's list of ``[call, traceTypes]`` pairs."""
    if not isinstance(value, list):
        raise InvalidParams(f"invalid type: {go_json_type(value)}, expected a list of "
                            "[call, traceTypes] pairs")
    calls = []
    for index, pair in enumerate(value):
        if not isinstance(pair, list) or len(pair) != 2:
            raise InvalidParams(f"call {index}: expected a [call, traceTypes] pair")
        try:
            calls.append((parse_call_request(pair[0]), parse_trace_types(pair[1])))
        except InvalidParams as exc:
            raise InvalidParams(f"call {index}: {exc.message}", exc.data) from None
    return calls


def _trace_call_many(scope: Scope, calls: list[Any], block: BlockRef) -> Any:
    return [replay_json(r) for r in call_many_traces(scope.backend, calls, block,
                                                     timeout=_timeout(scope), states=replays(scope))]


def _trace_raw_transaction(scope: Scope, raw: bytes, types: tuple[str, ...], block: BlockRef) -> Any:
    return replay_json(raw_transaction_traces(scope.backend, raw, types, block,
                                              timeout=_timeout(scope), states=replays(scope)))


HASH = Param("hash", parse_hash_param)
BLOCK = Param("block", parse_block_ref)
LATEST = opt("block", parse_block_ref, "latest")
TYPES = Param("traceTypes", parse_trace_types)


# Prices as debug_traceTransaction and debug_traceBlock; trace_filter (up to 100 blocks) costs
# ten blocks' worth (most ranges hold few transactions; a busy one runs into the time cap).
ROWS = (
    traced("trace_transaction", _trace_transaction, 300, HASH, keeps_traces=True),
    traced("trace_get", _trace_get, 300, HASH, Param("indices", _indices), keeps_traces=True),
    traced("trace_call", _trace_call, 300, Param("call", parse_call_request), TYPES, LATEST,
           opt("stateOverride", parse_state_override, ()), opt("blockOverrides", parse_block_overrides)),
    traced("trace_replayTransaction", _replay_transaction, 300, HASH, TYPES, keeps_traces=True),
    traced("trace_rawTransaction", _trace_raw_transaction, 300, Param("data", parse_bytes_param),
           TYPES, LATEST),
    traced("trace_block", _trace_block, 1000, BLOCK),
    traced("trace_replayBlockTransactions", _replay_block, 1000, BLOCK, TYPES),
    traced("trace_callMany", _trace_call_many, 1000, Param("calls", _calls), LATEST),
    traced("trace_filter", _trace_filter, 10_000, Param("filter", parse_trace_filter)),
)
