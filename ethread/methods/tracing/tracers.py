"""geth's tracers, each a small class that only collects what the hooks report
(:mod:`.hooks`) and builds its typed answer (:mod:`.models`): :class:`StructLogger` (the
default opcode logger), :class:`CallTracer`, :class:`PrestateTracer`, :class:`FourByteTracer`,
:class:`NoopTracer`, :class:`FlatCallTracer`, :class:`MuxTracer`. :func:`make_tracer` builds
one from a tracer name and its configuration, refusing what geth refuses in geth's words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from eth._utils.address import generate_contract_address, generate_safe_contract_address
from eth_typing import Address as EvmAddress
from eth_utils import keccak

from ...errors import EthreadError, ExecutionFailed, ResponseTooLarge, go_json_type
from ...evm.hooks import (
    CALL,
    CALLCODE,
    CREATE,
    CREATE2,
    DELEGATECALL,
    SELFDESTRUCT,
    SLOAD,
    SSTORE,
    STATICCALL,
    Step,
    Tracer,
    TxEnv,
    opcode_name,
)
from ...models import trusted_maker
from ..call import decode_revert_reason
from .models import (
    CallFrame,
    CallLog,
    FlatCall,
    FlatCalls,
    FourBytes,
    MuxResult,
    NoResult,
    Prestate,
    PrestateAccount,
    PrestateDiff,
    StructLog,
    StructLogResult,
    TraceResult,
)

EMPTY_CODE_HASH = keccak(b"")
ZERO_WORD = b"\x00" * 32


class ResultTracer(Tracer):
    """A tracer with an answer."""

    def result(self) -> TraceResult:
        """The answer, once the transaction has ended."""
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------
# The opcode logger


@dataclass(frozen=True, slots=True, kw_only=True)
class LoggerConfig:
    """The opcode logger's options (geth's ``logger.Config``)."""

    enable_memory: bool = False
    disable_stack: bool = False
    disable_storage: bool = False
    enable_return_data: bool = False
    limit: int = 0
    """Stop logging past this many bytes of JSON of steps (0: no limit), counted as geth does."""
    cap: int = 0
    """The service's bound on the answer, in bytes of JSON (0: none): once the steps pass it
    the trace stops with :class:`TraceTooLarge` (an answer that large would not be sent)."""


class TraceTooLarge(ResponseTooLarge):
    """The opcode log passed the service's answer-byte limit (-32003)."""

    def __init__(self, cap: int, steps: int) -> None:
        EthreadError.__init__(
            self, f"response too large: the opcode log passed the service's limit of {cap} "
            f"bytes at step {steps}; ask for fewer steps (the logger's limit), without the "
            "stack, storage or memory, or for callTracer")


def struct_log_size(log: StructLog) -> int:
    """The length of ``log`` in geth's JSON, for the logger's ``limit``."""
    size = (46 + len(log.op) + len(str(log.pc)) + len(str(log.gas)) + len(str(log.gas_cost))
            + len(str(log.depth)))
    stack = log.stack
    if stack is not None:  # (each item written as hex() writes it)
        size += 10 + 3 * len(stack) + sum(map(len, map(hex, stack)))
    if log.refund:
        size += 10 + len(str(log.refund))
    return size + _optional_size(log)


def _size_bound(log: StructLog) -> int:
    """At least :func:`struct_log_size` of ``log``, cheaply: each stack item at its longest."""
    size = 140 + len(log.op)
    if log.stack is not None:
        size += 10 + 69 * len(log.stack)
    return size + _optional_size(log)


def _optional_size(log: StructLog) -> int:
    """The JSON length of ``log``'s error, return data, memory and storage (0 when absent)."""
    size = 0
    if log.error:
        size += 11 + len(log.error)
    if log.return_data:
        size += 17 + 2 * len(log.return_data)
    if log.memory:
        size += 11 + (len(log.memory) + 31) // 32 * 69
    if log.storage:
        size += 12 + 138 * len(log.storage)
    return size


_STRUCT_LOG = trusted_maker(StructLog, "pc op gas gas_cost depth error stack return_data memory "
                                       "storage refund")
"""A step's log made without the dataclass constructor (its fields in declaration order)."""
_OP_NAMES = [opcode_name(value) for value in range(256)]


