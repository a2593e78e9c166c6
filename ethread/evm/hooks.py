"""The one hook point of the EVM, in the shape of geth's ``core/tracing`` hooks.

A :class:`Tracer` only collects (the debug and parity tracers, eth_simulateV1's logs and
transfers). py-evm has no tracer interface, so a traced run swaps in a computation class
derived from the fork's own (:func:`hooked_class`) that reports frames, logs, SELFDESTRUCT
and, when asked, each step as geth's ``OnOpcode`` sees it. The tracer in use is thread-local
(:func:`attached`), so the hooked classes are made once per fork's class and shared.
What needs a few opcodes alone watches them (:func:`watched_class`): the time limit, an access
list's notes, a gas estimate's notes.

What geth reports and py-evm computes differently is reconciled here, once, for every tracer:

- geth reports a step before running it, with its full cost (fixed, dynamic, memory and, for
  the CALL family, the gas handed to the callee; not CREATE's); py-evm charges as it goes. A
  step is therefore reported when its cost is known: when its opcode returns, or when it
  enters a nested frame (the gas charged by then, less a create's handed-on gas).
- geth checks the stack before charging anything and reports stack and gas failures on the
  failing step (``error``); failures while an opcode runs (a revert, a bad jump) are not on
  the step. Both kinds are told apart here by py-evm's exception.
- error texts are geth's (``execution reverted``, ``out of gas``, ``stack underflow (0 <=>
  2)``, ``invalid opcode: INVALID``, ...).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, TypeVar

from eth._utils.address import generate_contract_address, generate_safe_contract_address
from eth.exceptions import (
    FullStack,
    Halt,
    InsufficientStack,
    InvalidInstruction,
    InvalidJumpDestination,
    OutOfBoundsRead,
    OutOfGas,
    ReservedBytesInCode,
    Revert,
    StackDepthLimit,
    VMError,
    WriteProtection,
)
from eth.vm.logic.invalid import InvalidOpcode
from eth_typing import Address

from .classes import made, start_computation, subclass, wrapped_opcodes

_T = TypeVar("_T")

CREATE, CALL, CALLCODE, DELEGATECALL, CREATE2, STATICCALL = 0xF0, 0xF1, 0xF2, 0xF4, 0xF5, 0xFA
SELFDESTRUCT, SLOAD, SSTORE = 0xFF, 0x54, 0x55
NESTING_OPCODES = frozenset({CREATE, CALL, CALLCODE, DELEGATECALL, CREATE2, STATICCALL})
STACK_LIMIT = 1024


def _names() -> list[str]:
    """geth's opcode names by value ('' where geth names none)."""
    names = [""] * 256
    plain = {
        0x00: "STOP ADD MUL SUB DIV SDIV MOD SMOD ADDMOD MULMOD EXP SIGNEXTEND",
        0x10: "LT GT SLT SGT EQ ISZERO AND OR XOR NOT BYTE SHL SHR SAR CLZ",
        0x20: "KECCAK256",
        0x30: ("ADDRESS BALANCE ORIGIN CALLER CALLVALUE CALLDATALOAD CALLDATASIZE CALLDATACOPY "
               "CODESIZE CODECOPY GASPRICE EXTCODESIZE EXTCODECOPY RETURNDATASIZE RETURNDATACOPY "
               "EXTCODEHASH"),
        0x40: ("BLOCKHASH COINBASE TIMESTAMP NUMBER DIFFICULTY GASLIMIT CHAINID SELFBALANCE BASEFEE "
               "BLOBHASH BLOBBASEFEE"),
        0x50: "POP MLOAD MSTORE MSTORE8 SLOAD SSTORE JUMP JUMPI PC MSIZE GAS JUMPDEST TLOAD TSTORE MCOPY PUSH0",
        0xA0: "LOG0 LOG1 LOG2 LOG3 LOG4",
        0xD0: "DATALOAD DATALOADN DATASIZE DATACOPY",
        0xE0: "RJUMP RJUMPI RJUMPV CALLF RETF JUMPF DUPN SWAPN EXCHANGE",
        0xF0: "CREATE CALL CALLCODE RETURN DELEGATECALL CREATE2",
    }
    for start, words in plain.items():
        for offset, name in enumerate(words.split()):
            names[start + offset] = name
    for n in range(1, 33):
        names[0x5F + n] = f"PUSH{n}"
    for n in range(1, 17):
        names[0x7F + n] = f"DUP{n}"
        names[0x8F + n] = f"SWAP{n}"
    extra = {0xEC: "EOFCREATE", 0xEE: "RETURNCONTRACT", 0xF7: "RETURNDATALOAD", 0xF8: "EXTCALL",
             0xF9: "EXTDELEGATECALL", 0xFA: "STATICCALL", 0xFB: "EXTSTATICCALL", 0xFD: "REVERT",
             0xFE: "INVALID", 0xFF: "SELFDESTRUCT"}
    for value, name in extra.items():
        names[value] = name
    return names


