"""eth_createAccessList: the accounts and storage slots a message touches, found as geth does.

geth fills the fee fields as for a transaction (a suggested tip, a fee cap of tip plus twice
the base fee), then runs the message with the access list the previous run touched until a
run touches nothing new. A run notes (:func:`~ethread.evm.hooks.watched_class`) the slots
SLOAD and SSTORE read and the accounts BALANCE, EXTCODE*, SELFDESTRUCT and the CALL family
name, except the sender, the recipient (or created contract), the precompiles and the
authorities. The answer carries the last run's gas used and, when it failed, why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import rlp
from eth._utils.address import generate_contract_address
from eth_keys.datatypes import Signature
from eth_typing import Address as EvmAddress

from ..errors import ExecutionFailed
from ..evm.hooks import Slot, watched_class
from ..models import (
    AccessListEntry,
    AccessListResult,
    AccessListTransaction,
    BlobTransaction,
    BlockRef,
    CallRequest,
    DynamicFeeTransaction,
    LegacyTransaction,
    SetCodeTransaction,
    StateOverride,
    Transaction,
)
from ..rlpcodec.transactions import transaction_hash
from ..validation import check_instance
from .call import vm_error_message
from .message import CallStates, ExecutableChain, Outcome, PreparedMessage, Rejected, execution, gas_for
from .resolve import require_header

CALL_NEW_ACCOUNT_GAS = 25_000
SET_CODE_MAGIC = b"\x05"

_SLOT_OPS = frozenset({0x54, 0x55})  # SLOAD, SSTORE
_ADDRESS_OPS = frozenset({0x31, 0x3B, 0x3C, 0x3F, 0xFF})  # BALANCE, EXTCODESIZE/COPY/HASH, SELFDESTRUCT
_CALL_OPS = frozenset({0xF1, 0xF2, 0xF4, 0xFA})  # CALL, CALLCODE, DELEGATECALL, STATICCALL


class Touched:
    """What one run touched: account -> slots, in the order first seen."""

    def __init__(self, start: tuple[AccessListEntry, ...], excluded: frozenset[bytes]) -> None:
        self.excluded = excluded
        self.accounts: dict[bytes, set[bytes]] = {}
        for entry in start:
            if entry.address in excluded:
                continue
            self.accounts.setdefault(entry.address, set()).update(entry.storage_keys)

    def slot(self, address: bytes, slot: bytes) -> None:
        """Record a storage slot of ``address`` as read or written."""
        self.accounts.setdefault(address, set()).add(slot)

    def account(self, address: bytes) -> None:
        """Record an account as touched, unless the access list leaves it out."""
        if address not in self.excluded:
            self.accounts.setdefault(address, set())

    def access_list(self) -> tuple[AccessListEntry, ...]:
        """What was touched as an access list, accounts and slots sorted."""
        return tuple(AccessListEntry(address=address, storage_keys=tuple(sorted(slots)))
                     for address, slots in sorted(self.accounts.items()))


def _word(value: int | bytes) -> bytes:
    if isinstance(value, int):
        return value.to_bytes(32, "big")
    return bytes(value).rjust(32, b"\x00")


_touching: Slot[Touched] = Slot()


def _note_slot(computation: Any) -> None:
    stack = computation._stack.values
    touched = _touching.value
    if stack and touched is not None:
        touched.slot(bytes(computation.msg.storage_address), _word(stack[-1]))


def _note_account(computation: Any) -> None:
    stack = computation._stack.values
    touched = _touching.value
    if stack and touched is not None:
        touched.account(_word(stack[-1])[12:])


def _note_callee(computation: Any) -> None:
    stack = computation._stack.values
    touched = _touching.value
    if len(stack) >= 5 and touched is not None:
        touched.account(_word(stack[-2])[12:])


_WATCHERS = (*((value, _note_slot) for value in sorted(_SLOT_OPS)),
             *((value, _note_account) for value in sorted(_ADDRESS_OPS)),
             *((value, _note_callee) for value in sorted(_CALL_OPS)))


def _run_noting(attempt: PreparedMessage, gas: int, touched: Touched) -> Outcome:
    """``attempt.run(gas)`` noting into ``touched`` what its watched opcodes touch."""
    with _touching.holding(touched):
        return attempt.run(gas, watched_class(attempt.state.computation_class, _WATCHERS,
                                              prefix=""))


def create_access_list(backend: ExecutableChain, request: CallRequest, block: BlockRef,
                       suggested_tip: Callable[[], int], states: CallStates | None = None, *,
                       state_override: StateOverride = (),
                       timeout: float | None = None) -> AccessListResult:
    """eth_createAccessList (``suggested_tip``: asked for only when the request names no fees)."""
    check_instance(request, CallRequest, "request")
    header = require_header(backend, block)
    config = backend.chain_config()
    request = with_fee_defaults(request, header.base_fee_per_gas, suggested_tip,
                                blob_base_fee=None if config is None else _blob_base_fee(config, header))
    gas = gas_for(request, header.gas_limit)
    with execution(backend, request, block, states=states, state_override=state_override,
                   own_state=True, timeout=timeout) as run:
        sender = run.message.sender
        nonce = request.nonce
        if nonce is None:
            nonce = run.state.get_nonce(EvmAddress(sender))
        recipient = request.to or generate_contract_address(EvmAddress(sender), nonce)
        if request.authorization_list and len(request.authorization_list) > gas // CALL_NEW_ACCOUNT_GAS:
            raise ExecutionFailed("insufficient gas to process all authorizations")
        precompiles = run.state.computation_class.get_precompiles()
        excluded = frozenset({sender, recipient, *precompiles, *_authorities(request, run)})
        previous = Touched(request.access_list or (), excluded)
        while True:
            access_list = previous.access_list()
            attempt = run.with_access_list(access_list)
            touched = Touched(access_list, excluded)
            try:
                outcome = _run_noting(attempt, gas, touched)
            except Rejected as exc:
                unsigned = _unsigned_hash(attempt, gas, nonce).hex()
                raise ExecutionFailed(f"failed to apply transaction: 0x{unsigned} err: {exc.message}") from None
            if touched.accounts == previous.accounts:
                error = None if outcome.error is None else (
                    "execution reverted" if outcome.reverted else vm_error_message(outcome.error))
                return AccessListResult(access_list=access_list, error=error, gas_used=outcome.gas_used)
            previous = touched


def with_fee_defaults(request: CallRequest, base_fee: int | None, suggested_tip: Callable[[], int],
                      blob_base_fee: int | None) -> CallRequest:
    """geth's ``setFeeDefaults`` for a transaction to be: the fee fields a wallet would send."""
    if request.max_fee_per_blob_gas == 0:
        raise ExecutionFailed("maxFeePerBlobGas, if specified, must be non-zero")
    if request.blob_versioned_hashes is not None and request.max_fee_per_blob_gas is None and \
            blob_base_fee is not None:
        request = replace(request, max_fee_per_blob_gas=2 * blob_base_fee)
    if request.conflicts is not None:
        raise ExecutionFailed(request.conflicts)
    max_fee, tip = request.max_fee_per_gas, request.max_priority_fee_per_gas
    if request.gas_price is not None and request.authorization_list is not None:
        raise ExecutionFailed("both gasPrice and authorizationList specified")
    if request.gas_price is None and max_fee is not None and tip is not None:
        if max_fee == 0:
            raise ExecutionFailed("maxFeePerGas must be non-zero")
        if max_fee < tip:
            raise ExecutionFailed(f"maxFeePerGas ({hex(max_fee)}) < maxPriorityFeePerGas ({hex(tip)})")
        return request
    if request.gas_price is not None:
        if request.gas_price == 0 and base_fee is not None:
            raise ExecutionFailed("gasPrice must be non-zero after london fork")
        return request
    if base_fee is None:
        if max_fee is not None or tip is not None:
            raise ExecutionFailed("maxFeePerGas and maxPriorityFeePerGas are not valid before London is active")
        return replace(request, gas_price=suggested_tip())
    if tip is None:
        tip = suggested_tip()
    if max_fee is None:
        max_fee = tip + 2 * base_fee
    if max_fee < tip:
        raise ExecutionFailed(f"maxFeePerGas ({hex(max_fee)}) < maxPriorityFeePerGas ({hex(tip)})")
    return replace(request, max_fee_per_gas=max_fee, max_priority_fee_per_gas=tip)


