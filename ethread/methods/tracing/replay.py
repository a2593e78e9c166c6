"""Running what a trace asks for, with a tracer attached: a block's transactions replayed on
its parent's state (``debug_traceTransaction``, ``debug_traceBlock*``), or a call on a block's
state (``debug_traceCall``), the way geth's ``eth/tracers/api.go`` runs them.

A block is replayed as import executes it (its fork's VM, its system calls first); the
transactions before the traced one run untraced, each traced one under the hooks
(:mod:`.hooks`) and its own time limit (geth's 5 s by default, then ``execution timeout``).
The VM is :func:`~..overlay_trie.simulation_vm_class`'s; a tracer that wants steps runs on
py-evm's own loop of the fork (``tests/support/plain_replay.py`` replays on py-evm's own
classes for comparison). A dispatcher keeps the blocks it replayed
(:class:`~.states.ReplayStates`), so that tracing another transaction of a block starts from
the state right before it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import rlp
from eth.consensus.context import ConsensusContext
from eth.db.atomic import AtomicDB
from eth.db.chain import ChainDB
from eth.vm.chain_context import ChainContext
from eth.vm.spoof import SpoofTransaction
from eth_typing import Address as EvmAddress
from eth_typing import Hash32 as EvmHash
from eth_utils import ValidationError

from ...backend import BlockSource, ReceiptSource, TransactionLocator
from ...errors import ExecutionAborted, ExecutionFailed, StateUnavailable
from ...evm import time_limit
from ...evm.block_vm import after_system_writes, vm_at
from ...evm.hooks import TxEnv, attached, hooked_class
from ...evm.lean_interpreter import MessageTables, plain_computation_class, share_tables
from ...evm.senders import with_sender
from ...models import Block, BlockHashRef, BlockOverrides, BlockRef, CallRequest, Hash32, StateOverride
from ...rlpcodec.headers import encode_header
from ...rlpcodec.transactions import encode_transaction
from ..message import ExecutableChain, Rejected, chain_config, gas_for, prepare
from ..overlay_trie import simulation_vm_class
from ..resolve import require_header
from .models import TraceResult, TransactionTrace
from .states import BlockReplay, LazyTransactions, Overlay, ReplayStates
from .tracers import LoggerConfig, ResultTracer, TraceContext, make_tracer

DEFAULT_TRACE_TIMEOUT = 5.0
"""geth's ``defaultTraceTimeout``: how long one transaction's trace may run."""

class TraceableChain(ExecutableChain, BlockSource, TransactionLocator, ReceiptSource, Protocol):
    """What tracing reads: blocks and where transactions are, headers, state, fork rules."""


@dataclass(frozen=True, slots=True)
class TraceOptions:
    """A trace request's configuration (geth's ``TraceConfig``)."""

    tracer: str | None = None
    """A native tracer's name; None: the opcode logger."""
    tracer_config: dict[str, Any] | None = field(default=None, compare=False)
    logger: LoggerConfig = field(default_factory=LoggerConfig)
    timeout: float = DEFAULT_TRACE_TIMEOUT
    """Seconds each transaction's trace may run."""


class NotTraceable(ExecutionFailed):
    """A block or transaction geth will not trace (the genesis, one it does not know)."""


def _tracer(options: TraceOptions, context: TraceContext) -> ResultTracer:
    return make_tracer(options.tracer, options.tracer_config, options.logger, context)


@contextmanager
def _traced(state: Any, tracer: ResultTracer, limit: time_limit.TimeLimit,
            log_index: int = 0, block_classes: bool = True) -> Iterator[None]:
    """Run on ``state`` with ``tracer`` attached and ``limit`` applied."""
    original = state.computation_class
    lean = block_classes and not tracer.wants_steps
    state.computation_class = hooked_class(original if lean else plain_computation_class(original))
    try:
        with attached(tracer, log_index), limit.applied(state):
            yield
    except ExecutionAborted:
        raise ExecutionFailed("execution timeout") from None
    finally:
        state.computation_class = original