_NAMES = _names()


def opcode_name(value: int) -> str:
    """geth's name of an opcode (``opcode 0xc not defined`` for a value it has none for)."""
    return _NAMES[value] or f"opcode {value:#x} not defined"


def _stack_effects() -> list[tuple[int, int]]:
    """(items taken, items left) of each opcode, for geth's stack checks before a step."""
    effects = [(0, 0)] * 256
    table = {
        (2, 1): [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0A, 0x0B, 0x10, 0x11, 0x12, 0x13,
                 0x14, 0x16, 0x17, 0x18, 0x1A, 0x1B, 0x1C, 0x1D, 0x20],
        (3, 1): [0x08, 0x09, CREATE],
        (1, 1): [0x15, 0x19, 0x1E, 0x31, 0x35, 0x3B, 0x3F, 0x40, 0x49, 0x51, SLOAD, 0x5C],
        (0, 1): [0x30, 0x32, 0x33, 0x34, 0x36, 0x38, 0x3A, 0x3D, 0x41, 0x42, 0x43, 0x44, 0x45,
                 0x46, 0x47, 0x48, 0x4A, 0x58, 0x59, 0x5A, *range(0x5F, 0x80)],
        (3, 0): [0x37, 0x39, 0x3E, 0x5E],
        (4, 0): [0x3C],
        (1, 0): [0x50, 0x56, SELFDESTRUCT],
        (2, 0): [0x52, 0x53, SSTORE, 0x57, 0x5D, 0xF3, 0xFD],
        (7, 1): [CALL, CALLCODE],
        (6, 1): [DELEGATECALL, STATICCALL],
        (4, 1): [CREATE2],
    }
    for effect, values in table.items():
        for value in values:
            effects[value] = effect
    for n in range(1, 17):
        effects[0x7F + n] = (n, n + 1)
        effects[0x8F + n] = (n + 1, n + 1)
    for n in range(5):
        effects[0xA0 + n] = (n + 2, 0)
    return effects


_STACK_EFFECTS = _stack_effects()


# -- what tracers are told -------------------------------------------------------------------


@dataclass(slots=True)
class TxEnv:
    """What a tracer may read when a transaction (or a traced call) starts."""

    state: Any
    sender: bytes
    to: bytes | None
    """The callee, None for a contract creation."""
    gas_limit: int
    value: int
    data: bytes
    coinbase: bytes
    block_number: int
    timestamp: int
    cancun: bool
    prague: bool
    precompiles: frozenset[bytes] = frozenset()
    """The addresses of the fork's precompiles."""
    authorities: tuple[bytes, ...] = ()
    log_index: int = 0
    """The block-wide index the transaction's first log gets."""

    def balance(self, address: bytes) -> int:
        """The account's balance now."""
        return int(self.state.get_balance(address))

    def nonce(self, address: bytes) -> int:
        """The account's nonce now."""
        return int(self.state.get_nonce(address))

    def code(self, address: bytes) -> bytes:
        """The account's code now."""
        return bytes(self.state.get_code(address))

    def code_hash(self, address: bytes) -> bytes:
        """The account's code hash now (py-evm's: keccak of empty code for a missing one)."""
        return bytes(self.state.get_code_hash(address))

    def storage(self, address: bytes, slot: bytes) -> bytes:
        """A storage slot's value now, as 32 bytes."""
        value = self.state.get_storage(address, int.from_bytes(slot, "big"))
        return int(value).to_bytes(32, "big")