class StructLogger(ResultTracer):
    """geth's ``StructLogger``: one :class:`StructLog` per step."""

    wants_steps = True

    def __init__(self, config: LoggerConfig = LoggerConfig()) -> None:
        self.config = config
        self.wants_stack = not config.disable_stack or not config.disable_storage
        self.wants_memory = config.enable_memory
        self.logs: list[StructLog] = []
        self.size = 0
        """The JSON bytes of the steps logged (without ``limit``: of the first ``measured``)."""
        self.steps = 0
        self.cap = config.cap if not config.limit or config.limit > config.cap else 0
        self.exact = bool(config.limit)
        """Whether each step is measured as logged (geth's ``limit`` stops at the step past it);
        else the cap is checked against a cheap bound, the steps measured once it passes."""
        self.measured = 0
        self.bound = 0
        self.storage: dict[bytes, dict[bytes, bytes]] = {}
        self.env: TxEnv | None = None
        self.output = b""
        self.error: str | None = None
        self.gas_used = 0

    def on_tx_start(self, env: TxEnv) -> None:
        """Keep the transaction's environment, to read a slot's value on SLOAD."""
        self.env = env

    def on_opcode(self, step: Step) -> None:
        """Log the step (until past ``limit``); past the ``cap``, stop the trace."""
        config = self.config
        if self.exact and self.size > config.limit:
            return
        self._check_cap()
        self.steps += 1
        storage = None
        stack = step.stack
        if not config.disable_storage and stack is not None and step.op in (SLOAD, SSTORE):
            held = self.storage.setdefault(step.address, {})
            if step.op == SLOAD and len(stack) >= 1:
                slot = stack[-1].to_bytes(32, "big")
                assert self.env is not None
                held[slot] = self.env.storage(step.address, slot)
                storage = dict(held)
            elif step.op == SSTORE and len(stack) >= 2:
                held[stack[-1].to_bytes(32, "big")] = stack[-2].to_bytes(32, "big")
                storage = dict(held)
        log = _STRUCT_LOG(
            step.pc, _OP_NAMES[step.op], step.gas, step.cost, step.depth,
            step.error, tuple(stack) if stack is not None and not config.disable_stack else None,
            step.return_data if config.enable_return_data else None,
            step.memory if config.enable_memory else None, storage, step.refund)
        if self.exact:
            self.size += struct_log_size(log)
        elif self.cap:
            self.bound += _size_bound(log)
        self.logs.append(log)

    def _check_cap(self) -> None:
        """Past the ``cap`` (the bound first, then the steps measured), stop the trace."""
        if self.cap and self.size + self.bound > self.cap:
            logs = self.logs
            self.size += sum(map(struct_log_size, logs[self.measured:]))
            self.measured = len(logs)
            self.bound = 0
            if self.size > self.cap:
                self.logs = []  # (what was logged goes at once, not when the error is answered)
                raise TraceTooLarge(self.cap, self.steps)

    def on_exit(self, depth: int, output: bytes, gas_used: int, error: str | None,
                reverted: bool) -> None:
        """Keep the transaction's own output and error (the frame at depth 0)."""
        if depth == 0:
            self.output, self.error = output, error

    def on_tx_end(self, gas_used: int, error: str | None) -> None:
        """Keep the gas the transaction used."""
        self.gas_used = gas_used

    def result(self) -> StructLogResult:
        """The :class:`StructLogResult`: gas, failure, return value (a revert's too), steps."""
        self._check_cap()
        failed = self.error is not None
        value = self.output if not failed or self.error == "execution reverted" else b""
        return StructLogResult(gas=self.gas_used, failed=failed, return_value=value,
                               struct_logs=tuple(self.logs))


# ---------------------------------------------------------------------------------------------
# callTracer


