"""The parity-style ``trace_`` namespace as reth answers it, built on the call tree of geth's
``flatCallTracer``: flat call lists (``trace_transaction``, ``trace_block``, ``trace_get``,
``trace_filter``; a proof-of-work block adds its ``reward`` entries after its calls), and
replays with ``trace``, ``stateDiff`` and ``vmTrace`` (:mod:`.vm_trace`)
(``trace_replayTransaction``, ``trace_replayBlockTransactions``, ``trace_call``).

Unlike geth's ``flatCallTracer``, as reth's parity builder: the top call's ``gas`` is what
the transaction had left after its intrinsic gas and its ``gasUsed`` what its frame used
(before refunds); errors are parity's words (``Reverted``, ``Out of gas``); calls to
precompiles are left out (anvil keeps them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ...backend import Deadline
from ...errors import ExecutionFailed, InvalidParams, LimitExceeded
from ...evm.hooks import TxEnv
from ...models import (
    AccessListTransaction,
    Block,
    BlockOverrides,
    BlockRef,
    CallRequest,
    Hash32,
    LegacyTransaction,
    StateOverride,
)
from ..transactions import get_transaction_by_hash
from .models import CallFrame, FlatCall, NoResult
from .replay import (
    DEFAULT_TRACE_TIMEOUT,
    NotTraceable,
    TraceableChain,
    TraceOptions,
    block_by_ref,
    replay_block_with,
    trace_call,
    trace_calls,
    trace_transaction,
)
from .states import ReplayStates
from .tracers import (
    CallTracer,
    Fanout,
    FlatCallTracer,
    PrestateTracer,
    ResultTracer,
    TraceContext,
    flatten,
)
from .vm_trace import VmTrace, VmTracer

TraceType = Literal["trace", "stateDiff", "vmTrace"]
TRACE_TYPES: tuple[TraceType, ...] = ("trace", "stateDiff", "vmTrace")

MAX_FILTER_BLOCKS = 100
"""The most blocks one ``trace_filter`` may span (reth's default ``max_trace_filter_blocks``)."""
MAX_FILTER_RESULTS = 10_000
"""The most traces one ``trace_filter`` answers: a larger ``count``, or more matches without
one, is refused (-32005), as eth_getLogs refuses past its bound."""


# ---------------------------------------------------------------------------------------------
# Typed answers


@dataclass(frozen=True, slots=True, kw_only=True)
class RewardTrace:
    """A proof-of-work block's reward, as parity lists it after the block's calls."""

    author: bytes
    reward_type: str
    """``block`` (the miner's, with its uncle-inclusion bonus) or ``uncle``."""
    value: int
    block_hash: bytes
    block_number: int


ParityTrace = FlatCall | RewardTrace


@dataclass(frozen=True, slots=True)
class Delta:
    """How one field of an account changed: ``=`` unchanged, ``+`` added (``after``), ``-``
    removed (``before``), ``*`` changed from ``before`` to ``after``."""

    kind: Literal["=", "+", "-", "*"]
    before: int | bytes | None = None
    after: int | bytes | None = None


UNCHANGED = Delta("=")


@dataclass(frozen=True, slots=True, kw_only=True)
class AccountDiff:
    """What a transaction changed in one account (parity's ``stateDiff`` entry)."""

    balance: Delta = UNCHANGED
    nonce: Delta = UNCHANGED
    code: Delta = UNCHANGED
    storage: Mapping[bytes, Delta] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayResult:
    """A replayed transaction or call: its output and the traces asked for (None: not asked)."""

    output: bytes
    trace: tuple[FlatCall, ...] | None
    state_diff: Mapping[bytes, AccountDiff] | None
    vm_trace: VmTrace | None = None
    tx_hash: bytes | None = None
    """Set for each transaction of ``trace_replayBlockTransactions``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceFilter:
    """``trace_filter``'s parameters: a block range, addresses, and a window of the answer."""

    from_block: BlockRef = "latest"
    to_block: BlockRef = "latest"
    from_addresses: frozenset[bytes] = frozenset()
    to_addresses: frozenset[bytes] = frozenset()
    mode: Literal["union", "intersection"] = "union"
    after: int = 0
    count: int | None = None


# ---------------------------------------------------------------------------------------------
# The tracer


class _ParityCalls(CallTracer):
    """callTracer with the top frame's gas as parity has it (after EIP-3860's init code charge)."""

    initcode_cost = 0

    def on_enter(self, depth: int, kind: int, sender: bytes, to: bytes, data: bytes, gas: int,
                 value: int | None) -> None:
        super().on_enter(depth, kind, sender, to, data, gas, value)
        if depth == 0 and self.stack:
            self.stack[0].gas = gas - self.initcode_cost

    def on_exit(self, depth: int, output: bytes, gas_used: int, error: str | None,
                reverted: bool) -> None:
        if depth == 0 and len(self.stack) == 1:
            self.stack[0].gas_used = gas_used - self.initcode_cost
        super().on_exit(depth, output, gas_used, error, reverted)

    def on_tx_end(self, gas_used: int, error: str | None) -> None:
        pass


class ParityTracer(Fanout, ResultTracer):
    """Collects what ``trace_*`` answers: the trace, state diff, vmTrace and output."""

    def __init__(self, context: TraceContext, trace: bool = True, state_diff: bool = False,
                 vm_trace: bool = False) -> None:
        self.flat = FlatCallTracer(convert_parity_errors=True, context=context)
        self.flat.calls = _ParityCalls()
        self.want_trace = trace
        self.touched = PrestateTracer(include_empty=True) if state_diff else None
        self.vm = VmTracer() if vm_trace else None
        super().__init__([t for t in (self.flat, self.touched, self.vm) if t is not None])
        self.output = b""
        self.env: TxEnv | None = None
        self.diff: dict[bytes, AccountDiff] | None = None

    def on_tx_start(self, env: TxEnv) -> None:
        """Start the call tree (init code words as intrinsic gas) and the touched accounts."""
        self.env = env
        if env.to is None and _charges_initcode(env.state.computation_class):
            assert isinstance(self.flat.calls, _ParityCalls)
            self.flat.calls.initcode_cost = 2 * ((len(env.data) + 31) // 32)
        super().on_tx_start(env)

    def on_exit(self, depth: int, output: bytes, gas_used: int, error: str | None,
                reverted: bool) -> None:
        """A frame ends: the transaction's own gives the output."""
        if depth == 0:
            self.output = output if error is None or reverted else b""
        super().on_exit(depth, output, gas_used, error, reverted)

    def on_tx_end(self, gas_used: int, error: str | None) -> None:
        """The transaction ended: what changed, compared with before; each frame's code."""
        super().on_tx_end(gas_used, error)
        if self.touched is not None and error is None:
            self.diff = _state_diff(self.touched)

    def calls(self) -> tuple[FlatCall, ...]:
        """The flat list, parity's errors, precompile calls left out."""
        top: CallFrame = self.flat.calls.result()
        return tuple(flatten(top, self.flat.context, True, would_be=True))

    def result(self) -> NoResult:
        """Nothing: a parity trace's answer is :meth:`replay`."""
        return NoResult()

    def replay(self) -> ReplayResult:
        """The output and the traces asked for, once the transaction has ended."""
        return ReplayResult(output=self.output, trace=self.calls() if self.want_trace else None,
                            state_diff=self.diff,
                            vm_trace=self.vm.result_trace() if self.vm is not None else None)


def _charges_initcode(computation_class: Any) -> bool:
    """Whether the fork charges for init code words (Shanghai on)."""
    from eth.vm.computation import BaseComputation

    own = getattr(computation_class.consume_initcode_gas_cost, "__func__", None)
    return own is not getattr(BaseComputation.consume_initcode_gas_cost, "__func__", None)


def _state_diff(touched: PrestateTracer) -> dict[bytes, AccountDiff]:
    """Each touched account's changes, as reth reports them: an account made by this
    transaction is all ``+``, any other ``*`` or ``=`` field by field; one made and destroyed
    in it, or unchanged, is left out."""
    env = touched.env
    assert env is not None
    diff: dict[bytes, AccountDiff] = {}
    for address in sorted(touched.pre):
        before = touched.pre[address]
        created = (address in touched.created and before.nonce == 0 and not before.code
                   and env.nonce(address) > 0)
        if created and address in touched.deleted:
            continue
        balance, nonce, code = env.balance(address), env.nonce(address), env.code(address)
        old_code = before.code or b""
        slots = {slot: (value, env.storage(address, slot))
                 for slot, value in sorted((before.storage or {}).items())}
        changed_slots = {slot: pair for slot, pair in slots.items() if pair[0] != pair[1]}
        if created and before.balance == 0:
            diff[address] = AccountDiff(
                balance=Delta("+", after=balance), nonce=Delta("+", after=nonce),
                code=Delta("+", after=code),
                storage={slot: Delta("+", after=now) for slot, (_, now) in changed_slots.items()})
            continue
        if (not changed_slots and balance == before.balance and nonce == before.nonce
                and code == old_code):
            continue
        diff[address] = AccountDiff(
            balance=_changed(before.balance, balance), nonce=_changed(before.nonce, nonce),
            code=_changed(old_code, code),
            storage={slot: Delta("*", old, now) for slot, (old, now) in changed_slots.items()})
    return diff


def _changed(before: Any, after: Any) -> Delta:
    return UNCHANGED if before == after else Delta("*", before, after)


def _types(trace_types: Iterable[str]) -> tuple[bool, bool, bool]:
    """(trace, stateDiff, vmTrace) from a ``traceTypes`` list."""
    wanted = set(trace_types)
    return "trace" in wanted, "stateDiff" in wanted, "vmTrace" in wanted


# ---------------------------------------------------------------------------------------------
# Methods


def transaction_traces(backend: TraceableChain, tx_hash: Hash32,
                       timeout: float = DEFAULT_TRACE_TIMEOUT,
                       states: ReplayStates | None = None) -> tuple[FlatCall, ...] | None:
    """trace_transaction: the transaction's calls; None for one the chain does not hold."""
    found = get_transaction_by_hash(backend, tx_hash)
    if found is None:
        return None
    tracer = ParityTracer(TraceContext(found.block_hash, found.block_number, found.index, tx_hash))
    trace_transaction(backend, tx_hash, TraceOptions(timeout=timeout), tracer=tracer,
                      states=states)
    return tracer.calls()


def _rewards(backend: TraceableChain, block: Block) -> tuple[RewardTrace, ...]:
    """A proof-of-work block's rewards: the miner's (with 1/32 more per uncle) and each
    uncle's ((8 + uncle - block) / 8 of the block reward)."""
    header = block.header
    if header.difficulty == 0 or header.number == 0:
        return ()
    config = backend.chain_config()
    if config is None:
        return ()
    base = int(config.vm_class(header.number, header.timestamp).get_block_reward())
    if base == 0:
        return ()
    rewards = [RewardTrace(author=header.coinbase, reward_type="block",
                           value=base + base // 32 * len(block.uncles), block_hash=block.hash,
                           block_number=header.number)]
    for uncle in block.uncles:
        rewards.append(RewardTrace(author=uncle.coinbase, reward_type="uncle",
                                   value=(8 + uncle.number - header.number) * base // 8,
                                   block_hash=block.hash, block_number=header.number))
    return tuple(rewards)


def block_traces(backend: TraceableChain, block: Block, timeout: float = DEFAULT_TRACE_TIMEOUT,
                 deadline: Deadline | None = None) -> tuple[ParityTrace, ...]:
    """trace_block: every transaction's calls in order, then the block's rewards."""
    if block.header.number == 0:
        return ()
    traces: list[ParityTrace] = []
    for tracer in _replayed(backend, block, timeout, deadline, trace=True, state_diff=False):
        traces.extend(tracer.calls())
    traces.extend(_rewards(backend, block))
    return tuple(traces)


def _replayed(backend: TraceableChain, block: Block, timeout: float, deadline: Deadline | None,
              *, trace: bool, state_diff: bool, vm_trace: bool = False) -> list[ParityTracer]:
    tracers = []

    def make(index: int, tx_hash: bytes) -> ParityTracer:
        if deadline is not None and deadline.expired():
            raise ExecutionFailed("execution timeout")
        tracer = ParityTracer(TraceContext(block.hash, block.header.number, index, tx_hash),
                              trace, state_diff, vm_trace)
        tracers.append(tracer)
        return tracer

    replay_block_with(backend, block, make, timeout)
    return tracers


def trace_at(backend: TraceableChain, tx_hash: Hash32, indices: tuple[int, ...],
             timeout: float = DEFAULT_TRACE_TIMEOUT,
             states: ReplayStates | None = None) -> FlatCall | None:
    """trace_get: the trace at a position of the flat list (reth takes exactly one index)."""
    if len(indices) != 1:
        return None
    traces = transaction_traces(backend, tx_hash, timeout, states)
    if traces is None or indices[0] >= len(traces):
        return None
    return traces[indices[0]]


def _matches(entry: ParityTrace, query: TraceFilter) -> bool:
    sender: bytes | None
    receiver: bytes | None
    if isinstance(entry, RewardTrace):
        sender, receiver = None, entry.author
    elif entry.type == "suicide":
        sender, receiver = entry.address, entry.refund_address
    elif entry.type == "create":
        sender, receiver = entry.sender, entry.address
    else:
        sender, receiver = entry.sender, entry.to
    checks = []
    if query.from_addresses:
        checks.append(sender in query.from_addresses)
    if query.to_addresses:
        checks.append(receiver in query.to_addresses)
    if not checks:
        return True
    return any(checks) if query.mode == "union" else all(checks)


def filter_traces(backend: TraceableChain, query: TraceFilter,
                  timeout: float = DEFAULT_TRACE_TIMEOUT,
                  deadline: Deadline | None = None) -> tuple[ParityTrace, ...]:
    """trace_filter: the traces of at most :data:`MAX_FILTER_BLOCKS` blocks whose sender or
    recipient is among the addresses (``union``: either list matching; ``intersection``: each
    given one), ``after`` skipped and ``count`` kept."""
    from ..resolve import require_header

    def number(ref: BlockRef) -> int:
        return ref if isinstance(ref, int) else require_header(backend, ref).number

    start, end = number(query.from_block), number(query.to_block)
    if start > end:
        raise InvalidParams("invalid parameters: fromBlock cannot be greater than toBlock")
    if end - start + 1 > MAX_FILTER_BLOCKS:
        raise InvalidParams(f"block range too large, currently limited to {MAX_FILTER_BLOCKS} blocks")
    if query.count is not None and query.count > MAX_FILTER_RESULTS:
        raise LimitExceeded(f"count too large, currently limited to {MAX_FILTER_RESULTS} traces")
    wanted = MAX_FILTER_RESULTS if query.count is None else query.count
    found: list[ParityTrace] = []
    skipped = 0
    for height in range(start, end + 1):
        block = block_by_ref(backend, height)
        for entry in block_traces(backend, block, timeout, deadline):
            if not _matches(entry, query):
                continue
            if skipped < query.after:
                skipped += 1
                continue
            if len(found) == wanted:
                if query.count is None:
                    raise LimitExceeded(f"query returned more than {MAX_FILTER_RESULTS} traces; "
                                        "narrow the range or set count")
                return tuple(found)
            found.append(entry)
    return tuple(found)


def replay_transaction(backend: TraceableChain, tx_hash: Hash32, trace_types: Iterable[str],
                       timeout: float = DEFAULT_TRACE_TIMEOUT,
                       states: ReplayStates | None = None) -> ReplayResult:
    """trace_replayTransaction: the transaction replayed, with the traces asked for."""
    location = backend.transaction_location(tx_hash)
    if location is None:
        raise NotTraceable("transaction not found")
    tracer = ParityTracer(TraceContext(location[0], 0, location[1], tx_hash), *_types(trace_types))
    trace_transaction(backend, tx_hash, TraceOptions(timeout=timeout), tracer=tracer,
                      states=states)
    return _unlocated(tracer.replay())


def _unlocated(result: ReplayResult) -> ReplayResult:
    """A replay's traces carry no block or transaction (parity leaves them out there)."""
    if result.trace is None:
        return result
    return replace(result, trace=tuple(replace(t, block_hash=None, transaction_hash=None)
                                       for t in result.trace))


def replay_block(backend: TraceableChain, block: Block, trace_types: Iterable[str],
                 timeout: float = DEFAULT_TRACE_TIMEOUT,
                 deadline: Deadline | None = None) -> tuple[ReplayResult, ...]:
    """trace_replayBlockTransactions: each transaction of the block replayed in turn."""
    trace, state_diff, vm_trace = _types(trace_types)
    if block.header.number == 0:
        return ()
    tracers = _replayed(backend, block, timeout, deadline, trace=trace, state_diff=state_diff,
                        vm_trace=vm_trace)
    return tuple(replace(_unlocated(tracer.replay()), tx_hash=tx.hash)
                 for tracer, tx in zip(tracers, block.transactions, strict=True))


def call_many_traces(backend: TraceableChain,
                     calls: Sequence[tuple[CallRequest, Iterable[str]]],
                     block: BlockRef = "latest", *,
                     timeout: float = DEFAULT_TRACE_TIMEOUT,
                     states: ReplayStates | None = None) -> tuple[ReplayResult, ...]:
    """trace_callMany: each call run on the state the calls before it left, as reth runs them."""
    tracers = [ParityTracer(TraceContext(), *_types(types)) for _, types in calls]
    trace_calls(backend, [(request, tracer) for (request, _), tracer in zip(calls, tracers,
                                                                            strict=True)],
                block, TraceOptions(timeout=timeout), states=states)
    return tuple(_unlocated(tracer.replay()) for tracer in tracers)


def raw_transaction_traces(backend: TraceableChain, raw: bytes, trace_types: Iterable[str],
                           block: BlockRef = "latest", *,
                           timeout: float = DEFAULT_TRACE_TIMEOUT,
                           states: ReplayStates | None = None) -> ReplayResult:
    """trace_rawTransaction: a signed transaction run on the block's state as the call it makes."""
    return call_traces(backend, signed_request(raw), trace_types, block, timeout=timeout,
                       states=states)


def signed_request(raw: bytes) -> CallRequest:
    """The call a signed transaction makes, its sender recovered (InvalidParams if none)."""
    import rlp

    from ...rlpcodec.senders import recover_senders
    from ...rlpcodec.transactions import decode_transaction

    try:
        item = rlp.decode(raw) if raw[:1] >= b"\xc0" else raw
        tx, _ = decode_transaction(item, raw if isinstance(item, list) else None)
        sender = recover_senders(rlp.encode([[item], []]))[0]
    except Exception as exc:  # (rlp's, the codec's and the signature's errors alike)
        raise InvalidParams(f"invalid transaction: {exc}") from None
    fees: dict[str, Any]
    if isinstance(tx, LegacyTransaction | AccessListTransaction):
        fees = dict(gas_price=tx.gas_price)
    else:
        fees = dict(max_fee_per_gas=tx.max_fee_per_gas,
                    max_priority_fee_per_gas=tx.max_priority_fee_per_gas)
    return CallRequest(sender=sender, to=tx.to, gas=tx.gas, value=tx.value, data=tx.data,
                       nonce=tx.nonce, access_list=getattr(tx, "access_list", None),
                       max_fee_per_blob_gas=getattr(tx, "max_fee_per_blob_gas", None),
                       blob_versioned_hashes=getattr(tx, "blob_versioned_hashes", None),
                       authorization_list=getattr(tx, "authorization_list", None), **fees)


def call_traces(backend: TraceableChain, request: CallRequest, trace_types: Iterable[str],
                block: BlockRef = "latest", *, state_override: StateOverride = (),
                block_overrides: BlockOverrides | None = None,
                timeout: float = DEFAULT_TRACE_TIMEOUT,
                states: ReplayStates | None = None) -> ReplayResult:
    """trace_call: the call run as a transaction with eth_call's defaults and overrides."""
    tracer = ParityTracer(TraceContext(), *_types(trace_types))
    trace_call(backend, request, block, TraceOptions(timeout=timeout),
               state_override=state_override, block_overrides=block_overrides, tracer=tracer,
               states=states)
    return _unlocated(tracer.replay())


__all__ = [
    "MAX_FILTER_BLOCKS", "MAX_FILTER_RESULTS", "TRACE_TYPES", "AccountDiff", "Delta", "ParityTrace",
    "ParityTracer", "ReplayResult", "RewardTrace", "TraceFilter", "TraceType", "block_traces",
    "call_many_traces", "call_traces", "filter_traces", "raw_transaction_traces", "replay_block",
    "replay_transaction", "signed_request", "trace_at", "transaction_traces",
]