@dataclass(slots=True)
class Step:
    """One opcode as geth's ``OnOpcode`` reports it: before it runs, with its full cost."""

    pc: int
    op: int
    gas: int
    """Gas left before the step."""
    depth: int
    """1 for the transaction's own frame, as geth counts."""
    stack: list[int] | None
    """The stack before the step, bottom first (None: the tracer did not ask for it)."""
    memory: bytes | None
    """The memory before the step (None: not asked for)."""
    return_data: bytes
    address: bytes
    """The account whose storage the frame works on."""
    cost: int = 0
    refund: int = 0
    """The transaction's refund counter after the step's gas was charged."""
    error: str | None = None
    """Set when the step failed before running (geth's stack and gas checks)."""


class Tracer:
    """Every hook a tracer may implement (each does nothing here). ``wants_steps`` asks for
    ``on_opcode`` (slower); ``wants_stack`` and ``wants_memory`` for them on each step."""

    wants_steps: bool = False
    wants_stack: bool = False
    wants_memory: bool = False

    def on_tx_start(self, env: TxEnv) -> None:
        """Before the transaction buys its gas."""

    def on_enter(self, depth: int, kind: int, sender: bytes, to: bytes, data: bytes, gas: int,
                 value: int | None) -> None:
        """A frame starts: the transaction's own (depth 0), a nested call or create, a
        precompile, or a SELFDESTRUCT's transfer. ``kind`` is the opcode that made it."""

    def on_exit(self, depth: int, output: bytes, gas_used: int, error: str | None,
                reverted: bool) -> None:
        """The frame entered last at ``depth`` ends."""

    def on_opcode_start(self, step: Step) -> None:
        """A step about to run, its cost not known yet (only with ``wants_steps``)."""

    def on_opcode(self, step: Step) -> None:
        """One step, with its cost, once that is known (only with ``wants_steps``)."""

    def on_transfer(self, sender: bytes, recipient: bytes, value: int) -> None:
        """Ether moves: the value of the frame just entered (a call's, not a CALLCODE's or
        DELEGATECALL's; a create's), or a self-destruct's balance to its beneficiary (in the
        frame its ``on_enter`` opened). ``recipient`` is the account credited (a delegated
        account itself, not its code's)."""

    def on_log(self, address: bytes, topics: tuple[bytes, ...], data: bytes, index: int) -> None:
        """A LOG opcode wrote a log, ``index`` its block-wide index as geth numbers it."""

    def on_tx_end(self, gas_used: int, error: str | None) -> None:
        """The transaction ended: its receipt's gas (after refunds), or why it could not run."""


SENTRY_TEXT = "out of gas: not enough gas for reentrancy sentry"
"""geth's error when an SSTORE runs with 2,300 gas or less left (EIP-2200): its gas function's
error wrapped in ``ErrOutOfGas`` (core/vm/interpreter.go), on the step and on the frame."""


def out_of_gas_text(error: BaseException) -> str:
    """geth's text for running out of gas on a step: :data:`SENTRY_TEXT` or ``out of gas``."""
    return SENTRY_TEXT if "always fails below 2300 gas" in str(error) else "out of gas"


_ERROR_TEXTS = (
    (InvalidJumpDestination, "invalid jump destination"), (WriteProtection, "write protection"),
    (OutOfBoundsRead, "return data out of bounds"),
    (ReservedBytesInCode, "invalid code: must not begin with 0xef"),
    (StackDepthLimit, "max call depth exceeded"), (InsufficientStack, "stack underflow"),
    (FullStack, f"stack limit reached {STACK_LIMIT}"),
)


def vm_error_text(error: BaseException, op: int | None = None) -> str:
    """geth's text for a py-evm execution error."""
    if isinstance(error, Revert):
        return "execution reverted"
    if isinstance(error, InvalidInstruction):
        found = re.search(r"0x([0-9a-fA-F]+)", str(error))
        value = int(found.group(1), 16) if found else (op if op is not None else 0xFE)
        return f"invalid opcode: {opcode_name(value)}"
    for kind, text in _ERROR_TEXTS:
        if isinstance(error, kind):
            return text
    if isinstance(error, OutOfGas):
        text = str(error)
        if "EIP170" in text or "code size" in text.lower():
            return "max code size exceeded"
        if "Write contract code" in text:  # (py-evm's reason when a create's code is stored)
            return "contract creation code storage out of gas"
        return out_of_gas_text(error)
    return str(error) or type(error).__name__


# -- the hooked computation classes -----------------------------------------------------------