@dataclass(slots=True)
class _OpenFrame:
    """A call frame being collected (frozen into a :class:`CallFrame` when done)."""

    kind: int
    sender: bytes
    to: bytes | None
    value: int | None
    gas: int
    input: bytes
    created: bytes | None = None
    gas_used: int = 0
    output: bytes = b""
    error: str | None = None
    revert_reason: str | None = None
    calls: list[CallFrame] = field(default_factory=list)
    logs: list[CallLog] = field(default_factory=list)
    reverted: bool = False

    def __post_init__(self) -> None:
        if self.kind in (CREATE, CREATE2):
            self.created = self.to

    def finish(self, output: bytes, error: str | None, reverted: bool) -> None:
        """geth's ``processOutput``: the output, or the error and what a revert returned."""
        if error is not None and not reverted:
            error = None
        if error is None:
            self.output = output
            return
        self.error = error
        self.reverted = reverted
        if self.kind in (CREATE, CREATE2):
            self.to = None
        if error != "execution reverted" or not output:
            return
        self.output = output
        if len(output) >= 4:
            self.revert_reason = decode_revert_reason(output)

    def frozen(self) -> CallFrame:
        return CallFrame(type=opcode_name(self.kind), sender=self.sender, to=self.to,
                         value=self.value, gas=self.gas, gas_used=self.gas_used, input=self.input,
                         output=self.output, error=self.error, revert_reason=self.revert_reason,
                         calls=tuple(self.calls), logs=tuple(self.logs), reverted=self.reverted,
                         created=self.created)


class CallTracer(ResultTracer):
    """geth's ``callTracer``: the tree of frames (and their logs with ``withLog``)."""

    def __init__(self, only_top_call: bool = False, with_log: bool = False) -> None:
        self.only_top_call = only_top_call
        self.with_log = with_log
        self.stack: list[_OpenFrame] = []
        self.top: CallFrame | None = None
        self.gas_limit = 0
        self.depth = 0

    def on_tx_start(self, env: TxEnv) -> None:
        """Keep the gas limit, the top frame's gas."""
        self.gas_limit = env.gas_limit

    def on_enter(self, depth: int, kind: int, sender: bytes, to: bytes, data: bytes, gas: int,
                 value: int | None) -> None:
        """Open a frame (only the top one with ``only_top_call``)."""
        self.depth = depth
        if self.only_top_call and depth > 0:
            return
        self.stack.append(_OpenFrame(kind, sender, to, value,
                                     self.gas_limit if depth == 0 else gas, data))

    def on_exit(self, depth: int, output: bytes, gas_used: int, error: str | None,
                reverted: bool) -> None:
        """Close the innermost frame into its parent's calls (the top frame: its output)."""
        if depth == 0:
            if len(self.stack) == 1:
                self.stack[0].finish(output, error, reverted)
            return
        self.depth = depth - 1
        if self.only_top_call or len(self.stack) <= 1:
            return
        frame = self.stack.pop()
        frame.gas_used = gas_used
        frame.finish(output, error, reverted)
        self.stack[-1].calls.append(frame.frozen())

    def on_log(self, address: bytes, topics: tuple[bytes, ...], data: bytes, index: int) -> None:
        """With ``with_log``, add the log to the innermost open frame, placed among its calls."""
        if not self.with_log or (self.only_top_call and self.depth > 0) or not self.stack:
            return
        frame = self.stack[-1]
        frame.logs.append(CallLog(address=address, topics=topics, data=data, index=index,
                                  position=len(frame.calls)))

    def on_tx_end(self, gas_used: int, error: str | None) -> None:
        """Give the top frame the transaction's gas used."""
        if self.stack:
            self.stack[0].gas_used = gas_used

    def result(self) -> CallFrame:
        """The top :class:`CallFrame`; ExecutionFailed unless there is one top-level call."""
        if len(self.stack) != 1:
            raise ExecutionFailed("incorrect number of top-level calls")
        top = self.stack[0].frozen()
        return _without_failed_logs(top, False) if self.with_log else top


def _without_failed_logs(frame: CallFrame, parent_failed: bool) -> CallFrame:
    """geth's ``clearFailedLogs``: a reverted frame keeps none of its logs, nor its calls'."""
    failed = parent_failed or (frame.error is not None and frame.reverted)
    calls = tuple(_without_failed_logs(call, failed) for call in frame.calls)
    return replace(frame, calls=calls, logs=() if failed else frame.logs)


# ---------------------------------------------------------------------------------------------
# prestateTracer


class _Account:
    __slots__ = ("balance", "code", "code_hash", "empty", "nonce", "storage")

    def __init__(self, balance: int, nonce: int, code: bytes | None, code_hash: bytes | None,
                 storage: dict[bytes, bytes] | None, empty: bool) -> None:
        self.balance, self.nonce, self.code, self.code_hash = balance, nonce, code, code_hash
        self.storage, self.empty = storage, empty

    def shown(self) -> PrestateAccount:
        return PrestateAccount(balance=self.balance, nonce=self.nonce, code=self.code,
                               code_hash=self.code_hash,
                               storage=dict(sorted(self.storage.items())) if self.storage else None)