def _env(vm: Any, state: Any, sender: bytes, to: bytes | None, gas: int, value: int, data: bytes,
         log_index: int, authorities: tuple[bytes, ...] = ()) -> TxEnv:
    context = state.execution_context
    computation_class: Any = plain_computation_class(state.computation_class)
    precompiles = frozenset(bytes(a) for a in computation_class.get_precompiles())
    return TxEnv(state=state, sender=sender, to=to, gas_limit=gas, value=value, data=data,
                 coinbase=bytes(context.coinbase), block_number=int(context.block_number),
                 timestamp=int(context.timestamp),
                 cancun=hasattr(state, "transient_storage"),
                 prague=hasattr(vm, "block_postprocessing")
                 and type(vm).block_postprocessing is not _base_postprocessing(),
                 precompiles=precompiles, authorities=authorities, log_index=log_index)


def _base_postprocessing() -> Any:
    from eth.vm.base import VM

    return VM.block_postprocessing


# ---------------------------------------------------------------------------------------------
# Blocks


def _replay(backend: TraceableChain, block: Block, keep: bool = False,
            shared: ReplayStates | None = None) -> BlockReplay:
    """A block ready to replay on its parent's state, its system calls done."""
    config, chaindb = _replayable(backend, block)
    return _replay_from_models(backend, block, config, chaindb, keep, shared)


def _replayable(backend: TraceableChain, block: Block) -> tuple[Any, Any]:
    """The chain's configuration and py-evm database, for a block that can be replayed."""
    if block.header.number == 0:
        raise NotTraceable("genesis is not traceable")
    config = chain_config(backend)
    return config, backend.evm_database()


def _replay_decoded(evm_block: Any, parent: Any, block_hash: bytes, senders: dict[bytes, bytes],
                    chain_id: int, vm_class: Any, chaindb: Any) -> BlockReplay:
    """The replay of a decoded block on ``vm_class``."""
    transactions = [_with_sender(tx, senders.get(bytes(tx.hash))) for tx in evm_block.transactions]
    start = evm_block.header.copy(state_root=parent.state_root, gas_used=0)
    return _start(evm_block, start, block_hash, transactions, chain_id, vm_class, chaindb, False)


def _replay_from_models(backend: TraceableChain, block: Block, config: Any, chaindb: Any,
                        keep: bool, shared: ReplayStates | None = None) -> BlockReplay:
    """:func:`_replay` from the block's models, each transaction decoded when reached."""
    header = block.header
    parent = backend.header_by_hash(header.parent_hash)
    if parent is None:
        raise StateUnavailable(f"no state for block {header.number - 1}")
    vm_class = config.vm_class(header.number, header.timestamp)
    kept = shared.headers.get((vm_class, block.hash)) if shared is not None else None
    if kept is None:
        header_sedes = dict(vm_class.get_block_class()._meta.fields)["header"]
        start = rlp.decode(encode_header(replace(header, state_root=parent.state_root,
                                                 gas_used=0)), sedes=header_sedes)
        if shared is not None:
            shared.headers.put((vm_class, block.hash), start)
    else:
        start = kept
    builder = vm_class.get_transaction_builder()
    indexed = block.transactions
    decoded = shared.transactions if shared is not None else None

    def decode(index: int) -> Any:
        itx = indexed[index]
        key = (builder, itx.hash)
        if decoded is not None:
            found = decoded.get(key)
            if found is not None:
                return found
        tx = _with_sender(builder.decode(encode_transaction(itx.transaction)), itx.sender)
        if decoded is not None:
            decoded.put(key, tx)
        return tx

    replay = _start(_BlockView(start), start, block.hash,
                    LazyTransactions(len(indexed), decode), config.chain_id,
                    simulation_vm_class(vm_class), chaindb, keep,
                    shared.tables if shared is not None else None)
    replay.receipts = False  # (a block of the chain: its receipts are known, none is read)
    return replay


@dataclass(frozen=True, slots=True)
class _BlockView:
    """What py-evm's ``block_preprocessing`` reads of a block: its header and number."""

    header: Any

    @property
    def number(self) -> int:
        return int(self.header.block_number)


