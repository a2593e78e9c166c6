"""One message run on a block's state, the way geth runs eth_call, eth_estimateGas and
eth_createAccessList.

A :class:`Message` is the call object after geth's call defaults: ``from`` defaults to the
zero address, the nonce is the state's (never checked), fee fields become a fee cap and a tip
(a legacy ``gasPrice`` is both), and a message paying nothing runs with a zero base fee (and a
zero blob base fee when it names no blob fee), so that an unfunded sender can call.

:meth:`PreparedMessage.run` runs it with a gas limit on a snapshot reverted afterwards, after
geth's pre-checks in geth's order and words (:class:`Rejected`). It takes py-evm's executor
steps on a plain record of the fields, no py-evm transaction built or validated; a message
with authorizations or blob hashes runs as a spoofed py-evm transaction. A request that
changes nothing but the snapshot runs on a cached post-block state; one with overrides, a
blob fee to zero or a tracer gets a state of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Protocol

from eth._utils.address import generate_contract_address
from eth.abc import ComputationAPI
from eth.exceptions import Revert
from eth.vm.forks.berlin.constants import (
    ACCESS_LIST_ADDRESS_COST_EIP_2930,
    ACCESS_LIST_STORAGE_KEY_COST_EIP_2930,
)
from eth.vm.forks.cancun.state import CancunTransactionExecutor
from eth.vm.spoof import SpoofTransaction
from eth_typing import Address as EvmAddress
from eth_typing import Hash32
from eth_utils import ValidationError, to_checksum_address

from ..backend import ConfigSource, StateSource
from ..errors import ExecutionFailed, StateUnavailable
from ..evm import time_limit
from ..evm.block_vm import vm_at
from ..evm.lean_interpreter import CheckedMessage, MessageTables, lean_vm_class, share_tables
from ..forks import FORK_BY_NAME, ChainConfig, Fork
from ..forks.table import ACCESS_LIST, DYNAMIC_FEE, LEGACY, SET_CODE
from ..forks.table import BLOB as BLOB_TX
from ..forks.validity import (
    CALL,
    BlockContext,
    FloorGasTooLow,
    IntrinsicGasTooLow,
    InvalidTransaction,
    SenderAccount,
    TxFields,
    upfront_cost,
    validate_transaction,
)
from ..lru import LRU
from ..models import (
    AccessListEntry,
    BlockOverrides,
    BlockRef,
    CallRequest,
    Header,
    StateOverride,
    trusted_maker,
)
from .overrides import (
    apply_state_overrides,
    check_block_overrides,
    check_state_overrides,
    override_header,
    with_blob_base_fee,
)
from .resolve import ChainHeaders, require_header

GAS_CAP_FACTOR = 10
"""A call's gas is capped at this many times the block's gas limit (the interface's cap)."""
DEFAULT_GAS = 50_000_000
"""Gas of a call that names none: geth's default RPC gas cap (still under the 10x cap)."""
ZERO_ADDRESS = b"\x00" * 20


class ExecutableChain(ChainHeaders, StateSource, ConfigSource, Protocol):
    """A block's header, its state, and the fork rules to execute on it."""


class Rejected(ExecutionFailed):
    """geth refuses the message before running it; ``message`` is the bare reason.
    ``intrinsic`` marks a gas limit below the intrinsic gas or the calldata floor."""

    def __init__(self, message: str, *, intrinsic: bool = False) -> None:
        super().__init__(message)
        self.intrinsic = intrinsic


@dataclass(frozen=True, slots=True)
class Message:
    """A call object after geth's call defaults (``CallDefaults`` and ``ToMessage``)."""

    request: CallRequest
    sender: bytes
    gas_price: int
    """What the sender pays per gas (the legacy price, or min(tip + base fee, fee cap))."""
    fee_cap: int
    tip_cap: int
    blob_fee_cap: int | None


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one run of a message did."""

    output: bytes
    gas_used: int
    """Gas the run is charged for, after refunds and the Prague calldata floor."""
    peak_gas_used: int
    """Gas used before refunds: the least a successful run needs."""
    error: Exception | None
    """None on success; py-evm's error otherwise (``Revert`` for REVERT)."""

    @property
    def reverted(self) -> bool:
        """Whether the run ended in REVERT (rather than success or another failure)."""
        return isinstance(self.error, Revert)


_MESSAGE = trusted_maker(Message)
_OUTCOME = trusted_maker(Outcome)
"""The two records' fields in declaration order, set without the dataclass constructor
(values made here, of the declared types)."""


def chain_config(backend: ConfigSource) -> ChainConfig:
    """The backend's fork schedule; StateUnavailable when it knows none (nothing can run)."""
    config = backend.chain_config()
    if config is None:
        raise StateUnavailable("the backend does not know the chain's fork schedule")
    return config


def gas_cap(block_gas_limit: int) -> int:
    """The most gas a call may use in a block with this gas limit."""
    return GAS_CAP_FACTOR * block_gas_limit


def to_message(request: CallRequest, base_fee: int | None, chain_id: int) -> Message:
    """geth's ``CallDefaults`` and ``ToMessage``: the fee fields and the price the sender pays."""
    if request.conflicts is not None:
        raise ExecutionFailed(request.conflicts)
    if request.chain_id is not None and request.chain_id != chain_id:
        raise ExecutionFailed(f"chainId does not match node's (have={request.chain_id}, want={chain_id})")
    blob_fee_cap = request.max_fee_per_blob_gas
    if blob_fee_cap is None and request.blob_versioned_hashes is not None:
        blob_fee_cap = 0
    sender = request.sender or ZERO_ADDRESS
    if base_fee is None or request.gas_price is not None:
        price = request.gas_price or 0
        return _MESSAGE(request, sender, price, price, price, blob_fee_cap)
    fee_cap = request.max_fee_per_gas or 0
    tip = request.max_priority_fee_per_gas or 0
    price = min(tip + base_fee, fee_cap) if fee_cap or tip else 0
    return _MESSAGE(request, sender, price, fee_cap, tip, blob_fee_cap)


class CallStates:
    """Recently used post-block states, reused across calls (a dispatcher owns one per
    backend): building one costs more than most calls. A call runs on a snapshot reverted
    afterwards; a state serves one call at a time, a call finding every state of its block
    busy builds one more, and up to ``per_block`` of them are kept."""

    def __init__(self, max_states: int = 16, per_block: int = 4,
                 vm_classes: Callable[[Any], Any] = lean_vm_class) -> None:
        self.vm_classes = vm_classes
        """The VM class messages run on, from a fork's (:func:`~ethread.evm.lean_interpreter.lean_vm_class`)."""
        self.tables = MessageTables()
        """What messages on these states share, keyed by content (never stale)."""
        self._states: LRU[tuple[int, bytes, bool], list[Any]] = LRU(max_states)
        self._blocks: LRU[tuple[int, bytes], BlockRules] = LRU(4 * max_states)
        """What messages at a block share, by (database, hash): its header, fork and VM class."""
        self._headers: LRU[tuple[int, BlockRef], tuple[int, Header]] = LRU(4 * max_states)
        """The header each block reference named, and the backend's generation then."""
        self.per_block = per_block

    def header(self, backend: ChainHeaders, ref: BlockRef) -> Header:
        """:func:`~.resolve.require_header` of ``ref``, kept while the backend's generation stays
        the same (until a block is added or a pointer moves)."""
        current = getattr(backend, "generation", None)
        if current is None:  # (a backend that does not say when it changes: nothing is kept)
            return require_header(backend, ref)
        generation: int = current()
        key = (id(backend), ref)
        kept = self._headers.get(key)
        if kept is not None and kept[0] == generation:
            return kept[1]
        header = require_header(backend, ref)
        self._headers.put(key, (generation, header))
        return header

    def block(self, chaindb: Any, block_hash: bytes, config: Any) -> BlockRules:
        """The rules of block ``block_hash`` in ``chaindb`` (kept once worked out)."""
        key = (id(chaindb.db), block_hash)
        rules = self._blocks.get(key)
        if rules is None:
            rules = BlockRules.of(chaindb.get_block_header_by_hash(Hash32(block_hash)), config,
                                  self.vm_classes)
            self._blocks.put(key, rules)
        return rules

    def take(self, key: tuple[int, bytes, bool]) -> tuple[Any, list[Any]]:
        """A kept VM under ``key`` no one else uses (or None), and its list."""
        idle = self._states.get(key)
        if idle is None:
            idle = self._states.get_or_put(key, list)
        try:
            vm = idle.pop()  # atomic: two threads never take the same VM
        except IndexError:
            vm = None
        return vm, idle

    def give(self, idle: list[Any], vm: Any) -> None:
        """Keep ``vm`` (taken with :meth:`take`) for the next message, up to ``per_block``."""
        if len(idle) < self.per_block:
            idle.append(vm)

    def clear(self) -> None:
        """Drop every kept state (the tables, keyed by content, stay)."""
        self._states.clear()
        self._blocks.clear()
        self._headers.clear()


@dataclass(frozen=True, slots=True)
class BlockRules:
    """py-evm's header of a block and the rules its messages run under."""

    header: Any
    fork: str
    vm_class: Any
    """The fork's VM class for messages (:func:`~ethread.evm.lean_interpreter.lean_vm_class` by default)."""
    base_fee: int | None

    @classmethod
    def of(cls, evm_header: Any, config: Any,
           vm_classes: Callable[[Any], Any] = lean_vm_class) -> BlockRules:
        """The rules of the block with py-evm's header ``evm_header`` under ``config``."""
        number, timestamp = evm_header.block_number, evm_header.timestamp
        return cls(evm_header, config.fork_at(number, timestamp),
                   vm_classes(config.vm_class(number, timestamp)),
                   getattr(evm_header, "base_fee_per_gas", None))


class PreparedMessage:
    """A message ready to run on one block's state; see the module docstring."""

    def __init__(self, vm: Any, message: Message, fork: str, london: bool,
                 limit: time_limit.TimeLimit = time_limit.NO_LIMIT,
                 release: Callable[[], None] | None = None,
                 tables: MessageTables | None = None) -> None:
        self.vm = vm
        self.state = vm.state
        self.message = message
        self.fork = fork
        self.london = london
        self.limit = limit
        """When every run of this execution must stop (gas estimation's runs share one limit)."""
        self._release = release
        self.tables = tables
        """The tables of the states' owner (None: nothing is kept between runs)."""

    @property
    def rules(self) -> Fork:
        """What the block's fork changes (its row of the fork table)."""
        return FORK_BY_NAME[self.fork]

    def release(self) -> None:
        """Hand the state back to the cache it came from; the execution must not run again."""
        release, self._release = self._release, None
        if release is not None:
            release()

    def with_access_list(self, access_list: tuple[AccessListEntry, ...]) -> PreparedMessage:
        """The same message on the same state, carrying ``access_list`` instead."""
        request = replace(self.message.request, access_list=access_list)
        return PreparedMessage(self.vm, replace(self.message, request=request), self.fork,
                               self.london, self.limit, tables=self.tables)

    def run(self, gas: int, computation_class: Any = None, *, as_transaction: bool = False,
            figures: bool = True) -> Outcome:
        """Run the message with ``gas`` on a snapshot, reverted afterwards (:class:`Rejected`
        where geth refuses it first). ``as_transaction`` runs it as a spoofed py-evm
        transaction, as a message with authorizations or blob hashes always runs. Without
        ``figures`` the gas figures are 0."""
        state = self.state
        snapshot = state.snapshot()
        original_class = state.computation_class
        if computation_class is not None:
            state.computation_class = computation_class
        try:
            request = self.message.request
            if (not as_transaction and request.authorization_list is None
                    and request.blob_versioned_hashes is None):
                envelope = self._envelope(gas)
                self._pre_check(envelope.intrinsic_gas, gas)
                entered = self.limit.enter(state)
                try:
                    computation = self._apply(envelope, figures)
                except ValidationError as exc:
                    raise Rejected(str(exc)) from None
                finally:
                    self.limit.leave(state, entered)
                return self._outcome(envelope, computation, figures)
            transaction = self._transaction(gas)
            self._pre_check(transaction.intrinsic_gas, gas)
            spoofed: Any = SpoofTransaction(transaction, from_=EvmAddress(self.message.sender))
            try:
                with self.limit.applied(state):
                    computation = state.apply_transaction(spoofed)
            except ValidationError as exc:
                raise Rejected(str(exc)) from None
            return self._outcome(transaction, computation, figures)
        finally:
            if computation_class is not None:
                state.computation_class = original_class
            state.revert(snapshot)

    def _envelope(self, gas: int) -> _Envelope:
        """The message as the fields py-evm's executor reads of a transaction."""
        message, request = self.message, self.message.request
        access_list = evm_access_list(request.access_list)
        listed = request.access_list is not None
        kind = (DYNAMIC_FEE if self.london
                else ACCESS_LIST if listed and ACCESS_LIST in self.rules.transaction_types else LEGACY)
        envelope = _Envelope(
            type_id=kind, sender=message.sender, to=request.to or b"", gas=gas,
            value=request.value, data=request.data, access_list=access_list,
            gas_price=message.gas_price, max_fee_per_gas=message.fee_cap,
            max_priority_fee_per_gas=message.tip_cap)
        vm_class: Any = type(self.vm)
        rule = _intrinsic_gas_of(vm_class, kind)
        tables = self.tables
        if access_list or tables is None:
            envelope.intrinsic_gas = rule(envelope)
        else:  # (the rule reads the data's zero and other bytes, and whether it creates)
            data = request.data
            key = (rule, request.to is None, len(data), data.count(0))
            intrinsic = tables.intrinsic_gas.get(key)
            if intrinsic is None:
                intrinsic = rule(envelope)
                tables.intrinsic_gas.put(key, intrinsic)
            envelope.intrinsic_gas = intrinsic
        if listed and kind == LEGACY:
            # before Berlin only eth_createAccessList's own lists get here (a request's list is
            # refused for the fork): geth charges a list's intrinsic gas on any fork
            envelope.intrinsic_gas += (ACCESS_LIST_ADDRESS_COST_EIP_2930 * len(access_list)
                                       + ACCESS_LIST_STORAGE_KEY_COST_EIP_2930
                                       * sum(len(s) for _, s in access_list))
        return envelope

    def _apply(self, envelope: _Envelope, figures: bool = True) -> ComputationAPI:
        """What py-evm's ``apply_transaction`` does after validation, up to the computation."""
        state = self.state
        executor = state.get_transaction_executor()
        executor_class: Any = type(executor)
        cancun, build = _executor_traits(executor_class)
        sender = envelope.sender
        fee = envelope.gas * state.get_gas_price(envelope)
        if fee:
            state.delta_balance(sender, -fee)  # buy gas
        state.increment_nonce(sender)
        is_delegation = False
        if envelope.to == b"":
            create_address = generate_contract_address(EvmAddress(sender),
                                                       state.get_nonce(sender) - 1)
            data, code = b"", envelope.data
        else:
            create_address = None
            data = envelope.data
            if cancun:  # Prague's executor follows a delegation
                code, delegation = executor.get_code_at_address(envelope.to)
                is_delegation = delegation is not None
            else:
                code = state.get_code(envelope.to)
        refund = executor.calc_message_refund(envelope) if cancun else 0
        # (every field is checked already: the parsed request, the gas, code from the state)
        evm_message = CheckedMessage(envelope.gas - envelope.intrinsic_gas, envelope.to, sender,
                                     envelope.value, data, code, create_address, is_delegation,
                                     refund)
        # (the transient storage py-evm's finalisation clears goes with the run's snapshot)
        computation: ComputationAPI
        if build is PY_EVM_BUILD or create_address is not None:
            computation = executor.build_computation(evm_message, envelope)
        else:  # py-evm's build_computation of a message call, without its two layers
            if build is BERLIN_BUILD:  # the sender, the callee and the access list are warm
                state.mark_address_warm(sender)
                state.mark_address_warm(envelope.to)
                for address, slots in envelope.access_list:
                    state.mark_address_warm(address)
                    for slot in slots:
                        state.mark_storage_warm(address, slot)
            context = state.get_transaction_context(envelope)
            computation = state.computation_class.apply_message(state, evm_message, context)
        if figures:
            used = envelope.gas - computation.get_gas_remaining()
            gas_refund = executor.calculate_gas_refund(computation, used)
            computation.data_floor_gas = executor.calc_data_floor_gas(envelope, used, gas_refund)
        return computation

    def _transaction(self, gas: int) -> Any:
        """The message as the unsigned py-evm transaction it runs as, at the sender's nonce."""
        return unsigned_transaction(self.vm.get_transaction_builder(), self.message,
                                    self.state.get_nonce(EvmAddress(self.message.sender)), gas,
                                    self.vm.chain_context.chain_id, self.london)

    def _pre_check(self, intrinsic: int, gas: int) -> None:
        """geth's ``preCheck`` and intrinsic-gas checks for a call (``validate_transaction``
        without nonce, sender-code or gas-cap checks), :class:`Rejected` in geth's words."""
        message, request, state, rules = self.message, self.message.request, self.state, self.rules
        tx = message_fields(message, gas, self.london)
        blob_base_fee = None
        if tx.blob_hashes and rules.blob is not None and message.blob_fee_cap:
            blob_base_fee = state.blob_base_fee
        block = BlockContext(
            base_fee=state.execution_context.base_fee_per_gas if self.london else None,
            blob_base_fee=blob_base_fee)
        # (an unfunded message, the usual call, cannot fall short: no balance to read)
        cost = upfront_cost(tx)
        balance = state.get_balance(EvmAddress(message.sender)) if cost or request.value else 0
        try:
            validate_transaction(rules, tx, block, SenderAccount(0, balance),
                                 sender=message.sender, checks=CALL, intrinsic=intrinsic)
        except (IntrinsicGasTooLow, FloorGasTooLow) as exc:
            raise Rejected(str(exc), intrinsic=True) from None
        except InvalidTransaction as exc:
            raise Rejected(str(exc)) from None

    def _outcome(self, transaction: Any, computation: ComputationAPI, figures: bool = True,
                 ) -> Outcome:
        """What the run did (``transaction``: the envelope or py-evm's transaction)."""
        if figures:
            gas_used = type(self.vm).finalize_gas_used(transaction, computation)
            before_refund = transaction.gas - computation.get_gas_remaining()
            peak = max(before_refund, gas_used)
        else:
            gas_used = peak = 0
        error = computation.error if computation.is_error else None
        if error is not None:
            # (break the cycle traceback -> frames -> computation -> error, left to the GC)
            error.__traceback__ = None
        return _OUTCOME(bytes(computation.output), gas_used, peak, error)


PY_EVM_BUILD, FRONTIER_BUILD, BERLIN_BUILD = "executor's own", "message call", "warm message call"
"""How a run builds its computation: through the executor's ``build_computation`` (an
executor with a build of its own), or as Frontier's executor (or Berlin's, which warms the
sender, the callee and the access list first, then does Frontier's) builds a message call."""


@lru_cache(maxsize=64)
def _executor_traits(executor_class: type) -> tuple[bool, str]:
    """Whether ``executor_class`` has Cancun's hooks (message refunds, delegations, the data
    floor), and how its computations are built (a memo of the class's shape)."""
    from eth.vm.forks.berlin.state import BerlinTransactionExecutor
    from eth.vm.forks.frontier.state import FrontierTransactionExecutor

    builds = [k for k in executor_class.__mro__ if "build_computation" in k.__dict__]
    build = (BERLIN_BUILD if builds[:2] == [BerlinTransactionExecutor, FrontierTransactionExecutor]
             else FRONTIER_BUILD if builds[:1] == [FrontierTransactionExecutor]
             else PY_EVM_BUILD)
    return issubclass(executor_class, CancunTransactionExecutor), build


def message_fields(message: Message, gas: int, london: bool) -> TxFields:
    """A message as :mod:`ethread.forks.validity` reads a transaction (its nonce never checked)."""
    request = message.request
    entries = request.access_list
    hashes = request.blob_versioned_hashes
    authorizations = request.authorization_list
    kind = (SET_CODE if authorizations is not None else BLOB_TX if hashes is not None
            else DYNAMIC_FEE if london else LEGACY)
    return TxFields(kind, 0, gas, request.to, request.value, request.data, message.fee_cap,
                    message.tip_cap, len(entries) if entries else 0,
                    sum(len(e.storage_keys) for e in entries) if entries else 0,
                    None if hashes is None else tuple(hashes), message.blob_fee_cap or 0,
                    None if authorizations is None else len(authorizations))



def evm_access_list(entries: tuple[AccessListEntry, ...] | None) -> list[tuple[bytes, list[int]]]:
    """An access list as py-evm's transactions take it (storage keys as integers)."""
    return [(e.address, [int.from_bytes(k, "big") for k in e.storage_keys]) for e in entries or ()]


def unsigned_transaction(builder: Any, message: Message, nonce: int, gas: int, chain_id: int,
                         london: bool) -> Any:
    """The message as an unsigned py-evm transaction of ``builder``."""
    request = message.request
    access_list = evm_access_list(request.access_list)
    common: dict[str, Any] = dict(nonce=nonce, gas=gas, to=request.to or b"", value=request.value,
                                  data=request.data)
    if not london:
        if request.access_list is not None and hasattr(builder, "new_unsigned_access_list_transaction"):
            return builder.new_unsigned_access_list_transaction(
                chain_id=chain_id, gas_price=message.gas_price, access_list=access_list, **common)
        return builder.create_unsigned_transaction(gas_price=message.gas_price, **common)
    fees: dict[str, Any] = dict(chain_id=chain_id, max_priority_fee_per_gas=message.tip_cap,
                                max_fee_per_gas=message.fee_cap, access_list=access_list, **common)
    if request.authorization_list is not None:
        from eth.vm.forks.prague.transactions import Authorization as EvmAuthorization

        authorizations = [EvmAuthorization(a.chain_id, a.address, a.nonce, a.y_parity, a.r, a.s)
                          for a in request.authorization_list]
        return builder.new_unsigned_set_code_transaction(authorization_list=authorizations, **fees)
    if request.blob_versioned_hashes is not None:
        return builder.new_unsigned_blob_transaction(
            max_fee_per_blob_gas=message.blob_fee_cap or 0,
            blob_versioned_hashes=list(request.blob_versioned_hashes), **fees)
    return builder.new_unsigned_dynamic_fee_transaction(**fees)


@dataclass(slots=True)
class _Envelope:
    """A message as the transaction fields py-evm's executor, intrinsic gas and fee rules read."""

    type_id: int
    sender: bytes
    to: bytes
    gas: int
    value: int
    data: bytes
    access_list: list[tuple[bytes, list[int]]]
    gas_price: int
    max_fee_per_gas: int
    max_priority_fee_per_gas: int
    intrinsic_gas: int = 0


@lru_cache(maxsize=64)
def _intrinsic_gas_of(vm_class: Any, kind: int) -> Callable[[Any], int]:
    """py-evm's intrinsic-gas rule of the unsigned transaction ``vm_class`` builds for ``kind``."""
    builder = vm_class.get_transaction_builder()
    common: dict[str, Any] = dict(nonce=0, gas=0, to=b"", value=0, data=b"")
    if kind == LEGACY:
        sample = builder.create_unsigned_transaction(gas_price=0, **common)
    elif kind == ACCESS_LIST:
        sample = builder.new_unsigned_access_list_transaction(chain_id=1, gas_price=0,
                                                              access_list=[], **common)
    else:
        sample = builder.new_unsigned_dynamic_fee_transaction(
            chain_id=1, max_priority_fee_per_gas=0, max_fee_per_gas=0, access_list=[], **common)
    rule: Callable[[Any], int] = type(sample).get_intrinsic_gas
    return rule


@contextmanager
def execution(backend: ExecutableChain, request: CallRequest, block: BlockRef, *,
              state_override: StateOverride = (), block_overrides: BlockOverrides | None = None,
              states: CallStates | None = None, own_state: bool = False,
              timeout: float | None = None) -> Iterator[PreparedMessage]:
    """The message of ``request`` ready to run on the state after ``block`` (overrides
    applied), on a state from ``states`` unless it needs its own (overrides, a changed blob
    fee, ``own_state``). Its runs stop with :class:`~ethread.errors.ExecutionAborted`
    ``timeout`` seconds from now (None: when the request is cancelled)."""
    run = prepare(backend, request, block, state_override=state_override,
                  block_overrides=block_overrides, states=states, own_state=own_state,
                  timeout=timeout)
    try:
        yield run
    finally:
        run.release()


def prepare(backend: ExecutableChain, request: CallRequest, block: BlockRef, *,
            state_override: StateOverride = (), block_overrides: BlockOverrides | None = None,
            states: CallStates | None = None, own_state: bool = False,
            timeout: float | None = None, header: Header | None = None) -> PreparedMessage:
    """:func:`execution` without the context manager; ``header``: ``block``'s, when known."""
    limit = time_limit.TimeLimit.start(timeout)
    if header is None:
        header = require_header(backend, block)
    chaindb = backend.evm_database()
    config = chain_config(backend)
    vm_classes = lean_vm_class if states is None else states.vm_classes
    tables = None if states is None else states.tables
    try:
        if states is not None:
            rules = states.block(chaindb, header.hash, config)
        else:
            rules = BlockRules.of(chaindb.get_block_header_by_hash(Hash32(header.hash)), config)
    except Exception as exc:
        raise StateUnavailable(f"no state for block {header.number}") from exc
    if block_overrides is not None:
        check_block_overrides(block_overrides)
        rules = BlockRules.of(override_header(rules.header, block_overrides), config, vm_classes)
    evm_header, fork, vm_class, base_fee = rules.header, rules.fork, rules.vm_class, rules.base_fee
    if state_override:
        active: Any = vm_class.get_state_class().computation_class.get_precompiles()
        check_state_overrides(state_override, active)
    message = to_message(request, base_fee, config.chain_id)
    check_fields_for_fork(request, fork, base_fee is not None, gas_for(request, header.gas_limit))
    zero_base_fee = base_fee is not None and message.gas_price == 0
    blob_base_fee = None
    if block_overrides is not None:
        blob_base_fee = block_overrides.blob_base_fee
    if message.blob_fee_cap == 0:
        blob_base_fee = 0
    private = (states is None or own_state or bool(state_override) or block_overrides is not None
               or blob_base_fee is not None)
    if private:
        vm = _build_vm(vm_class, evm_header, zero_base_fee, chaindb, config.chain_id, tables)
        if blob_base_fee is not None:
            with_blob_base_fee(vm.state, blob_base_fee)
        apply_state_overrides(vm.state, state_override)
        return PreparedMessage(vm, message, fork, base_fee is not None, limit, tables=tables)
    assert states is not None
    vm, idle = states.take((id(chaindb.db), header.hash, zero_base_fee))
    if vm is None:
        vm = _build_vm(vm_class, evm_header, zero_base_fee, chaindb, config.chain_id, tables)
    return PreparedMessage(vm, message, fork, base_fee is not None, limit,
                           release=lambda: states.give(idle, vm), tables=tables)


def _build_vm(vm_class: Any, evm_header: Any, zero_base_fee: bool, chaindb: Any,
              chain_id: int, tables: MessageTables | None) -> Any:
    """A VM of ``vm_class`` on the state after ``evm_header``'s block."""
    # a message that pays nothing runs with a zero base fee (see the module docstring)
    context = evm_header.copy(base_fee_per_gas=0) if zero_base_fee else evm_header
    vm = vm_at(vm_class, context, chaindb, chain_id)
    if tables is not None:
        share_tables(vm, tables)
    return vm


def gas_for(request: CallRequest, block_gas_limit: int) -> int:
    """The gas a call runs with: what it names (geth's default when it names none), capped."""
    return min(DEFAULT_GAS if request.gas is None else request.gas, gas_cap(block_gas_limit))


def check_fields_for_fork(request: CallRequest, fork: str, london: bool, gas: int) -> None:
    """Refuse what the block's rules cannot carry, in geth's order and words."""
    fee_market = request.max_fee_per_gas is not None or request.max_priority_fee_per_gas is not None
    if fee_market and not london:
        raise ExecutionFailed("maxFeePerGas and maxPriorityFeePerGas are not valid before London is active")
    if (request.access_list is None and request.authorization_list is None
            and not request.wants_blobs):
        return  # (a plain message: every fork carries it)
    carried = FORK_BY_NAME[fork].transaction_types
    for wanted, tx_type, kind in (
        (request.access_list is not None, ACCESS_LIST, "access list"),
        (request.wants_blobs, BLOB_TX, "blob"),
        (request.authorization_list is not None, SET_CODE, "setcode"),
    ):
        if wanted and tx_type not in carried:
            sender = to_checksum_address(request.sender or ZERO_ADDRESS)
            raise ExecutionFailed(
                f"err: transaction type not supported: {kind} tx (sender {sender}) (supplied gas {gas})"
            )