@dataclass(slots=True)
class _Session:
    """The state of one traced transaction on this thread."""

    tracer: Tracer
    log_index: int = 0
    frames: list[Any] = field(default_factory=list)
    """The computations running, outermost first (their refunds make the counter)."""
    log_marks: list[int] = field(default_factory=list)
    """The log index when each running frame started (a failed frame's logs are undone)."""
    pending: Step | None = None
    refund: int = 0
    """The refund counter as last summed (see :func:`_flush`)."""
    refund_stale: bool = True
    """Whether a frame has ended since (its refund joins its parent's, or is dropped)."""
    entered: int = 0
    """How many frames have started (a CALL or CREATE that started none was refused)."""


class Slot(threading.local, Generic[_T]):
    """A value each thread holds for a run (None outside one), read by opcode watchers."""

    value: _T | None = None

    @contextmanager
    def holding(self, value: _T) -> Iterator[_T]:
        """``value`` held here inside the block, what was held before restored after it."""
        outer, self.value = self.value, value
        try:
            yield value
        finally:
            self.value = outer


_active: Slot[_Session] = Slot()


@contextmanager
def attached(tracer: Tracer, log_index: int = 0) -> Iterator[None]:
    """Report to ``tracer`` what the hooked classes run on this thread inside the block."""
    with _active.holding(_Session(tracer, log_index)):
        yield


def _word(value: Any) -> int:
    return value if value.__class__ is int else int.from_bytes(value, "big")


def _refund(session: _Session) -> int:
    return sum(frame.get_gas_refund() for frame in session.frames)


def _flush(session: _Session, cost: int, error: str | None = None) -> None:
    """Report the pending step with its cost (the refund summed again only after SSTORE or a frame's end)."""
    step = session.pending
    if step is None:
        return
    session.pending = None
    step.cost = cost
    step.error = error
    if step.op == SSTORE or session.refund_stale:
        session.refund = _refund(session)
        session.refund_stale = False
    step.refund = session.refund
    session.tracer.on_opcode(step)


def _frame_kind(message: Any, parent: Any) -> int:
    if parent is None:
        return CREATE if message.is_create else CALL
    code = parent.code
    position = code.program_counter - 1
    raw = code._raw_code_bytes
    if 0 <= position < len(raw) and raw[position] in NESTING_OPCODES:
        return int(raw[position])
    return CREATE if message.is_create else CALL


def _enter(session: _Session, message: Any, parent: Any) -> int:
    """Report a frame's start; the depth it has."""
    kind = _frame_kind(message, parent)
    pending = session.pending
    if pending is not None and parent is not None:
        charged = pending.gas - parent._gas_meter.gas_remaining
        if kind in (CREATE, CREATE2):  # (geth leaves the handed-on gas out of a create's cost)
            charged -= message.gas
        _flush(session, charged)
    if message.is_create:
        sender, to, data = message.sender, message.storage_address, message.code
    else:
        sender = message.sender if parent is None else parent.msg.storage_address
        to, data = message.code_address, message.data
    value = None if kind == STATICCALL else int(message.value)
    depth = int(message.depth)
    session.entered += 1
    session.log_marks.append(session.log_index)
    tracer = session.tracer
    tracer.on_enter(depth, kind, bytes(sender), bytes(to), bytes(data), int(message.gas), value)
    if value and kind in (CALL, CREATE, CREATE2):
        tracer.on_transfer(bytes(message.sender), bytes(message.storage_address), value)
    return depth


def _exit(session: _Session, depth: int, message: Any, computation: Any) -> None:
    mark = session.log_marks.pop()
    error = None
    if computation.is_error:
        error = vm_error_text(computation.error)
        session.log_index = mark  # (geth's journal takes a failed frame's logs back)
    gas_used = int(message.gas) - int(computation.get_gas_remaining())
    session.tracer.on_exit(depth, bytes(computation.output), gas_used, error, error is not None)


WATCHED = "watched_by"
"""The attribute of an opcode :func:`watched_class` wraps: (the function it calls first, the opcode)."""


def watched_class(computation_class: type, watchers: tuple[tuple[int, Watcher], ...],
                  on_message: Watcher | None = None, prefix: str = "Watched") -> type:
    """``computation_class`` with ``watchers`` run before their opcodes and ``on_message`` per
    message (made once per class and watchers: pass module functions)."""
    return made(_watched_class, computation_class, watchers, on_message, prefix)  # type: ignore[no-any-return]


