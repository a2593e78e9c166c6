"""eth_call: execute a message on the state after a block, in that block's context.

Semantics follow geth: a missing ``from`` is the zero address; the nonce is not checked; gas
defaults to geth's 50,000,000 and is capped at ``GAS_CAP_FACTOR`` times the block's gas limit; a call that
names no gas price runs with a zero base fee, so an unfunded sender can call. A REVERT answers
error code 3 with the decoded reason and the raw payload.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from eth import exceptions as vm_errors
from eth.consensus.context import ConsensusContext
from eth.exceptions import Revert
from eth.vm.chain_context import ChainContext
from eth.vm.spoof import SpoofTransaction
from eth_typing import Address as EvmAddress
from eth_typing import Hash32
from eth_utils import ValidationError, to_checksum_address

from ..backend import ConfigSource, StateSource
from ..errors import ExecutionFailed, ExecutionReverted, InvalidParams, StateUnavailable
from ..forks import fork_at_least
from ..lru import LRU
from ..models import BlockRef, CallRequest
from .resolve import ChainHeaders, require_header

GAS_CAP_FACTOR = 10
DEFAULT_GAS = 50_000_000
"""Gas of a call that names none: geth's default RPC gas cap (still under the 10x cap)."""
ZERO_ADDRESS = b"\x00" * 20


class ExecutableChain(ChainHeaders, StateSource, ConfigSource, Protocol):
    """A block's header, its state, and the fork rules to execute on it."""

ERROR_SELECTOR = bytes.fromhex("08c379a0")
PANIC_SELECTOR = bytes.fromhex("4e487b71")
PANIC_REASONS = {
    0x00: "generic panic",
    0x01: "assert(false)",
    0x11: "arithmetic underflow or overflow",
    0x12: "division or modulo by zero",
    0x21: "enum overflow",
    0x22: "invalid encoded storage byte array accessed",
    0x31: "out-of-bounds array access; popping on an empty array",
    0x32: "out-of-bounds access of an array or bytesN",
    0x41: "out of memory",
    0x51: "uninitialized function",
}


def decode_revert_reason(payload: bytes) -> str | None:
    """The reason of an ABI ``Error(string)`` or ``Panic(uint256)`` revert, else None."""
    if payload[:4] == ERROR_SELECTOR and len(payload) >= 4 + 64:
        body = payload[4:]
        offset = int.from_bytes(body[:32], "big")
        if offset + 32 > len(body):
            return None
        length = int.from_bytes(body[offset:offset + 32], "big")
        raw = body[offset + 32:offset + 32 + length]
        if len(raw) != length:
            return None
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if payload[:4] == PANIC_SELECTOR and len(payload) == 4 + 32:
        code = int.from_bytes(payload[4:], "big")
        return PANIC_REASONS.get(code, f"unknown panic code: {code:#x}")
    return None


def call(backend: ExecutableChain, request: CallRequest, block: BlockRef,
         states: CallStates | None = None) -> bytes:
    """Return data of the call, or raise ExecutionReverted / ExecutionFailed. With
    ``states``, the post-block state is taken from (and kept in) that cache."""
    header = require_header(backend, block)
    chaindb = backend.evm_database()
    config = backend.chain_config()
    if config is None:
        raise StateUnavailable("the backend does not know the chain's fork schedule")
    try:
        evm_header = chaindb.get_block_header_by_hash(Hash32(header.hash))
    except Exception as exc:
        raise StateUnavailable(f"no state for block {header.number}") from exc

    cap = GAS_CAP_FACTOR * header.gas_limit
    gas = min(DEFAULT_GAS if request.gas is None else request.gas, cap)
    _check_fields_for_fork(request, config.fork_at(header.number, header.timestamp),
                           header.base_fee_per_gas is not None, gas)
    priced = any(
        v for v in (request.gas_price, request.max_fee_per_gas, request.max_priority_fee_per_gas)
    )
    zero_base_fee = not priced and getattr(evm_header, "base_fee_per_gas", None) is not None
    if zero_base_fee:
        evm_header = evm_header.copy(base_fee_per_gas=0)
    sender = EvmAddress(request.sender or ZERO_ADDRESS)
    state_at = states.state_at if states is not None else _fresh_state
    with state_at(chaindb, config, header.number, header.timestamp, evm_header,
                          zero_base_fee) as (vm, state):
        nonce = state.get_nonce(sender)
        transaction = _unsigned(vm, request, gas, nonce, header.base_fee_per_gas is not None)
        spoofed: Any = SpoofTransaction(transaction, from_=sender)
        try:
            computation = state.apply_transaction(spoofed)
        except ValidationError as exc:
            raise ExecutionFailed(_validation_message(str(exc))) from None
    if computation.is_error:
        error = computation.error
        if isinstance(error, Revert):
            payload = computation.output
            reason = decode_revert_reason(payload)
            message = "execution reverted" + (f": {reason}" if reason is not None else "")
            raise ExecutionReverted(message, "0x" + payload.hex())
        raise ExecutionFailed(_vm_error_message(error))
    return bytes(computation.output)