def _start(block: Any, start: Any, block_hash: bytes, transactions: Sequence[Any], chain_id: int,
           vm_class: Any, chaindb: Any, keep: bool,
           tables: MessageTables | None = None) -> BlockReplay:
    """The replay of ``block`` from py-evm's header ``start``, its system calls done."""
    overlay = None
    if keep or tables is not None:  # (the positions' states, the system writes' nodes)
        overlay = Overlay(chaindb.db)
        chaindb = ChainDB(AtomicDB(overlay))
    after = (_after_system_writes(block, start, chain_id, vm_class, chaindb, tables)
             if tables is not None else None)
    vm = vm_at(vm_class, start if after is None else after, chaindb, chain_id)
    if tables is not None:
        share_tables(vm, tables)
    if after is None:
        vm.block_preprocessing(block)
    header = vm.get_header()
    if header.gas_used:
        header = header.copy(gas_used=0)
    return BlockReplay(vm, header, transactions, block_hash, int(start.block_number),
                       overlay=overlay if keep else None)


def _after_system_writes(block: Any, start: Any, chain_id: int, vm_class: Any, chaindb: Any,
                         tables: MessageTables) -> Any | None:
    """py-evm's header ``start`` at the state after the block's system calls."""

    def write(recording: Any) -> Any:
        vm = vm_class(header=start, chaindb=recording, chain_context=ChainContext(chain_id),
                      consensus_context=ConsensusContext(chaindb.db))
        share_tables(vm, tables)
        vm.block_preprocessing(block)
        vm.state.persist()
        return start.copy(state_root=vm.state.state_root)

    return after_system_writes(tables, (vm_class, rlp.encode(start), None), chaindb.db, write)


def _with_sender(tx: Any, sender: bytes | None) -> Any:
    """The transaction answering the sender the chain recorded for it (no recovery again)."""
    return tx if sender is None else with_sender(tx, sender)


def _trace_next(replay: BlockReplay, options: TraceOptions, tx_hash: bytes,
                tracer: ResultTracer | None = None) -> TraceResult:
    """Trace the replay's next transaction (with ``tracer``, or the one ``options`` names)."""
    index = replay.applied
    tx = replay.transactions[index]
    vm, state = replay.vm, replay.vm.state
    if tracer is None:
        tracer = _tracer(options, TraceContext(replay.block_hash, replay.number, index, tx_hash))
    to = bytes(tx.to) if tx.to else None
    authorities = tuple(a for a in map(_authority, _authorizations(tx)) if a is not None)
    env = _env(vm, state, bytes(tx.sender), to, int(tx.gas), int(tx.value), bytes(tx.data),
               replay.logs, authorities)
    with _traced(state, tracer, time_limit.TimeLimit.start(options.timeout), replay.logs):
        tracer.on_tx_start(env)
        used, _ = replay.apply_next()
        tracer.on_tx_end(used, None)
    return tracer.result()


def _authorizations(tx: Any) -> list[Any]:
    try:
        return list(tx.authorization_list or ())
    except NotImplementedError:  # (py-evm's transactions before Prague)
        return []


def _authority(authorization: Any) -> bytes | None:
    try:
        return bytes(authorization.authority)
    except Exception:  # (an authorization whose signature recovers nothing is skipped)
        return None


def trace_transaction(backend: TraceableChain, tx_hash: Hash32,
                      options: TraceOptions = TraceOptions(), *,
                      tracer: ResultTracer | None = None,
                      states: ReplayStates | None = None) -> TraceResult:
    """debug_traceTransaction: the transaction replayed on its block's state before it."""
    location = backend.transaction_location(tx_hash)
    if location is None:
        raise NotTraceable("transaction not found")
    block = backend.block_by_hash(location[0])
    if block is None:
        raise NotTraceable("transaction not found")
    replay = states.take(block.hash) if states is not None else None
    if replay is None or not replay.seek(location[1]):
        replay = _replay(backend, block, states is not None, states)
        replay.seek(location[1])
    result = _trace_next(replay, options, tx_hash, tracer)
    if states is not None:
        states.give(replay)
    return result