class PrestateTracer(ResultTracer):
    """geth's ``prestateTracer``: each account the transaction touches as it was before; with
    ``diff_mode``, only what changed, before and after."""

    wants_steps = True
    wants_stack = True
    wants_memory = True  # (CREATE2's address is the hash of its init code, read from memory)

    def __init__(self, diff_mode: bool = False, disable_code: bool = False,
                 disable_storage: bool = False, include_empty: bool = False) -> None:
        if diff_mode and include_empty:
            raise ExecutionFailed("cannot use diffMode with includeEmpty")
        self.diff_mode, self.disable_code = diff_mode, disable_code
        self.disable_storage, self.include_empty = disable_storage, include_empty
        self.pre: dict[bytes, _Account] = {}
        self.post: dict[bytes, PrestateAccount] = {}
        self.created: set[bytes] = set()
        self.deleted: set[bytes] = set()
        self.env: TxEnv | None = None

    def on_tx_start(self, env: TxEnv) -> None:
        """Note the accounts every transaction touches: its sender, its recipient (or the
        address it creates) and a delegation's target, the coinbase, the authorities."""
        self.env = env
        if env.to is None:
            to = bytes(generate_contract_address(EvmAddress(env.sender), env.nonce(env.sender)))
            self.created.add(to)
        else:
            to = env.to
            if env.prague:
                self._delegation(to)
        self._account(env.sender)
        self._account(to)
        self._account(env.coinbase)
        for authority in env.authorities:
            self._account(authority)

    def _delegation(self, address: bytes) -> None:
        assert self.env is not None
        code = self.env.code(address)
        if len(code) == 23 and code[:3] == b"\xef\x01\x00":
            self._account(code[3:])

    def on_opcode_start(self, step: Step) -> None:
        """Note, before the step runs, the slot or account it names."""
        env, stack = self.env, step.stack
        if env is None or stack is None:
            return
        op, height, caller = step.op, len(stack), step.address
        if height >= 1 and op in (SLOAD, SSTORE):
            self._slot(caller, stack[-1].to_bytes(32, "big"))
        elif height >= 1 and op in (0x3C, 0x3F, 0x3B, 0x31, SELFDESTRUCT):
            self._account(stack[-1].to_bytes(32, "big")[12:])
            if op == SELFDESTRUCT and (not env.cancun or caller in self.created):
                self.deleted.add(caller)
        elif height >= 5 and op in (DELEGATECALL, CALL, STATICCALL, CALLCODE):
            address = stack[-2].to_bytes(32, "big")[12:]
            self._account(address)
            if env.prague:
                self._delegation(address)
        elif op == CREATE:
            address = bytes(generate_contract_address(EvmAddress(caller), env.nonce(caller)))
            self._account(address)
            self.created.add(address)
        elif height >= 4 and op == CREATE2 and step.memory is not None:
            offset, size = stack[-2], stack[-3]
            init = step.memory[offset:offset + size].ljust(size, b"\x00")
            address = bytes(generate_safe_contract_address(EvmAddress(caller), stack[-4], init))
            self._account(address)
            self.created.add(address)


    def _account(self, address: bytes) -> None:
        if address in self.pre:
            return
        env = self.env
        assert env is not None
        code = env.code(address)
        balance, nonce = env.balance(address), env.nonce(address)
        code_hash = env.code_hash(address)
        empty = not (nonce > 0 or code or balance != 0)
        self.pre[address] = _Account(
            balance, nonce, None if self.disable_code or not code else code,
            code_hash if code_hash not in (ZERO_WORD, EMPTY_CODE_HASH) else None,
            None if self.disable_storage else {}, empty)

    def _slot(self, address: bytes, slot: bytes) -> None:
        if self.disable_storage:
            return
        account = self.pre.get(address)
        if account is None or account.storage is None or slot in account.storage:
            return
        assert self.env is not None
        account.storage[slot] = self.env.storage(address, slot)
        if account.storage[slot] != ZERO_WORD:
            account.empty = False

    def on_tx_end(self, gas_used: int, error: str | None) -> None:
        """With ``diff_mode``, keep only what changed; drop empty accounts unless asked."""
        if error is not None:
            return
        if self.diff_mode:
            self._diff()
        if not self.include_empty:
            for address in [a for a, account in self.pre.items() if account.empty]:
                del self.pre[address]

    def _diff(self) -> None:
        env = self.env
        assert env is not None
        for address in list(self.pre):
            if address in self.deleted:
                continue
            before = self.pre[address]
            modified = False
            post: dict[str, Any] = {}
            fields: tuple[tuple[str, object, object], ...] = (
                ("balance", before.balance, env.balance(address)),
                ("nonce", before.nonce, env.nonce(address)),
                ("code_hash", before.code_hash or EMPTY_CODE_HASH, env.code_hash(address)))
            for name, was, after in fields:
                if after != was:
                    modified, post[name] = True, after
            if not self.disable_code:
                code = env.code(address)
                if code != (before.code or b""):
                    modified, post["code"] = True, code
            if not self.disable_storage and before.storage is not None:
                changed: dict[bytes, bytes] = {}
                for slot, value in list(before.storage.items()):
                    now = env.storage(address, slot)
                    if value in (ZERO_WORD, now):
                        del before.storage[slot]
                    if value != now:
                        modified = True
                        if now != ZERO_WORD:
                            changed[slot] = now
                if changed:
                    post["storage"] = dict(sorted(changed.items()))
            if modified:
                self.post[address] = PrestateAccount(**post)
            else:
                del self.pre[address]

    def result(self) -> Prestate | PrestateDiff:
        """The accounts as they were, or with ``diff_mode`` what changed, before and after."""
        pre = {address: account.shown() for address, account in sorted(self.pre.items())}
        if self.diff_mode:
            return PrestateDiff(pre=pre, post=dict(sorted(self.post.items())))
        return Prestate(accounts=pre)