Watcher = Callable[[Any], None]


def _watched_class(base: Any, watchers: tuple[tuple[int, Watcher], ...],
                   on_message: Watcher | None, prefix: str) -> Any:
    opcodes = wrapped_opcodes(base.opcodes, {value: partial(_watching, before=before)
                                             for value, before in watchers})
    namespace: dict[str, Any] = {"opcodes": opcodes}
    if on_message is not None:
        def apply_computation(cls: Any, state: Any, message: Any, transaction_context: Any,
                              parent_computation: Any = None) -> Any:
            on_message(message)
            return base.apply_computation.__func__(cls, state, message, transaction_context,
                                                   parent_computation)

        namespace["apply_computation"] = classmethod(apply_computation)
    return subclass(base, namespace, f"{prefix}{base.__name__}")


def _watching(opcode: Any, before: Watcher) -> Any:
    def run(computation: Any) -> None:
        before(computation)
        opcode(computation=computation)

    setattr(run, WATCHED, (before, opcode))
    return _standing_for(opcode, run)


def _standing_for(opcode: Any, run: Any) -> Any:
    """``run``, marked as the wrapper of ``opcode`` (its ``__wrapped__`` and mnemonic)."""
    run.__wrapped__ = opcode
    run.mnemonic = getattr(opcode, "mnemonic", "")
    return run


def _wrap_selfdestruct(opcode: Any) -> Any:
    def run(computation: Any) -> None:
        session = _active.value
        if session is None:
            opcode(computation=computation)
            return
        values = computation._stack.values
        beneficiary = (_word(values[-1]).to_bytes(32, "big")[12:] if values else b"\x00" * 20)
        address = bytes(computation.msg.storage_address)
        balance = int(computation.state.get_balance(address))
        try:
            opcode(computation=computation)
        except Halt:
            _report_selfdestruct(session, computation, address, beneficiary, balance)
            raise
        _report_selfdestruct(session, computation, address, beneficiary, balance)

    return _standing_for(opcode, run)


class _MeterWatch:
    """The amounts a computation's gas meter charges and gives back while one opcode runs."""

    def __init__(self, meter: Any) -> None:
        self.meter = meter
        self.consumed: list[int] = []
        self.returned: list[int] = []
        kind = type(meter)

        def consume(amount: int, reason: str) -> None:
            self.consumed.append(amount)
            kind.consume_gas(meter, amount, reason)

        def give_back(amount: int) -> None:
            self.returned.append(amount)
            kind.return_gas(meter, amount)

        meter.consume_gas, meter.return_gas = consume, give_back

    def close(self) -> None:
        del self.meter.consume_gas, self.meter.return_gas


def _refusal(computation: Any, value: int) -> str:
    """Why a CALL or CREATE started no frame (geth's checks, in its order), short of a collision."""
    if int(computation.msg.depth) + 1 > STACK_DEPTH:
        return "max call depth exceeded"
    if value and int(computation.state.get_balance(computation.msg.storage_address)) < value:
        return "insufficient balance for transfer"
    return ""


STACK_DEPTH = 1024
_WORD = 1 << 256


def _memory(computation: Any, start: int, size: int) -> bytes:
    if not size:
        return b""
    data = bytes(computation._memory._bytes[start:start + size])
    return data.ljust(size, b"\x00")


def _wrap_nesting(op: int) -> Any:
    """The CALL and CREATE family reporting, as geth does, a frame entered and left with the
    error for a call or create py-evm refuses (balance, depth) or a create whose address is
    taken (``contract address collision``, all its gas used)."""
    taken = _STACK_EFFECTS[op][0]
    creates = op in (CREATE, CREATE2)
    refused = _refused_create if creates else _refused_call

    def wrap(opcode: Any) -> Any:
        def run(computation: Any) -> None:
            session = _active.value
            values = computation._stack.values
            if session is None or len(values) < taken:
                opcode(computation=computation)
                return
            words = [_word(v) for v in values[-taken:]][::-1]  # (top first)
            nonce = int(computation.state.get_nonce(computation.msg.storage_address)) if creates else 0
            entered = session.entered
            meter = computation._gas_meter
            watch = _MeterWatch(meter)
            try:
                opcode(computation=computation)
            finally:
                watch.close()
            frame = None if session.entered != entered else refused(op, computation, words,
                                                                    watch, nonce)
            if frame is None:
                return
            extra, sender, to, data, gas, value, used, error = frame
            step = session.pending
            if step is not None:
                _flush(session, step.gas - meter.gas_remaining + extra)
            depth = int(computation.msg.depth) + 1
            session.tracer.on_enter(depth, op, sender, to, data, gas, value)
            session.tracer.on_exit(depth, b"", used, error, True)

        return _standing_for(opcode, run)

    return wrap


