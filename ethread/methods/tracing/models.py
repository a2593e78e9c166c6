"""What the tracers answer, as typed values (their JSON forms are geth's, written where the
debug_trace* methods are answered)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True, kw_only=True)
class StructLog:
    """One step of the default opcode logger, as geth 1.17 prints it."""

    pc: int
    op: str
    """geth's name of the opcode."""
    gas: int
    """Gas left before the step."""
    gas_cost: int
    depth: int
    error: str | None = None
    stack: tuple[int, ...] | None = None
    """The stack before the step, bottom first (None: ``disableStack``)."""
    return_data: bytes | None = None
    """The last call's output (only with ``enableReturnData``; None or empty: not shown)."""
    memory: bytes | None = None
    """The memory before the step (only with ``enableMemory``)."""
    storage: Mapping[bytes, bytes] | None = None
    """On SLOAD and SSTORE: the slots of the account this frame has read or written so far."""
    refund: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class StructLogResult:
    """The opcode logger's answer."""

    gas: int
    """Gas the transaction used (its receipt's)."""
    failed: bool
    return_value: bytes
    struct_logs: tuple[StructLog, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CallLog:
    """A log a call frame wrote (callTracer ``withLog``)."""

    address: bytes
    topics: tuple[bytes, ...]
    data: bytes
    index: int
    """The log's index in the block."""
    position: int
    """How many sub-calls of the frame came before it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CallFrame:
    """One frame of callTracer's tree."""

    type: str
    """CALL, STATICCALL, DELEGATECALL, CALLCODE, CREATE, CREATE2 or SELFDESTRUCT."""
    sender: bytes
    to: bytes | None
    """None for a create that failed."""
    value: int | None
    """None for STATICCALL."""
    gas: int
    gas_used: int
    input: bytes
    output: bytes = b""
    error: str | None = None
    revert_reason: str | None = None
    calls: tuple[CallFrame, ...] = ()
    logs: tuple[CallLog, ...] = ()
    reverted: bool = field(default=False, compare=False)
    """Whether the frame's changes were undone (its logs then dropped with ``withLog``)."""
    created: bytes | None = field(default=None, compare=False)
    """A create's address, even when the create failed (``to`` is then None, as geth has
    it; reth's parity traces give this one)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PrestateAccount:
    """An account as prestateTracer shows it; None (or 0 for the nonce) leaves a field out."""

    balance: int | None = None
    nonce: int = 0
    code: bytes | None = None
    code_hash: bytes | None = None
    storage: Mapping[bytes, bytes] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Prestate:
    """prestateTracer without ``diffMode``: every account touched, before the transaction."""

    accounts: Mapping[bytes, PrestateAccount]


@dataclass(frozen=True, slots=True, kw_only=True)
class PrestateDiff:
    """prestateTracer with ``diffMode``: what changed, before and after."""

    pre: Mapping[bytes, PrestateAccount]
    post: Mapping[bytes, PrestateAccount]


@dataclass(frozen=True, slots=True, kw_only=True)
class FourBytes:
    """4byteTracer: how often each (selector, argument length) was called."""

    counts: Mapping[tuple[bytes, int], int]


@dataclass(frozen=True, slots=True, kw_only=True)
class NoResult:
    """noopTracer's empty answer."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FlatCall:
    """One entry of flatCallTracer's list (and of the parity-style ``trace_`` answers)."""

    type: str
    """call, create or suicide."""
    call_type: str | None
    """call, staticcall, delegatecall, callcode (calls only)."""
    creation_method: str | None
    """create or create2 (creates only)."""
    sender: bytes | None
    to: bytes | None
    value: int | None
    gas: int | None
    input: bytes | None
    """A call's input, or a create's init code."""
    trace_address: tuple[int, ...]
    subtraces: int
    error: str | None
    gas_used: int | None
    """None: the entry has no result (it failed, other than by reverting)."""
    output: bytes | None
    """A call's output, or the code a create deployed."""
    address: bytes | None
    """The created contract; for a self-destruct, the destroyed account."""
    refund_address: bytes | None = None
    balance: int | None = None
    block_hash: bytes | None = None
    block_number: int = 0
    transaction_hash: bytes | None = None
    transaction_position: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class FlatCalls:
    """flatCallTracer's answer."""

    calls: tuple[FlatCall, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class MuxResult:
    """muxTracer's answer: each tracer's, by its name."""

    results: Mapping[str, TraceResult]


TraceResult = (StructLogResult | CallFrame | Prestate | PrestateDiff | FourBytes | NoResult
               | FlatCalls | MuxResult)


@dataclass(frozen=True, slots=True, kw_only=True)
class TransactionTrace:
    """One transaction of a traced block: its hash and its trace, or why it has none."""

    tx_hash: bytes
    result: TraceResult | None = None
    error: str | None = None