# ---------------------------------------------------------------------------------------------
# The small ones


class FourByteTracer(ResultTracer):
    """geth's ``4byteTracer``: calls counted by selector and argument length."""

    def __init__(self) -> None:
        self.counts: dict[tuple[bytes, int], int] = {}
        self.precompiles: frozenset[bytes] = frozenset()

    def on_tx_start(self, env: TxEnv) -> None:
        """Keep the fork's precompiles (calls to them are not counted)."""
        self.precompiles = env.precompiles

    def on_enter(self, depth: int, kind: int, sender: bytes, to: bytes, data: bytes, gas: int,
                 value: int | None) -> None:
        """Count a call's selector and argument length (not creates, precompiles, short inputs)."""
        if len(data) < 4 or kind not in (CALL, CALLCODE, DELEGATECALL, STATICCALL):
            return
        if to in self.precompiles:
            return
        key = (data[:4], len(data) - 4)
        self.counts[key] = self.counts.get(key, 0) + 1

    def result(self) -> FourBytes:
        """The counts, by selector and argument length (:class:`FourBytes`)."""
        return FourBytes(counts=dict(self.counts))


class NoopTracer(ResultTracer):
    """geth's ``noopTracer``: runs the hooks, answers ``{}``."""

    def result(self) -> NoResult:
        """The empty answer (:class:`NoResult`)."""
        return NoResult()


class FlatCallTracer(ResultTracer):
    """geth's ``flatCallTracer``: callTracer's tree as parity's flat list."""

    def __init__(self, convert_parity_errors: bool = False, include_precompiles: bool = False,
                 context: TraceContext | None = None) -> None:
        self.calls = CallTracer()
        self.convert = convert_parity_errors
        self.include_precompiles = include_precompiles
        self.context = context or TraceContext()
        self.precompiles: frozenset[bytes] = frozenset()

    def on_tx_start(self, env: TxEnv) -> None:
        """Pass to the inner callTracer; keep the fork's precompiles."""
        self.calls.on_tx_start(env)
        self.precompiles = env.precompiles

    def on_enter(self, depth: int, kind: int, sender: bytes, to: bytes, data: bytes, gas: int,
                 value: int | None) -> None:
        """Pass to the inner callTracer; a nested frame with no value shows 0 (as parity does)."""
        self.calls.on_enter(depth, kind, sender, to, data, gas, value)
        if depth and value is None and self.calls.stack[-1].value is None:
            self.calls.stack[-1].value = 0

    def on_exit(self, depth: int, output: bytes, gas_used: int, error: str | None,
                reverted: bool) -> None:
        """Pass to the inner callTracer, then drop a CALL or STATICCALL to a precompile."""
        self.calls.on_exit(depth, output, gas_used, error, reverted)
        if depth == 0 or self.include_precompiles or not self.calls.stack:
            return
        parent = self.calls.stack[-1]
        call = parent.calls[-1]
        if call.type in ("CALL", "STATICCALL") and call.to in self.precompiles:
            parent.calls.pop()

    def on_tx_end(self, gas_used: int, error: str | None) -> None:
        """Pass to the inner callTracer."""
        self.calls.on_tx_end(gas_used, error)

    def result(self) -> FlatCalls:
        """The call tree as parity's flat list (:class:`FlatCalls`), placed by the context."""
        return FlatCalls(calls=tuple(flatten(self.calls.result(), self.context, self.convert)))


