"""eth_simulateV1: calls run as the transactions of blocks built on top of a chain's block,
as geth's ``internal/ethapi/simulate.go`` runs them:

- Block numbers and timestamps must increase (gaps filled with empty blocks, a missing time
  twelve seconds after the block before), at most :data:`MAX_BLOCKS` past the base.
- Each block carries over its parent's hash, fee recipient, gas limit and difficulty (zero
  after the merge); its base fee is zero unless overridden or under ``validation`` (then
  EIP-1559's). Then come its state overrides, its fork's system calls, its calls in order,
  the requests (Prague) and withdrawals; it is assembled as a real block.
- A call gets geth's defaults (the sender's nonce, the gas the block has left, all out of one
  budget: geth's RPC gas cap) and becomes an unsigned transaction of geth's type choice.
  Nonces and the base fee are checked only under ``validation``.
- A call refused before running stops the simulation with geth's code
  (:class:`~ethread.errors.SimulationRefused`); one that runs and fails is a failed
  transaction of its block.

Nothing reaches the backend: py-evm runs over an overlay database on eth_call's lean classes
with overlay tries (:mod:`.overlay_trie`); ``tests/support/plain_simulate.py`` runs the same
on py-evm's own classes for comparison. With ``trace_transfers`` every ether transfer is an
ERC-7528 ``Transfer`` log from 0xeeee...eeee. Log indexes count every log emitted in the
block, those of frames that later failed included, as geth's tracer counts them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from hashlib import sha256
from types import SimpleNamespace
from typing import Any

import rlp
from eth._utils.address import generate_contract_address
from eth.exceptions import Revert
from eth.vm.forks.cancun.state import CancunTransactionExecutor
from eth.vm.forks.spurious_dragon._utils import collect_touched_accounts
from eth.vm.forks.spurious_dragon.state import SpuriousDragonTransactionExecutor
from eth.vm.spoof import SpoofTransaction
from eth_typing import Address as EvmAddress
from eth_typing import Hash32 as Hash32Type
from eth_utils import keccak

from ..bloom import logs_bloom
from ..errors import ExecutionAborted, Picklable, SimulationRefused, StateUnavailable, go_duration
from ..evm import time_limit
from ..evm.blobs import GAS_PER_BLOB, blob_base_fee, excess_blob_gas_after
from ..evm.block_vm import after_system_writes, scratch_chaindb, vm_at
from ..evm.classes import made, subclass
from ..evm.hooks import Tracer, attached, hooked_class
from ..evm.lean_interpreter import CheckedMessage, MessageTables, share_tables
from ..forks.base_fee import next_base_fee
from ..forks.table import DYNAMIC_FEE
from ..forks.validity import (
    BlockContext,
    Checks,
    FeeCapBelowBaseFee,
    InitcodeTooLarge,
    InsufficientFunds,
    InsufficientFundsForTransfer,
    IntrinsicGasTooLow,
    InvalidTransaction,
    NonceTooHigh,
    NonceTooLow,
    SenderAccount,
    TipAboveFeeCap,
    floor_data_gas,
    validate_transaction,
)
from ..keccak import keccak256
from ..models import (
    Address,
    BlobTransaction,
    Block,
    BlockRef,
    CallRequest,
    DynamicFeeTransaction,
    Hash32,
    Header,
    IncludedTransaction,
    LegacyTransaction,
    Log,
    SetCodeTransaction,
    StateOverride,
    Transaction,
    Withdrawal,
    trusted_maker,
)
from ..rlpcodec.assemble import effective_gas_price
from ..rlpcodec.blocks import withdrawal_item
from ..rlpcodec.headers import encode_header, header_from_fields
from ..rlpcodec.items import decode_list, encode_nested, int_to_bytes, rlp_list_length
from ..rlpcodec.ordered_trie import ordered_trie_root
from ..rlpcodec.transactions import encode_transaction
from ..simulation import (
    CallError,
    CallResult,
    SimulatedBlock,
    SimulatedBlockCalls,
    SimulatedBlockOverrides,
    SimulateOptions,
)
from .call import decode_revert_reason, vm_error_message
from .message import (
    DEFAULT_GAS,
    CallStates,
    ExecutableChain,
    Message,
    chain_config,
    evm_access_list,
    message_fields,
    to_message,
    unsigned_transaction,
)
from .message import _Envelope as Envelope
from .message import _intrinsic_gas_of as intrinsic_gas_rule
from .overlay_trie import simulation_vm_class
from .overrides import apply_state_overrides, with_blob_base_fee
from .resolve import require_header

__all__ = ["MAX_BLOCKS", "MAX_CALLS", "MAX_CALLS_PER_BLOCK", "simulate"]

MAX_BLOCKS = 256
"""Blocks one simulation may build, past its base block (geth's ``maxSimulateBlocks``)."""
MAX_CALLS_PER_BLOCK = 5_000
MAX_CALLS = 10_000
"""Calls one simulated block, and one simulation, may hold (geth's limits)."""
TIMESTAMP_INCREMENT = 12
"""Seconds between simulated blocks whose time is not given."""

TRANSFER_TOPIC = keccak(b"Transfer(address,address,uint256)")
TRANSFER_ADDRESS = bytes.fromhex("ee" * 20)
"""ERC-7528's address standing for ether, the emitter of traced transfers."""

EMPTY_UNCLES_HASH = keccak(rlp.encode([]))
EMPTY_TRIE_ROOT = keccak(rlp.encode(b""))
ZERO_HASH = b"\x00" * 32
ZERO_ADDRESS = b"\x00" * 20
MAX_NONCE = 2**64 - 1

# geth's codes for what it refuses in a simulation (internal/ethapi/errors.go)
BLOCK_GAS_LIMIT_REACHED = -38015
BLOCK_NUMBER_INVALID = -38020
BLOCK_TIMESTAMP_INVALID = -38021
CLIENT_LIMIT_EXCEEDED = -38026
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
VM_ERROR = -32015
"""A call that ran and failed other than by REVERT (its result's error code)."""
_REFUSAL_CODES: dict[type[InvalidTransaction], int] = {
    NonceTooLow: -38010, NonceTooHigh: -38011, FeeCapBelowBaseFee: -38012,
    IntrinsicGasTooLow: -38013, InsufficientFunds: -38014, InsufficientFundsForTransfer: -38014,
    InitcodeTooLarge: -38025, TipAboveFeeCap: INVALID_PARAMS,
}
"""geth's simulation code of each refusal (any other: an internal error)."""
REVERTED = 3


_LOG = trusted_maker(Log, "address topics data block_number transaction_hash transaction_index "
                          "block_hash block_timestamp log_index removed")

def simulate(backend: ExecutableChain, options: SimulateOptions, block: BlockRef = "latest", *,
             gas_cap: int = DEFAULT_GAS, timeout: float | None = None,
             states: CallStates | None = None) -> tuple[SimulatedBlock, ...]:
    """The blocks of ``options`` built on the state after ``block``. ``gas_cap`` is the gas all
    calls together may use (0: no cap); the whole simulation stops after ``timeout`` seconds
    (geth's ``--rpc.evmtimeout``). The states read through the tables of ``states``."""
    check_limits(options)
    base = require_header(backend, block)
    config = chain_config(backend)
    chaindb = backend.evm_database()
    try:
        chaindb.get_block_header_by_hash(Hash32Type(base.hash))
    except Exception as exc:
        raise StateUnavailable(f"no state for block {base.number}") from exc
    # the blocks' state: read through to the backend's, written into the overlay alone
    overlay = scratch_chaindb(chaindb)
    simulator = _Simulator(backend, config, base, options, overlay, gas_cap or 2**64 - 1,
                           time_limit.TimeLimit.start(timeout),
                           MessageTables() if states is None else states.tables)
    return simulator.run()


def check_limits(options: SimulateOptions) -> None:
    """geth's bounds on a simulation's size, checked before anything runs."""
    blocks = options.block_state_calls
    if not blocks:
        raise SimulationRefused("empty input", INVALID_PARAMS)
    if len(blocks) > MAX_BLOCKS:
        raise SimulationRefused("too many blocks", CLIENT_LIMIT_EXCEEDED)
    total = 0
    for planned in blocks:
        if len(planned.calls) > MAX_CALLS_PER_BLOCK:
            raise SimulationRefused(f"too many calls in block: {len(planned.calls)} > "
                                    f"{MAX_CALLS_PER_BLOCK}", CLIENT_LIMIT_EXCEEDED)
        total += len(planned.calls)
        if total > MAX_CALLS:
            raise SimulationRefused(f"too many calls: {total} > {MAX_CALLS}", CLIENT_LIMIT_EXCEEDED)


@dataclass(frozen=True, slots=True)
class _Planned:
    """A block of the simulation, its number and time settled (a gap's block has no calls)."""

    number: int
    time: int
    overrides: SimulatedBlockOverrides
    state_overrides: StateOverride = ()
    calls: tuple[CallRequest, ...] = ()


def plan_blocks(base: Header, blocks: Sequence[SimulatedBlockCalls]) -> list[_Planned]:
    """The blocks to build, numbers and times checked, gaps filled (geth's ``sanitizeChain``)."""
    planned: list[_Planned] = []
    previous_number, previous_time = base.number, base.timestamp
    for given in blocks:
        overrides = given.block_overrides or SimulatedBlockOverrides()
        number = overrides.number if overrides.number is not None else previous_number + 1
        if number <= previous_number:
            raise SimulationRefused(f"block numbers must be in order: {number} <= {previous_number}",
                                    BLOCK_NUMBER_INVALID)
        if number - base.number > MAX_BLOCKS:
            raise SimulationRefused("too many blocks", CLIENT_LIMIT_EXCEEDED)
        for gap_number in range(previous_number + 1, number):
            previous_time += TIMESTAMP_INCREMENT
            planned.append(_Planned(gap_number, previous_time, SimulatedBlockOverrides()))
        previous_number = number
        if overrides.time is None:
            time = previous_time + TIMESTAMP_INCREMENT
        else:
            time = overrides.time
            if time <= previous_time:
                raise SimulationRefused(f"block timestamps must be in order: {time} <= {previous_time}",
                                        BLOCK_TIMESTAMP_INVALID)
        previous_time = time
        planned.append(_Planned(number, time, overrides, given.state_overrides, given.calls))
    return planned


class _AncestorHashes:
    """What BLOCKHASH sees: the simulated blocks before (newest first), then the canonical ones."""

    def __init__(self, backend: ExecutableChain, base: Header, simulated: list[Hash32]) -> None:
        self._backend = backend
        self._base = base
        self._simulated = simulated

    def __iter__(self) -> Iterator[Hash32]:
        yield from reversed(self._simulated)
        yield self._base.hash
        number = self._base.number - 1
        while number >= 0:
            found = self._backend.canonical_hash(number)
            if found is None:
                return
            yield found
            number -= 1


class _BlockLogs(Tracer):
    """The logs of the call running, frame by frame (geth's simulate tracer): a frame's logs
    join its caller's when it succeeds, are dropped when it fails; ``count`` numbers every log
    captured in the block."""

    def __init__(self, transfers: bool) -> None:
        self.transfers = transfers
        self.frames: list[list[tuple[bytes, tuple[bytes, ...], bytes, int]]] = []
        self.count = 0

    def reset(self) -> None:
        self.frames = []

    def on_enter(self, depth: int, kind: int, sender: bytes, to: bytes, data: bytes, gas: int,
                 value: int | None) -> None:
        self.frames.append([])

    def on_transfer(self, sender: bytes, recipient: bytes, value: int) -> None:
        if self.transfers:
            self.on_log(TRANSFER_ADDRESS, (TRANSFER_TOPIC, sender.rjust(32, b"\x00"),
                                           recipient.rjust(32, b"\x00")), value.to_bytes(32, "big"))

    def on_exit(self, depth: int, output: bytes, gas_used: int, error: str | None,
                reverted: bool) -> None:
        if len(self.frames) <= 1:
            if reverted and self.frames:
                self.frames[0] = []
            return
        frame = self.frames.pop()
        if not reverted:
            self.frames[-1].extend(frame)

    def on_log(self, address: bytes, topics: tuple[bytes, ...], data: bytes, index: int = 0) -> None:
        if not self.frames:
            self.frames.append([])
        self.frames[-1].append((address, topics, data, self.count))
        self.count += 1

    def logs(self) -> list[tuple[bytes, tuple[bytes, ...], bytes, int]]:
        return self.frames[0] if self.frames else []


def _simulation_vm_class(vm_class: type) -> type:
    """``vm_class`` whose ancestors' hashes are given (``simulated_hashes``: a simulated parent
    is not in its database), and whose state pays the fee recipient nothing for a call paying
    no fees (geth skips that payment; py-evm would pay a negative tip under a base fee)."""
    return made(_make_simulation_vm_class, vm_class)  # type: ignore[no-any-return]


def _make_simulation_vm_class(base: Any) -> Any:
    state_class: Any = base.get_state_class()

    def get_tip(self: Any, transaction: Any) -> int:
        tip: int = state_class.get_tip(self, transaction)
        return max(tip, 0)

    precompiles = frozenset(state_class.computation_class.get_precompiles())

    def is_address_warm(self: Any, address: bytes) -> bool:
        # geth warms ActivePrecompiles(rules), wherever overrides moved them
        warm: bool = self._account_db.is_address_warm(address) or address in precompiles
        return warm

    def increment_nonce(self: Any, address: bytes) -> None:
        # a nonce at its maximum wraps to zero, as geth's uint64 does
        self.set_nonce(address, (self.get_nonce(address) + 1) % (MAX_NONCE + 1))

    quiet_state = subclass(state_class, {"get_tip": get_tip, "is_address_warm": is_address_warm,
                                         "increment_nonce": increment_nonce})
    return subclass(base, {"_state_class": quiet_state,
                           "previous_hashes": property(lambda self: self.simulated_hashes)})


class _Refusal(Picklable, Exception):
    """A call geth refuses before running it: its bare reason and geth's code for it."""

    def __init__(self, reason: str, code: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code


@dataclass(slots=True)
class _BlockWork:
    """What a block collects while its calls run."""

    transactions: list[Transaction] = field(default_factory=list)
    encoded: list[bytes] = field(default_factory=list)
    """The transactions' encodings (hashed, and the leaves of the transactions root)."""
    hashes: list[Hash32] = field(default_factory=list)
    senders: list[Address] = field(default_factory=list)
    receipts: list[bytes] = field(default_factory=list)
    bloom: int = 0
    gas_used: int = 0
    blob_gas_used: int = 0
    results: list[tuple[bytes, list[tuple[bytes, tuple[bytes, ...], bytes, int]], int, int,
                        int, CallError | None]] = field(default_factory=list)
    logs: list[tuple[bytes, tuple[bytes, ...], bytes]] = field(default_factory=list)
    """The logs of successful calls, for deposit requests."""


class _Simulator:
    """One simulation: the blocks built so far and the state after them."""

    def __init__(self, backend: ExecutableChain, config: Any, base: Header,
                 options: SimulateOptions, chaindb: Any, budget: int,
                 limit: time_limit.TimeLimit, tables: MessageTables) -> None:
        self.backend = backend
        self.tables = tables
        """What the blocks' states read through (see :func:`simulate`)."""
        self.config = config
        self.base = base
        self.options = options
        self.chaindb = chaindb
        self.budget = budget
        """The gas the calls may still use, all blocks together."""
        self.limit = limit
        self.validate = options.validation
        self.hashes: list[Hash32] = []

    def run(self) -> tuple[SimulatedBlock, ...]:
        planned = plan_blocks(self.base, self.options.block_state_calls)
        out: list[SimulatedBlock] = []
        parent = self.base
        coinbase, gas_limit, difficulty = parent.coinbase, parent.gas_limit, parent.difficulty
        for position, item in enumerate(planned):
            self._check_time()
            rules = self.config.rules(item.number, item.time)
            overrides = item.overrides
            # the header fields carried from the block before (geth's makeHeaders)
            if rules.proof_of_stake:
                difficulty = 0
            if overrides.difficulty is not None:
                difficulty = overrides.difficulty
            if overrides.gas_limit is not None:
                gas_limit = overrides.gas_limit
            if overrides.fee_recipient is not None:
                coinbase = overrides.fee_recipient
            built = self._build(item, rules, parent, coinbase, gas_limit, difficulty,
                                last=position == len(planned) - 1)
            out.append(built)
            parent = built.block.header
            self.hashes.append(parent.hash)
        return tuple(out)

    def _check_time(self) -> None:
        """Stop past the time limit, or hand back to a host past its budget."""
        time_limit.check_budget()
        if self.limit.deadline.expired():
            raise SimulationRefused(f"execution aborted (timeout = {go_duration(self.limit.timeout)})",
                                    INTERNAL_ERROR)

    # -- one block ------------------------------------------------------------------------

    def _build(self, item: _Planned, rules: Any, parent: Header, coinbase: Address,
               gas_limit: int, difficulty: int, last: bool) -> SimulatedBlock:
        overrides = item.overrides
        base_fee: int | None = None
        if rules.base_fee:
            if overrides.base_fee_per_gas is not None:
                base_fee = overrides.base_fee_per_gas
            elif self.validate:
                base_fee = next_base_fee(self.config, parent)
            else:
                base_fee = 0
        excess_blob_gas: int | None = None
        blob_fee: int | None = None
        if rules.blob is not None:
            excess_blob_gas = 0
            parent_rules = self.config.rules(parent.number, parent.timestamp)
            if parent_rules.blob is not None:
                excess_blob_gas = excess_blob_gas_after(
                    rules.blob, rules.blob_reserve_price, parent.excess_blob_gas or 0,
                    parent.blob_gas_used or 0, parent.base_fee_per_gas or 0)
            blob_fee = blob_base_fee(rules.blob, excess_blob_gas)
            if overrides.blob_base_fee is not None:
                blob_fee = overrides.blob_base_fee
        withdrawals = (overrides.withdrawals or ()) if rules.withdrawals else None
        draft = Header(
            parent_hash=parent.hash, uncles_hash=EMPTY_UNCLES_HASH, coinbase=coinbase,
            state_root=parent.state_root, transactions_root=EMPTY_TRIE_ROOT,
            receipts_root=EMPTY_TRIE_ROOT, logs_bloom=b"\x00" * 256, difficulty=difficulty,
            number=item.number, gas_limit=gas_limit, gas_used=0, timestamp=item.time,
            extra_data=b"", mix_hash=overrides.prev_randao or ZERO_HASH, nonce=b"\x00" * 8,
            base_fee_per_gas=base_fee,
            withdrawals_root=EMPTY_TRIE_ROOT if rules.withdrawals else None,
            blob_gas_used=0 if rules.blob is not None else None,
            excess_blob_gas=excess_blob_gas,
            parent_beacon_block_root=(overrides.beacon_root or ZERO_HASH) if rules.beacon_root else None,
            requests_hash=sha256().digest() if rules.requests else None,
        )
        fork_vm = self.config.vm_class(item.number, item.time)
        vm_class = self._vm_class(fork_vm)
        encoded_draft = encode_header(draft)
        evm_header = self._evm_header(dict(vm_class.get_block_class()._meta.fields)["header"],
                                      encoded_draft)
        ancestors = _AncestorHashes(self.backend, self.base, self.hashes)
        prepared = None
        if not item.state_overrides:
            prepared = self._after_system_writes(vm_class, evm_header, encoded_draft, blob_fee,
                                                 ancestors)
        if prepared is not None:  # (the block starts from the state after its system writes)
            evm_header = prepared
        vm = self._vm(vm_class, evm_header, self.chaindb, ancestors)
        state = vm.state
        if blob_fee is not None:
            with_blob_base_fee(state, blob_fee)
        # a refused call's frame would be opened and dropped empty by _BlockLogs: not wrapped
        state.computation_class = hooked_class(state.computation_class, refusals=False)
        apply_state_overrides(state, item.state_overrides)
        tracer = _BlockLogs(self.options.trace_transfers)
        if prepared is None:
            _system_writes(vm, evm_header)
        work = _BlockWork()
        for index, request in enumerate(item.calls):
            self._run_call(vm, state, tracer, rules, draft, blob_fee, work, index, request)
        requests_hash = self._requests_hash(vm, state, rules, work) if rules.requests else None
        if not rules.proof_of_stake:  # the miner's reward, as ethash's Finalize pays it
            reward = vm.get_block_reward()
            if reward:
                state.delta_balance(EvmAddress(coinbase), reward)
        if withdrawals:
            for withdrawal in withdrawals:
                state.delta_balance(EvmAddress(withdrawal.address), withdrawal.amount * 10**9)
            for address in {w.address for w in withdrawals}:
                if state.account_is_empty(EvmAddress(address)):
                    state.delete_account(EvmAddress(address))
        if last:  # (no block after it reads its state: its root is all it needs)
            state.make_state_root()
        else:
            state.persist()
        built = encode_header(replace(
            draft,
            state_root=state.state_root,
            transactions_root=ordered_trie_root(work.encoded),
            receipts_root=ordered_trie_root(work.receipts),
            logs_bloom=work.bloom.to_bytes(256, "big"),
            gas_used=work.gas_used,
            blob_gas_used=work.blob_gas_used if rules.blob is not None else None,
            withdrawals_root=(ordered_trie_root([rlp.encode(withdrawal_item(w)) for w in withdrawals])
                              if withdrawals is not None else None),
            requests_hash=requests_hash,
        ))
        header, size = self._header_and_size(built, work, withdrawals)
        included = tuple(
            IncludedTransaction(transaction=tx, hash=tx_hash, sender=sender,
                                block_hash=header.hash, block_number=header.number,
                                block_timestamp=header.timestamp, index=index,
                                gas_price=effective_gas_price(tx, base_fee))
            for index, (tx, tx_hash, sender) in enumerate(zip(work.transactions, work.hashes,
                                                              work.senders, strict=True)))
        block = Block(header=header, transactions=included, uncles=(),
                      withdrawals=tuple(withdrawals) if withdrawals is not None else None, size=size)
        calls = tuple(
            CallResult(return_data=output,
                       logs=tuple(_LOG(address, topics, data, header.number, work.hashes[index],
                                       index, header.hash, header.timestamp, log_index, False)
                                  for address, topics, data, log_index in logs),
                       gas_used=used, max_used_gas=peak, status=status, error=error)
            for index, (output, logs, used, peak, status, error) in enumerate(work.results))
        return SimulatedBlock(block=block, calls=calls)

    # (the steps ``tests/support/plain_simulate.py`` takes on py-evm's own classes instead)

    def _vm_class(self, fork_vm: Any) -> Any:
        """The VM class a block of ``fork_vm``'s fork runs on (lean classes with overlay tries)."""
        return _simulation_vm_class(simulation_vm_class(fork_vm))

    def _evm_header(self, header_class: Any, encoded: bytes) -> Any:
        """py-evm's header decoded from ``encoded``, kept in the tables."""
        headers = self.tables.evm_headers
        evm_header = headers.get((header_class, encoded))
        if evm_header is None:
            evm_header = rlp.decode(encoded, sedes=header_class)
            headers.put((header_class, encoded), evm_header)
        return evm_header

    def _header_and_size(self, built: bytes, work: _BlockWork,
                         withdrawals: Sequence[Withdrawal] | None) -> tuple[Header, int]:
        """The block's header from its encoding ``built``, and the block's size."""
        return (header_from_fields(decode_list(built), raw=built),
                _block_size(built, work.encoded, withdrawals))

    def _evm_tx(self, vm: Any, request: CallRequest, message: Message, nonce: int, gas: int,
                london: bool) -> Any:
        """What py-evm's executor runs for the call: eth_call's envelope where it will do."""
        if london and request.authorization_list is None and request.blob_versioned_hashes is None:
            return self._envelope(vm, request, message, gas)
        return self._evm_transaction(vm, request, message, nonce, gas, london)

    def _vm(self, vm_class: Any, evm_header: Any, chaindb: Any, ancestors: _AncestorHashes) -> Any:
        """A VM for a simulated block over ``chaindb``, reading through the simulation's tables."""
        vm = vm_at(vm_class, evm_header, chaindb, self.config.chain_id)
        vm.simulated_hashes = ancestors
        share_tables(vm, self.tables)
        return vm

    def _after_system_writes(self, vm_class: Any, evm_header: Any, encoded_draft: bytes,
                             blob_fee: int | None, ancestors: _AncestorHashes) -> Any | None:
        """py-evm's header of a block without state overrides, after its system writes."""

        def write(chaindb: Any) -> Any:
            vm = self._vm(vm_class, evm_header, chaindb, ancestors)
            _system_writes(vm, evm_header)
            vm.state.persist()
            return evm_header.copy(state_root=vm.state.state_root)

        return after_system_writes(self.tables, (vm_class, encoded_draft, blob_fee),
                                   self.chaindb.db, write)

    def _requests_hash(self, vm: Any, state: Any, rules: Any, work: _BlockWork) -> bytes:
        """EIP-7685: the deposits the block's logs made, then what the withdrawal and
        consolidation queues hand out (their system calls change their storage)."""
        deposit_address = _deposit_contract(self.config)
        deposits = b"".join(_deposit_request(data) for address, topics, data in work.logs
                            if address == deposit_address and topics and topics[0] == DEPOSIT_TOPIC)
        # (py-evm's steps only append to the block's list of requests)
        collected = SimpleNamespace(block_requests=[b"\x00" + deposits])
        vm.process_withdrawal_request_data(collected)
        vm.process_consolidation_request_data(collected)
        state.lock_changes()
        digest = sha256()
        for request in collected.block_requests:
            if len(request) > 1:
                digest.update(sha256(request).digest())
        return digest.digest()

    # -- one call -------------------------------------------------------------------------

    def _run_call(self, vm: Any, state: Any, tracer: _BlockLogs, rules: Any, header: Header,
                  blob_fee: int | None, work: _BlockWork, index: int,
                  request: CallRequest) -> None:
        self._check_time()
        sender = request.sender or ZERO_ADDRESS
        nonce = request.nonce if request.nonce is not None else state.get_nonce(EvmAddress(sender))
        remaining = header.gas_limit - work.gas_used
        wanted = request.gas if request.gas is not None else remaining
        if remaining < wanted:
            raise SimulationRefused(f"block gas limit reached: remaining: {remaining}, required: {wanted}",
                                    BLOCK_GAS_LIMIT_REACHED)
        gas = min(wanted, self.budget)
        capped = gas < wanted
        message = to_message(request, header.base_fee_per_gas, self.config.chain_id)
        transaction = _transaction_of(request, message, nonce, gas, self.config.chain_id,
                                      header.base_fee_per_gas is not None)
        encoded_tx = encode_transaction(transaction)
        tx_hash = keccak256(encoded_tx)
        work.transactions.append(transaction)
        work.encoded.append(encoded_tx)
        work.hashes.append(tx_hash)
        work.senders.append(sender)
        tracer.reset()
        london = header.base_fee_per_gas is not None
        evm_tx = self._evm_tx(vm, request, message, nonce, gas, london)
        try:
            self._pre_check(state, rules, request, message, nonce, gas, header, blob_fee,
                            evm_tx.intrinsic_gas)
        except _Refusal as refusal:
            raise SimulationRefused(f"err: {refusal.reason} (supplied gas {gas})", refusal.code) from None
        state.lock_changes()
        try:
            with attached(tracer), self.limit.applied(state):
                computation = self._execute(state, evm_tx, rules.transient_storage)
        except ExecutionAborted as exc:  # (geth answers its timeout as a refused call: -32603)
            raise SimulationRefused(exc.message, INTERNAL_ERROR) from None
        before_refund = gas - computation.get_gas_remaining()
        refund = min(computation.get_gas_refund(), before_refund // (5 if rules.base_fee else 2))
        used = before_refund - refund
        peak = before_refund
        if rules.calldata_floor:
            floor = floor_data_gas(request.data)
            if used < floor:
                used = floor
                peak = max(peak, floor)
        self.budget -= used
        work.gas_used += used
        blob_gas = GAS_PER_BLOB * len(request.blob_versioned_hashes or ())
        work.blob_gas_used += blob_gas
        failed = computation.is_error
        receipt_logs = [] if failed else [
            (address, tuple(t.to_bytes(32, "big") for t in topics), data)
            for address, topics, data in computation.get_log_entries()]
        bloom = logs_bloom(receipt_logs)
        work.bloom |= bloom
        work.logs.extend(receipt_logs)
        # a receipt commits to its outcome from Byzantium on, to the state after it before
        outcome = ((b"" if failed else b"\x01") if rules.receipt_status
                   else state.make_state_root())
        payload = [outcome, int_to_bytes(work.gas_used),
                   bloom.to_bytes(256, "big"),
                   [[address, list(topics), data] for address, topics, data in receipt_logs]]
        encoded = encode_nested(payload)
        kind = transaction.type
        work.receipts.append(encoded if kind == 0 else bytes([kind]) + encoded)
        error: CallError | None = None
        output = b""
        if failed:
            if isinstance(computation.error, Revert):
                reason = decode_revert_reason(computation.output)
                error = CallError(message="execution reverted" + (f": {reason}" if reason is not None else ""),
                                  code=REVERTED, data=bytes(computation.output))
            else:
                text = vm_error_message(computation.error)
                if capped:
                    text += " (gas limit was capped by the RPC server's global gas cap)"
                error = CallError(message=text, code=VM_ERROR)
            computation.error.__traceback__ = None
        else:
            output = bytes(computation.output)
        work.results.append((output, [] if failed else list(tracer.logs()), used, peak,
                             0 if failed else 1, error))

    @staticmethod
    def _execute(state: Any, evm_tx: Any, cancun: bool) -> Any:
        """py-evm's steps for a transaction after its validation (which geth's checks replace)."""
        executor = state.get_transaction_executor()
        if type(evm_tx) is Envelope and type(executor).build_evm_message is CANCUN_MESSAGE:
            message = _cancun_message(state, executor, evm_tx)
        else:
            message = executor.build_evm_message(evm_tx)
        computation = executor.build_computation(message, evm_tx)
        if type(evm_tx) is Envelope and type(executor).finalize_computation is SPURIOUS_FINALIZE:
            _finalize(state, executor, evm_tx, computation)
        else:
            computation = executor.finalize_computation(evm_tx, computation)
        if cancun:  # (transient storage lives for one transaction)
            state.clear_transient_storage()
        state.lock_changes()
        return computation

    def _pre_check(self, state: Any, rules: Any, request: CallRequest, message: Message,
                   nonce: int, gas: int, header: Header, blob_fee: int | None,
                   intrinsic: int) -> None:
        """geth's checks before a call runs (the nonce only when validating), with its codes."""
        address = EvmAddress(message.sender)
        tx = replace(message_fields(message, gas, rules.base_fee), nonce=nonce)
        checks = Checks(tx_type=False, nonce=self.validate, sender_code=False, gas_cap=False,
                        block_limits=False, free_fees=not self.validate)
        block = BlockContext(base_fee=(header.base_fee_per_gas or 0) if rules.base_fee else None,
                             blob_base_fee=blob_fee if rules.blob is not None else None)
        account = SenderAccount(state.get_nonce(address) if self.validate else 0,
                                state.get_balance(address))
        try:
            validate_transaction(rules, tx, block, account, sender=message.sender, checks=checks,
                                 intrinsic=intrinsic)
        except InvalidTransaction as exc:
            raise _Refusal(str(exc), _REFUSAL_CODES.get(type(exc), INTERNAL_ERROR)) from None

    @staticmethod
    def _envelope(vm: Any, request: CallRequest, message: Message, gas: int) -> Envelope:
        """The call as eth_call's envelope: what py-evm's executor reads, nothing validated."""
        envelope = Envelope(type_id=DYNAMIC_FEE, sender=message.sender, to=request.to or b"",
                            gas=gas, value=request.value, data=request.data,
                            access_list=evm_access_list(request.access_list),
                            gas_price=message.gas_price,
                            max_fee_per_gas=message.fee_cap,
                            max_priority_fee_per_gas=message.tip_cap)
        vm_class: Any = type(vm)
        envelope.intrinsic_gas = intrinsic_gas_rule(vm_class, DYNAMIC_FEE)(envelope)
        return envelope

    def _evm_transaction(self, vm: Any, request: CallRequest, message: Message, nonce: int,
                         gas: int, london: bool) -> Any:
        """The call as the unsigned py-evm transaction it executes as, from its sender."""
        tx = unsigned_transaction(vm.get_transaction_builder(), message, nonce, gas,
                                  self.config.chain_id, london)
        return SpoofTransaction(tx, from_=EvmAddress(message.sender))


CANCUN_MESSAGE = CancunTransactionExecutor.build_evm_message


SPURIOUS_FINALIZE = SpuriousDragonTransactionExecutor.finalize_computation


def _finalize(state: Any, executor: Any, envelope: Envelope, computation: Any) -> None:
    """Spurious Dragon's ``finalize_computation`` at the computation's gas price, no debug lines."""
    gas_remaining = computation.get_gas_remaining()
    gas_used = envelope.gas - gas_remaining
    gas_refund = executor.calculate_gas_refund(computation, gas_used)
    floor = executor.calc_data_floor_gas(envelope, gas_used, gas_refund)
    computation.data_floor_gas = floor
    refund = (gas_refund + gas_remaining - floor) * computation.transaction_context.gas_price
    if refund:
        state.delta_balance(computation.msg.sender, refund)
    fee = (envelope.gas - gas_remaining - gas_refund + floor) * state.get_tip(envelope)
    state.delta_balance(state.coinbase, fee)
    for account in computation.get_accounts_for_deletion():
        state.delete_account(account)
    for account in collect_touched_accounts(computation):
        if state.account_exists(account) and state.account_is_empty(account):
            state.delete_account(account)


def _system_writes(vm: Any, evm_header: Any) -> None:
    """The system calls before a block's transactions (beacon root, parent hash), changes locked."""
    vm.block_preprocessing(SimpleNamespace(header=evm_header, number=evm_header.block_number))
    vm.state.lock_changes()


def _cancun_message(state: Any, executor: Any, envelope: Envelope) -> Any:
    """Cancun's ``build_evm_message`` for a transaction without blobs, without its debug line."""
    sender = envelope.sender
    state.delta_balance(sender, -1 * (envelope.gas * state.get_gas_price(envelope)))
    state.increment_nonce(sender)
    refund = executor.calc_message_refund(envelope)
    if envelope.to == b"":
        create_address = generate_contract_address(EvmAddress(sender), state.get_nonce(sender) - 1)
        data, code, is_delegation = b"", envelope.data, False
    else:
        create_address = None
        data = envelope.data
        code, delegation = executor.get_code_at_address(envelope.to)
        is_delegation = delegation is not None
    return CheckedMessage(envelope.gas - envelope.intrinsic_gas, envelope.to, sender,
                          envelope.value, data, code, create_address, is_delegation, refund)


def _transaction_of(request: CallRequest, message: Message, nonce: int, gas: int, chain_id: int,
                    london: bool) -> Transaction:
    """The call as the unsigned transaction the block lists (geth's ``ToTransaction``)."""
    if request.gas_price is not None or not london:
        return LegacyTransaction(nonce=nonce, gas_price=request.gas_price or 0, gas=gas, to=request.to,
                                 value=request.value, data=request.data, v=0, r=0, s=0)
    fields: dict[str, Any] = dict(
        chain_id=chain_id, nonce=nonce, max_priority_fee_per_gas=request.max_priority_fee_per_gas or 0,
        max_fee_per_gas=request.max_fee_per_gas or 0, gas=gas, to=request.to or ZERO_ADDRESS,
        value=request.value, data=request.data, access_list=request.access_list or (),
        y_parity=0, r=0, s=0)
    if request.authorization_list is not None:
        return SetCodeTransaction(authorization_list=request.authorization_list, **fields)
    if request.blob_versioned_hashes is not None:
        return BlobTransaction(max_fee_per_blob_gas=message.blob_fee_cap or 0,
                               blob_versioned_hashes=request.blob_versioned_hashes, **fields)
    return DynamicFeeTransaction(**{**fields, "to": request.to})


DEPOSIT_TOPIC = bytes.fromhex("649bbc62d0e31342afea4e5cd82d4049e7e1ee912fc0889aa790803be39038c5")
"""The deposit contract's ``DepositEvent`` topic."""
MAINNET_DEPOSIT_CONTRACT = bytes.fromhex("00000000219ab540356cbb839cbe05303d7705fa")


def _deposit_contract(config: Any) -> bytes:
    """The chain's deposit contract (its genesis ``depositContractAddress``, else mainnet's)."""
    given = (getattr(config, "source", None) or {}).get("depositContractAddress")
    if isinstance(given, str):
        return bytes.fromhex(given[2:] if given.startswith("0x") else given)
    return MAINNET_DEPOSIT_CONTRACT


def _deposit_request(data: bytes) -> bytes:
    """A deposit request's bytes from its ``DepositEvent`` data."""
    return data[192:240] + data[288:320] + data[352:360] + data[416:512] + data[544:552]


def _block_size(header: bytes, transactions: Sequence[bytes],
                withdrawals: Sequence[Withdrawal] | None) -> int:
    """The length of a block's RLP (no uncles) from its header's and transactions' encodings."""
    listed = sum(len(encoded) if encoded[0] >= 0xC0 else len(encode_nested(encoded))
                 for encoded in transactions)
    payload = len(header) + rlp_list_length(listed) + rlp_list_length(0)
    if withdrawals is not None:
        payload += len(encode_nested([withdrawal_item(w) for w in withdrawals]))
    return rlp_list_length(payload)