def _blob_base_fee(config: Any, header: Any) -> int | None:
    """The blob base fee of ``header``'s own excess blob gas (None before Cancun)."""
    if header.excess_blob_gas is None:
        return None
    return int(config.blob_base_fee(header.number, header.timestamp, header.excess_blob_gas))


def _authorities(request: CallRequest, run: PreparedMessage) -> set[bytes]:
    """Signers of the message's authorizations that the chain would accept."""
    chain_id = run.vm.chain_context.chain_id
    found: set[bytes] = set()
    for auth in request.authorization_list or ():
        if (auth.chain_id not in (0, chain_id)) or auth.nonce >= 2**64 - 1:
            continue
        try:
            signature = Signature(vrs=(auth.y_parity, auth.r, auth.s))
            message = SET_CODE_MAGIC + rlp.encode([auth.chain_id, auth.address, auth.nonce])
            found.add(bytes(signature.recover_public_key_from_msg(message).to_canonical_address()))
        except Exception:
            continue
    return found


def _unsigned_hash(run: PreparedMessage, gas: int, nonce: int) -> bytes:
    """The hash geth names in a failure: the message as an unsigned transaction."""
    message, request = run.message, run.message.request
    chain_id = run.vm.chain_context.chain_id
    access_list = request.access_list or ()
    unsigned: Transaction
    base: dict[str, Any] = dict(nonce=nonce, gas=gas, value=request.value, data=request.data)
    fee_market: dict[str, Any] = dict(
        chain_id=chain_id, max_priority_fee_per_gas=message.tip_cap, max_fee_per_gas=message.fee_cap,
        access_list=access_list, y_parity=0, r=0, s=0, **base)
    if request.authorization_list is not None and request.to is not None:
        unsigned = SetCodeTransaction(to=request.to, authorization_list=request.authorization_list,
                                      **fee_market)
    elif request.blob_versioned_hashes is not None and request.to is not None:
        unsigned = BlobTransaction(to=request.to, max_fee_per_blob_gas=message.blob_fee_cap or 0,
                                   blob_versioned_hashes=request.blob_versioned_hashes, **fee_market)
    elif request.max_fee_per_gas is not None:
        unsigned = DynamicFeeTransaction(to=request.to, **fee_market)
    elif request.access_list is not None:
        unsigned = AccessListTransaction(chain_id=chain_id, gas_price=message.gas_price, to=request.to,
                                         access_list=access_list, y_parity=0, r=0, s=0, **base)
    else:
        unsigned = LegacyTransaction(gas_price=message.gas_price, to=request.to, v=0, r=0, s=0, **base)
    return transaction_hash(unsigned)