@dataclass(frozen=True, slots=True)
class TraceContext:
    """Where the traced transaction stands (geth's ``tracers.Context``), for flat answers."""

    block_hash: bytes | None = None
    block_number: int = 0
    tx_index: int = 0
    tx_hash: bytes | None = None


PARITY_ERRORS = {
    "contract creation code storage out of gas": "Out of gas",
    "out of gas": "Out of gas",
    "gas uint64 overflow": "Out of gas",
    "max code size exceeded": "Out of gas",
    "invalid jump destination": "Bad jump destination",
    "execution reverted": "Reverted",
    "return data out of bounds": "Out of bounds",
    "stack limit reached 1024 (1023)": "Out of stack",
    "precompiled failed": "Built-in failed",
    "invalid input length": "Built-in failed",
}
PARITY_ERROR_PREFIXES = (("out of gas:", "Out of gas"), ("invalid opcode:", "Bad instruction"),
                         ("stack underflow", "Stack underflow"))


def parity_error(error: str) -> str:
    """geth's translation of its error texts into parity's."""
    if error in PARITY_ERRORS:
        return PARITY_ERRORS[error]
    for prefix, text in PARITY_ERROR_PREFIXES:
        if error.startswith(prefix):
            return text
    return error


def flatten(frame: CallFrame, context: TraceContext, convert_errors: bool = False,
            address: tuple[int, ...] = (), *, would_be: bool = False) -> list[FlatCall]:
    """A call tree as parity's flat list. A reverted create has no address in geth's list;
    with ``would_be`` (reth's) it has the address it would have had."""
    kind = frame.type
    error = frame.error
    if error is not None and convert_errors:
        error = parity_error(error)
    has_result = frame.error is None or frame.error == "execution reverted"
    common: dict[str, Any] = dict(
        trace_address=address, subtraces=len(frame.calls), error=error,
        block_hash=context.block_hash, block_number=context.block_number,
        transaction_hash=context.tx_hash, transaction_position=context.tx_index)
    if kind == "SELFDESTRUCT":
        entry = FlatCall(type="suicide", call_type=None, creation_method=None, sender=None, to=None,
                         value=None, gas=None, input=None, gas_used=None, output=None,
                         address=frame.sender, refund_address=frame.to, balance=frame.value,
                         **common)
    else:
        create = kind in ("CREATE", "CREATE2")
        entry = FlatCall(type="create" if create else "call", call_type=None if create else kind.lower(),
                         creation_method=kind.lower() if create else None, sender=frame.sender,
                         to=None if create else frame.to, value=frame.value, gas=frame.gas,
                         input=frame.input, gas_used=frame.gas_used if has_result else None,
                         output=frame.output if has_result else None,
                         address=((frame.created if would_be else frame.to)
                                  if create and has_result else None), **common)
    flat = [entry]
    for index, call in enumerate(frame.calls):
        flat.extend(flatten(call, context, convert_errors, (*address, index), would_be=would_be))
    return flat