Refused = tuple[int, bytes, bytes, bytes, int, "int | None", int, str]
"""A refused frame: the step's cost beyond the gas charged by then, the frame's sender,
callee, input, gas and value, the gas it used, and geth's error."""


def _refused_call(op: int, computation: Any, words: list[int], watch: _MeterWatch,
                  nonce: int) -> Refused | None:
    if not watch.returned:
        return None
    to = (words[1] % _WORD).to_bytes(32, "big")[12:]
    if op in (CALL, CALLCODE):
        value: int | None = words[2]
        start, size, moved = words[3], words[4], words[2]
    else:
        value = None if op == STATICCALL else int(computation.msg.value)
        start, size, moved = words[2], words[3], 0
    error = _refusal(computation, moved)
    if not error:
        return None
    handed = watch.returned[-1]
    return (handed, bytes(computation.msg.storage_address), to, _memory(computation, start, size),
            handed, value, 0, error)


def _refused_create(op: int, computation: Any, words: list[int], watch: _MeterWatch,
                    nonce: int) -> Refused | None:
    value, start, size = words[0], words[1], words[2]
    meter = computation._gas_meter
    error = _refusal(computation, value)
    if error:
        gas, used = meter.gas_remaining - meter.gas_remaining // 64, 0
    elif len(watch.consumed) >= 2 and nonce + 1 <= 0xFFFFFFFFFFFFFFFF:
        error, gas = "contract address collision", watch.consumed[-1]
        used = gas
    else:
        return None
    sender = Address(bytes(computation.msg.storage_address))
    init = _memory(computation, start, size)
    address = (generate_contract_address(sender, nonce) if op == CREATE
               else generate_safe_contract_address(sender, words[3], init))
    return -used, sender, address, init, gas, value, used, error


def _report_selfdestruct(session: _Session, computation: Any, address: bytes, beneficiary: bytes,
                         balance: int) -> None:
    step = session.pending
    if step is not None:
        _flush(session, step.gas - computation._gas_meter.gas_remaining)
    depth = int(computation.msg.depth) + 1
    tracer = session.tracer
    tracer.on_enter(depth, SELFDESTRUCT, address, beneficiary, b"", 0, balance)
    if balance:
        tracer.on_transfer(address, beneficiary, balance)
    tracer.on_exit(depth, b"", 0, None, False)


def _fixed_cost(opcode: Any) -> int:
    while not hasattr(opcode, "gas_cost") and hasattr(opcode, "__wrapped__"):
        opcode = opcode.__wrapped__
    return int(getattr(opcode, "gas_cost", 0))


_NEEDED = re.compile(r"Needed (\d+)")


class _Hooks:
    """Put before a fork's computation class by :func:`hooked_class`."""

    def add_log_entry(self, account: Any, topics: tuple[int, ...], data: bytes) -> None:
        base: Any = super()
        base.add_log_entry(account, topics, data)
        session = _active.value
        if session is not None:
            index = session.log_index
            session.log_index += 1
            session.tracer.on_log(bytes(account), tuple(t.to_bytes(32, "big") for t in topics),
                                  bytes(data), index)

    @classmethod
    def apply_message(cls, state: Any, message: Any, transaction_context: Any,
                      parent_computation: Any = None) -> Any:
        base: Any = super()
        # (a create's own entry point, below, reports it)
        return _as_frame(base.apply_message, state, message, transaction_context,
                         parent_computation, skip=message.is_create)

    @classmethod
    def apply_create_message(cls, state: Any, message: Any, transaction_context: Any,
                             parent_computation: Any = None) -> Any:
        base: Any = super()
        return _as_frame(base.apply_create_message, state, message, transaction_context,
                         parent_computation)

    @classmethod
    def apply_computation(cls, state: Any, message: Any, transaction_context: Any,
                          parent_computation: Any = None) -> Any:
        base: Any = super()
        session = _active.value
        if session is None or not session.tracer.wants_steps:
            return base.apply_computation(state, message, transaction_context, parent_computation)
        return _stepping_computation(cls, session, state, message, transaction_context,
                                     parent_computation)