def trace_block(backend: TraceableChain, block: Block,
                options: TraceOptions = TraceOptions()) -> tuple[TransactionTrace, ...]:
    """debug_traceBlockByNumber/ByHash: every transaction of ``block``, traced in turn."""
    replay = _replay(backend, block)
    return tuple(TransactionTrace(tx_hash=itx.hash, result=_trace_next(replay, options, itx.hash))
                 for itx in block.transactions)


def replay_block_with(backend: TraceableChain, block: Block,
                      make: Callable[[int, bytes], ResultTracer],
                      timeout: float = DEFAULT_TRACE_TIMEOUT) -> None:
    """Replay every transaction of ``block``, each traced by ``make(index, hash)``'s tracer."""
    replay = _replay(backend, block)
    options = TraceOptions(timeout=timeout)
    for index, itx in enumerate(block.transactions):
        _trace_next(replay, options, itx.hash, make(index, itx.hash))


def intermediate_roots(backend: TraceableChain, block_hash: Hash32) -> tuple[bytes, ...]:
    """debug_intermediateRoots: the state root after each transaction of the block (as
    geth's, without the block's withdrawals and end-of-block system calls)."""
    block = backend.block_by_hash(block_hash)
    if block is None:
        raise NotTraceable(f"block {'0x' + block_hash.hex()} not found")
    replay = _replay(backend, block)
    roots = []
    for _ in block.transactions:
        replay.apply_next()
        roots.append(bytes(replay.vm.state.make_state_root()))
    return tuple(roots)


def block_by_ref(backend: TraceableChain, ref: BlockRef) -> Block:
    """The block a number, tag or hash names, in geth's words when there is none."""
    if isinstance(ref, BlockHashRef):
        block = backend.block_by_hash(ref.hash)
        if block is None:
            raise NotTraceable(f"block {'0x' + ref.hash.hex()} not found")
        return block
    header = require_header(backend, ref)
    found = backend.block_by_hash(header.hash)
    if found is None:
        raise NotTraceable(f"block #{header.number} not found")
    return found


def trace_raw_block(backend: TraceableChain, raw: bytes,
                    options: TraceOptions = TraceOptions()) -> tuple[TransactionTrace, ...]:
    """debug_traceBlock: a block given as RLP (it need not be in the chain), replayed."""
    try:
        fields = rlp.decode(raw)[0]
        number = int.from_bytes(fields[8], "big")
        timestamp = int.from_bytes(fields[11], "big")
        parent_hash = bytes(fields[0])
    except Exception as exc:
        raise ExecutionFailed(f"could not decode block: {exc}") from None
    if number == 0:
        raise NotTraceable("genesis is not traceable")
    if backend.header_by_hash(parent_hash) is None:
        raise NotTraceable(f"parent {'0x' + parent_hash.hex()} not found")
    config = chain_config(backend)
    chaindb = backend.evm_database()
    vm_class = config.vm_class(number, timestamp)
    try:
        evm_block = rlp.decode(raw, sedes=vm_class.get_block_class())
        evm_parent = chaindb.get_block_header_by_hash(EvmHash(parent_hash))
    except Exception as exc:
        raise ExecutionFailed(f"could not decode block: {exc}") from None
    replay = _replay_decoded(evm_block, evm_parent, bytes(evm_block.header.hash), {},
                             config.chain_id, simulation_vm_class(vm_class), chaindb)
    hashes = [bytes(tx.hash) for tx in replay.transactions]
    return tuple(TransactionTrace(tx_hash=h, result=_trace_next(replay, options, h))
                 for h in hashes)


# ---------------------------------------------------------------------------------------------
# Calls


def trace_call(backend: TraceableChain, request: CallRequest, block: BlockRef,
               options: TraceOptions = TraceOptions(), *, state_override: StateOverride = (),
               block_overrides: BlockOverrides | None = None,
               tx_index: int | None = None, tracer: ResultTracer | None = None,
               states: ReplayStates | None = None) -> TraceResult:
    """debug_traceCall: the call run as a transaction on the state after ``block`` (or, with
    ``tx_index``, before that transaction of it), with eth_call's defaults and overrides."""
    if tracer is None:
        tracer = _tracer(options, TraceContext())
    trace_calls(backend, [(request, tracer)], block, options, state_override=state_override,
                block_overrides=block_overrides, tx_index=tx_index, states=states)
    return tracer.result()