class Fanout(Tracer):
    """Tracers run together on one transaction, each hook passed to every member in order."""

    def __init__(self, members: Sequence[Tracer]) -> None:
        self.members = list(members)
        self.wants_steps = any(t.wants_steps for t in members)
        self.wants_stack = any(t.wants_stack for t in members)
        self.wants_memory = any(t.wants_memory for t in members)
        self._stepping = [t for t in members if t.wants_steps]

    def on_tx_start(self, env: TxEnv) -> None:
        """Pass to every member."""
        for tracer in self.members:
            tracer.on_tx_start(env)

    def on_enter(self, depth: int, kind: int, sender: bytes, to: bytes, data: bytes, gas: int,
                 value: int | None) -> None:
        """Pass to every member."""
        for tracer in self.members:
            tracer.on_enter(depth, kind, sender, to, data, gas, value)

    def on_exit(self, depth: int, output: bytes, gas_used: int, error: str | None,
                reverted: bool) -> None:
        """Pass to every member."""
        for tracer in self.members:
            tracer.on_exit(depth, output, gas_used, error, reverted)

    def on_opcode_start(self, step: Step) -> None:
        """Pass to the members that want steps."""
        for tracer in self._stepping:
            tracer.on_opcode_start(step)

    def on_opcode(self, step: Step) -> None:
        """Pass to the members that want steps."""
        for tracer in self._stepping:
            tracer.on_opcode(step)

    def on_log(self, address: bytes, topics: tuple[bytes, ...], data: bytes, index: int) -> None:
        """Pass to every member."""
        for tracer in self.members:
            tracer.on_log(address, topics, data, index)

    def on_tx_end(self, gas_used: int, error: str | None) -> None:
        """Pass to every member."""
        for tracer in self.members:
            tracer.on_tx_end(gas_used, error)


class MuxTracer(Fanout, ResultTracer):
    """geth's ``muxTracer``: several tracers on one run, each answer under its name."""

    def __init__(self, tracers: Mapping[str, ResultTracer]) -> None:
        self.tracers = dict(tracers)
        super().__init__(list(self.tracers.values()))

    def result(self) -> MuxResult:
        """Each tracer's answer under its name (:class:`MuxResult`)."""
        return MuxResult(results={name: tracer.result() for name, tracer in self.tracers.items()})


# ---------------------------------------------------------------------------------------------
# Choosing a tracer


class UnknownTracer(ExecutionFailed):
    """A tracer name geth's directory does not hold (geth would run it as JavaScript)."""


_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")


def _flags(config: Mapping[str, Any] | None, known: tuple[str, ...]) -> list[bool]:
    """A native tracer's boolean options, in the order of ``known`` (False when not given),
    refused in Go's words when not booleans."""
    values = dict.fromkeys(known, False)
    for key, value in (config or {}).items():
        if key in values:
            if not isinstance(value, bool):
                raise ExecutionFailed(f"json: cannot unmarshal {go_json_type(value)} into Go struct "
                                      f"field .{key} of type bool")
            values[key] = value
    return list(values.values())


NATIVE_TRACERS = ("callTracer", "prestateTracer", "4byteTracer", "noopTracer", "flatCallTracer",
                  "muxTracer")


def make_tracer(name: str | None, config: Mapping[str, Any] | None = None,
                logger: LoggerConfig = LoggerConfig(),
                context: TraceContext | None = None) -> ResultTracer:
    """The tracer geth's directory makes for ``name`` (None: the opcode logger)."""
    if name is None:
        return StructLogger(logger)
    if name == "callTracer":
        return CallTracer(*_flags(config, ("onlyTopCall", "withLog")))
    if name == "prestateTracer":
        return PrestateTracer(*_flags(config, ("diffMode", "disableCode", "disableStorage",
                                               "includeEmpty")))
    if name == "4byteTracer":
        return FourByteTracer()
    if name == "noopTracer":
        return NoopTracer()
    if name == "flatCallTracer":
        convert, precompiles = _flags(config, ("convertParityErrors", "includePrecompiles"))
        return FlatCallTracer(convert, precompiles, context)
    if name == "muxTracer":
        members: dict[str, ResultTracer] = {}
        for member, member_config in (config or {}).items():
            if member_config is not None and not isinstance(member_config, dict):
                raise ExecutionFailed(f"json: cannot unmarshal {go_json_type(member_config)} into Go "
                                      "value of type map[string]json.RawMessage")
            members[member] = make_tracer(member, member_config, logger, context)
        return MuxTracer(members)
    if _IDENTIFIER.match(name.strip()):
        # geth evaluates an unknown name as JavaScript: a bare name is an unbound variable
        raise UnknownTracer(f"ReferenceError: {name.strip()} is not defined at <eval>:1:1(0)")
    raise UnknownTracer("JavaScript tracers are not supported by ethread; use one of "
                        + ", ".join(NATIVE_TRACERS))