def _as_frame(apply: Any, state: Any, message: Any, transaction_context: Any,
              parent_computation: Any, skip: bool = False) -> Any:
    """py-evm's ``apply`` of ``message``, reported to the active tracer (unless ``skip``)."""
    session = _active.value
    if session is None or skip:
        return apply(state, message, transaction_context, parent_computation)
    depth = _enter(session, message, parent_computation)
    computation = apply(state, message, transaction_context, parent_computation)
    _exit(session, depth, message, computation)
    return computation


def _stepping_computation(cls: Any, session: _Session, state: Any, message: Any,
                          transaction_context: Any, parent_computation: Any) -> Any:
    """py-evm's ``apply_computation``, each opcode reported as a :class:`Step`."""
    tracer = session.tracer
    want_stack, want_memory = tracer.wants_stack, tracer.wants_memory
    on_start = (tracer.on_opcode_start
                if type(tracer).on_opcode_start is not Tracer.on_opcode_start else None)
    with cls(state, message, transaction_context) as computation:
        if start_computation(cls, computation, message, parent_computation):
            return computation
        session.frames.append(computation)
        try:
            opcodes = computation.opcodes
            meter = computation._gas_meter
            code = computation.code
            raw = code._raw_code_bytes
            length = len(raw)
            values = computation._stack.values
            depth = int(message.depth) + 1
            address = bytes(message.storage_address)
            while length:  # (geth runs nothing, and reports no step, for empty code)
                pc = code.program_counter
                if pc < length:
                    op = raw[pc]
                    code.program_counter = pc + 1
                else:
                    op = 0
                opcode = opcodes.get(op)
                gas = meter.gas_remaining
                session.pending = step = Step(
                    pc, op, gas, depth,
                    [v if v.__class__ is int else int.from_bytes(v, "big") for v in values]
                    if want_stack else None,
                    bytes(computation._memory._bytes) if want_memory else None,
                    bytes(computation.return_data), address)
                if opcode is None:
                    opcode = InvalidOpcode(op)
                else:
                    taken, left = _STACK_EFFECTS[op]
                    height = len(values)
                    if height < taken:
                        _flush(session, _fixed_cost(opcode), f"stack underflow ({height} <=> {taken})")
                        raise InsufficientStack(f"stack underflow ({height} <=> {taken})")
                    if height - taken + left > STACK_LIMIT:
                        limit = STACK_LIMIT + taken - left
                        _flush(session, _fixed_cost(opcode), f"stack limit reached {height} ({limit})")
                        raise FullStack("Stack limit reached")
                if on_start is not None:
                    on_start(step)
                try:
                    opcode(computation=computation)
                except Halt:
                    if session.pending is step:
                        _flush(session, gas - meter.gas_remaining)
                    break
                except OutOfGas as exc:
                    if session.pending is step:
                        needed = _NEEDED.search(str(exc))
                        cost = gas - meter.gas_remaining + (int(needed.group(1)) if needed else 0)
                        _flush(session, cost, out_of_gas_text(exc))
                    raise
                except VMError:
                    if session.pending is step:
                        _flush(session, gas - meter.gas_remaining)
                    raise
                if session.pending is step:
                    _flush(session, gas - meter.gas_remaining)
                if pc >= length:
                    break
        finally:
            session.pending = None
            session.frames.pop()
            session.refund_stale = True
    return computation


def hooked_class(computation_class: type, refusals: bool = True) -> type:
    """``computation_class`` (a fork's own) with the hooks: made once per class. Without
    ``refusals`` the CALL and CREATE family run unwrapped, so a call or create py-evm refuses
    reports no frame (for a tracer that would drop it unseen)."""
    return made(_hooked_class, computation_class, refusals)  # type: ignore[no-any-return]


def _hooked_class(base: Any, refusals: bool) -> Any:
    nesting = {op: _wrap_nesting(op) for op in NESTING_OPCODES} if refusals else {}
    opcodes = wrapped_opcodes(base.opcodes, {SELFDESTRUCT: _wrap_selfdestruct, **nesting})
    return subclass(base, {"opcodes": opcodes}, f"Traced{base.__name__}", mixins=(_Hooks,))