def trace_calls(backend: TraceableChain, calls: Sequence[tuple[CallRequest, ResultTracer]],
                block: BlockRef, options: TraceOptions = TraceOptions(), *,
                state_override: StateOverride = (), block_overrides: BlockOverrides | None = None,
                tx_index: int | None = None, states: ReplayStates | None = None) -> None:
    """Each call run as a transaction on the state the calls before it left, traced by its
    own tracer (reth's ``trace_callMany``); the overrides apply once, before the first."""
    if block == "pending":
        raise ExecutionFailed("tracing on top of pending is not supported")
    header = require_header(backend, block)
    vm = None
    for request, tracer in calls:
        block_classes = states is not None and tx_index is None
        run = prepare(backend, request, block, state_override=state_override if vm is None else (),
                      block_overrides=block_overrides, own_state=True, timeout=options.timeout,
                      header=header, states=states.calls if block_classes and states is not None else None)
        if vm is None and tx_index is not None:
            run = _at_transaction(backend, run, header.hash, tx_index, state_override,
                                  block_overrides)
        if vm is None:
            vm = run.vm
        else:
            from ..message import PreparedMessage

            run = PreparedMessage(vm, run.message, run.fork, run.london, run.limit)
        _run_traced_call(run, gas_for(request, header.gas_limit), tracer, block_classes)


def _run_traced_call(run: Any, gas: int, tracer: ResultTracer, block_classes: bool) -> None:
    message, state = run.message, run.state
    try:
        transaction = run._transaction(gas)
        run._pre_check(transaction.intrinsic_gas, gas)
    except Rejected as exc:
        raise ExecutionFailed(f"tracing failed: {exc.message}") from None
    spoofed: Any = SpoofTransaction(transaction, from_=EvmAddress(message.sender))
    request = message.request
    env = _env(run.vm, state, message.sender, request.to, gas, request.value, request.data, 0)
    with _traced(state, tracer, run.limit, block_classes=block_classes):
        tracer.on_tx_start(env)
        try:
            computation = state.apply_transaction(spoofed)
        except ValidationError as exc:
            raise ExecutionFailed(f"tracing failed: {exc}") from None
        tracer.on_tx_end(type(run.vm).finalize_gas_used(transaction, computation), None)


def _at_transaction(backend: TraceableChain, run: Any, block_hash: bytes, tx_index: int,
                    state_override: StateOverride,
                    block_overrides: BlockOverrides | None = None) -> Any:
    """``run``'s message on the state before transaction ``tx_index`` of the block (geth's
    ``StateAtTransaction``), with the block and then the state overrides."""
    from ..message import PreparedMessage
    from ..overrides import apply_state_overrides, with_blob_base_fee

    block = backend.block_by_hash(block_hash)
    assert block is not None
    if tx_index > len(block.transactions):
        raise ExecutionFailed(f"transaction index {tx_index} out of range")
    replay = _replay(backend, block)
    replay.seek(tx_index)  # (a replay without positions only goes forward: always there)
    state = replay.vm.state
    context = state.execution_context
    if block_overrides is not None:
        _override_context(context, block_overrides)
        if block_overrides.blob_base_fee is not None:
            with_blob_base_fee(state, block_overrides.blob_base_fee)
    if run.message.gas_price == 0 and getattr(context, "base_fee_per_gas", None):
        context._base_fee_per_gas = 0
    apply_state_overrides(state, state_override)
    return PreparedMessage(replay.vm, run.message, run.fork, run.london, run.limit)


def _override_context(context: Any, overrides: BlockOverrides) -> None:
    """py-evm's execution context of a replayed block with the overridden fields."""
    from ..overrides import HEADER_FIELDS

    fields = {"_" + field: getattr(overrides, name) for name, field in HEADER_FIELDS}
    fields["_coinbase"] = overrides.fee_recipient
    if getattr(context, "_base_fee_per_gas", None) is not None:
        fields["_base_fee_per_gas"] = overrides.base_fee_per_gas
    for name, value in fields.items():
        if value is not None:
            setattr(context, name, value)