class CallStates:
    """Recently used post-block states, reused across calls (a dispatcher owns one per
    backend).

    Building a py-evm state (and, from Prague, reading its system contracts) costs more than
    most calls. A call runs on a snapshot of a cached state and is reverted afterwards, the
    mechanism py-evm itself uses to undo a failed transaction, so no call sees another's
    writes. One lock per state: calls at the same block take turns; others do not wait.
    """

    def __init__(self, max_states: int = 16) -> None:
        self._states: LRU[tuple[int, bytes, bool], tuple[threading.Lock, Any]] = LRU(max_states)

    @contextmanager
    def state_at(self, chaindb: Any, config: Any, number: int, timestamp: int, evm_header: Any,
                 zero_base_fee: bool) -> Iterator[tuple[Any, Any]]:
        key = (id(chaindb.db), evm_header.hash, zero_base_fee)
        lock, vm = self._states.get_or_put(
            key, lambda: (threading.Lock(), _vm(chaindb, config, number, timestamp, evm_header)))
        with lock:
            state = vm.state
            snapshot = state.snapshot()
            try:
                yield vm, state
            finally:
                state.revert(snapshot)

    def clear(self) -> None:
        self._states.clear()


def _vm(chaindb: Any, config: Any, number: int, timestamp: int, evm_header: Any) -> Any:
    return config.vm_class(number, timestamp)(
        header=evm_header, chaindb=chaindb, chain_context=ChainContext(config.chain_id),
        consensus_context=ConsensusContext(chaindb.db),
    )


@contextmanager
def _fresh_state(chaindb: Any, config: Any, number: int, timestamp: int, evm_header: Any,
                 zero_base_fee: bool) -> Iterator[tuple[Any, Any]]:
    vm = _vm(chaindb, config, number, timestamp, evm_header)
    yield vm, vm.state


def _check_fields_for_fork(request: CallRequest, fork: str, london: bool, gas: int) -> None:
    """Refuse what the block's rules cannot carry, in geth's order and words."""
    if request.conflicts is not None:
        raise ExecutionFailed(request.conflicts)
    fee_market = request.max_fee_per_gas is not None or request.max_priority_fee_per_gas is not None
    if fee_market and not london:
        raise ExecutionFailed("maxFeePerGas and maxPriorityFeePerGas are not valid before London is active")
    sender = to_checksum_address(request.sender or ZERO_ADDRESS)
    for wanted, first_fork, kind in (
        (request.access_list is not None, "berlin", "access list"),
        (request.wants_blobs, "cancun", "blob"),
        (request.authorization_list is not None, "prague", "setcode"),
    ):
        if wanted and not fork_at_least(fork, first_fork):
            raise ExecutionFailed(
                f"err: transaction type not supported: {kind} tx (sender {sender}) (supplied gas {gas})"
            )


def _unsigned(vm: Any, request: CallRequest, gas: int, nonce: int, london: bool) -> Any:
    builder = vm.get_transaction_builder()
    to = request.to or b""
    access_list = [(e.address, [int.from_bytes(k, "big") for k in e.storage_keys])
                   for e in request.access_list or ()]
    fee_market = request.max_fee_per_gas is not None or request.max_priority_fee_per_gas is not None
    if request.blob_versioned_hashes or request.authorization_list is not None:
        return _blob_or_set_code(builder, vm, request, gas, nonce, access_list)
    if fee_market:
        max_fee = request.max_fee_per_gas
        tip = request.max_priority_fee_per_gas
        if max_fee is None:
            max_fee = tip or 0
        if tip is None:
            tip = 0
        if tip > max_fee:
            raise InvalidParams(
                f"max priority fee per gas higher than max fee per gas: {tip} > {max_fee}"
            )
        return builder.new_unsigned_dynamic_fee_transaction(
            chain_id=vm.chain_context.chain_id, nonce=nonce, max_priority_fee_per_gas=tip,
            max_fee_per_gas=max_fee, gas=gas, to=to, value=request.value,
            data=request.data, access_list=access_list,
        )
    gas_price = request.gas_price or 0
    if request.access_list is not None:
        return builder.new_unsigned_access_list_transaction(
            chain_id=vm.chain_context.chain_id, nonce=nonce, gas_price=gas_price, gas=gas,
            to=to, value=request.value, data=request.data, access_list=access_list,
        )
    return builder.create_unsigned_transaction(
        nonce=nonce, gas_price=gas_price, gas=gas, to=to, value=request.value, data=request.data,
    )


def _blob_or_set_code(builder: Any, vm: Any, request: CallRequest, gas: int, nonce: int,
                      access_list: list[Any]) -> Any:
    """A blob or set-code call: fee caps default to what lets it run at a zero base fee."""
    max_fee = request.max_fee_per_gas or request.gas_price or 0
    tip = request.max_priority_fee_per_gas or 0
    common = dict(chain_id=vm.chain_context.chain_id, nonce=nonce, max_priority_fee_per_gas=tip,
                  max_fee_per_gas=max_fee, gas=gas, to=request.to or b"", value=request.value,
                  data=request.data, access_list=access_list)
    if request.authorization_list is not None:
        from eth.vm.forks.prague.transactions import Authorization as EvmAuthorization

        authorizations = [
            EvmAuthorization(a.chain_id, a.address, a.nonce, a.y_parity, a.r, a.s)
            for a in request.authorization_list
        ]
        return builder.new_unsigned_set_code_transaction(authorization_list=authorizations, **common)
    return builder.new_unsigned_blob_transaction(
        max_fee_per_blob_gas=request.max_fee_per_blob_gas or 0,
        blob_versioned_hashes=list(request.blob_versioned_hashes or ()),
        **common,
    )


def _validation_message(detail: str) -> str:
    lowered = detail.lower()
    if "balance" in lowered or "afford" in lowered:
        return "insufficient funds for gas * price + value"
    if "intrinsic" in lowered:
        return "intrinsic gas too low"
    if "base fee" in lowered:
        return "max fee per gas less than block base fee"
    return detail


# geth's wording for py-evm's VM errors (direct subclasses of VMError, none of another).
_VM_ERROR_MESSAGES: dict[type[Exception], str] = {
    vm_errors.OutOfGas: "out of gas",
    vm_errors.StackDepthLimit: "max call depth exceeded",
    vm_errors.InsufficientStack: "stack underflow",
    vm_errors.FullStack: "stack limit reached 1024",
    vm_errors.InvalidJumpDestination: "invalid jump destination",
    vm_errors.WriteProtection: "write protection",
}


def _vm_error_message(error: Exception) -> str:
    if isinstance(error, vm_errors.InvalidInstruction):
        return f"invalid opcode: {_opcode_name(str(error))}"
    for kind, message in _VM_ERROR_MESSAGES.items():
        if isinstance(error, kind):
            return message
    return f"execution failed: {error or type(error).__name__}"


def _opcode_name(detail: str) -> str:
    """geth names the opcode (``CHAINID``); py-evm gives its value (``Invalid opcode 0x46 @ 8``)."""
    from eth.vm import opcode_values

    match = re.search(r"0x([0-9a-fA-F]+)", detail)
    if match is None:
        return detail
    value = int(match.group(1), 16)
    for name, code in vars(opcode_values).items():
        if name.isupper() and code == value:
            return name
    return f"opcode {value:#x} not defined"
