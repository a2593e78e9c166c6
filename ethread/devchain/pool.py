"""Admitting a transaction to a dev chain's pending list (geth's pool checks, in its order and
words), and the py-evm helpers the pool, the chain and block building share."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import rlp
from eth_utils import ValidationError

from ..errors import TransactionRejected
from ..forks import FORK_BY_NAME, validity
from ..forks.validity import (
    FeeCapBelowBaseFee,
    FeeCapTooHigh,
    FloorGasTooLow,
    InitcodeTooLarge,
    InsufficientFunds,
    IntrinsicGasTooLow,
    InvalidTransaction,
    NoAuthorizations,
    NoBlobs,
    NonceMax,
    NonceTooHigh,
    NonceTooLow,
    SenderNotEOA,
    TipAboveFeeCap,
    TypeNotSupported,
    fields_of,
    upfront_cost,
)
from ..models import Address, LegacyTransaction, Transaction
from ..rlpcodec.items import DecodeError
from ..rlpcodec.transactions import (
    decode_transaction,
    decode_typed_transaction,
    encode_transaction,
)

MAX_RAW_SIZE = 128 * 1024
"""geth's limit on a transaction's encoded size (blob data aside)."""


def decode_raw(raw: bytes) -> Transaction:
    """A transaction from eth_sendRawTransaction's bytes (a blob transaction's sidecar dropped)."""
    if not raw:
        raise TransactionRejected("typed transaction too short")
    if len(raw) > MAX_RAW_SIZE and raw[0] != 3:
        raise TransactionRejected(f"oversized data: transaction size {len(raw)}, limit {MAX_RAW_SIZE}")
    try:
        if raw[0] >= 0xC0:
            item = rlp.decode(raw)
            if not isinstance(item, list):
                raise DecodeError("not a list")
            return decode_transaction(item)[0]
        if raw[0] == 3:
            body = rlp.decode(raw[1:])
            if isinstance(body, list) and body and isinstance(body[0], list):
                raw = b"\x03" + rlp.encode(body[0])  # network form: [tx, blobs, commitments, proofs]
        if raw[0] > 0x7F:
            raise DecodeError("not a transaction")
        return decode_typed_transaction(raw)
    except (DecodeError, rlp.DecodingError, ValueError, TypeError, IndexError) as exc:
        raise TransactionRejected(f"rlp: {exc}") from None


def placeholder_signature(tx: Transaction, chain_id: int) -> Transaction:
    """``tx`` with a well-formed signature for an impersonated sender (:meth:`DevChain.impersonate`)."""
    if isinstance(tx, LegacyTransaction):
        return dataclasses.replace(tx, v=35 + 2 * chain_id, r=1, s=1)
    return dataclasses.replace(tx, y_parity=0, r=1, s=1)


def evm_transaction(vm_class: Any, tx: Transaction) -> Any:
    """The py-evm signed transaction of ``tx`` for the VM that will run it."""
    builder = vm_class.get_transaction_builder()
    encoded = encode_transaction(tx)
    try:
        if isinstance(tx, LegacyTransaction):
            return builder.deserialize(rlp.decode(encoded))
        return builder.decode(encoded)
    except (ValidationError, ValueError, rlp.DeserializationError) as exc:
        raise TransactionRejected(f"transaction type not supported: {exc}") from None


def recover_sender(evm_tx: Any) -> Address:
    """The sender a py-evm transaction's signature recovers to (:class:`TransactionRejected` if none)."""
    try:
        return bytes(evm_tx.sender)
    except (ValidationError, ValueError, Exception) as exc:  # eth-keys raises BadSignature
        raise TransactionRejected(f"invalid sender: {exc}") from None


@dataclass(frozen=True, slots=True)
class PoolView:
    """What admission reads: the next block's rules and the sender's account, pending counted in."""

    chain_id: int
    fork: str
    base_fee: int | None
    gas_limit: int
    next_nonce: int
    spendable: int
    code: bytes


def cost(tx: Transaction) -> int:
    """The most a transaction can take from its sender (:func:`~ethread.forks.validity.upfront_cost`)."""
    return upfront_cost(fields_of(tx))


def pool_words(error: InvalidTransaction) -> str:
    """``error`` in the words of geth's transaction pool (``core/txpool/validation.go``)."""
    match error:
        case TypeNotSupported(kind=kind, first=first):
            later = first.title if first is not None else "a later fork"
            return f"transaction type not supported: type {kind} rejected, pool not yet in {later}"
        case InitcodeTooLarge(size=size, limit=limit):
            return f"max initcode size exceeded: code size {size}, limit {limit}"
        case FeeCapTooHigh(tip=tip):
            return f"max {'priority ' if tip else ''}fee per gas higher than 2^256-1"
        case TipAboveFeeCap():
            return "max priority fee per gas higher than max fee per gas"
        case NonceMax():
            return "nonce has max value"
        case NonceTooLow(nonce=nonce, state=state):
            return f"nonce too low: next nonce {state}, tx nonce {nonce}"
        case NonceTooHigh(nonce=nonce, state=state):
            return f"nonce too high: next nonce {state}, tx nonce {nonce}"
        case IntrinsicGasTooLow(gas=gas, needed=needed):
            return f"intrinsic gas too low: gas {gas}, minimum needed {needed}"
        case FloorGasTooLow(gas=gas, needed=needed):
            return f"insufficient gas for floor data gas cost: gas {gas}, minimum needed {needed}"
        case NoAuthorizations():
            return "set code tx must have at least one authorization tuple"
        case NoBlobs():
            return "blobless blob transaction"
        case SenderNotEOA():
            return f"sender not an eoa: address {error.who}"
        case InsufficientFunds(balance=balance, cost=needed):
            return (f"insufficient funds for gas * price + value: balance {balance}, "
                    f"tx cost {needed}, overshot {needed - balance}")
    return str(error)


def admit(tx: Transaction, sender: Address, view: PoolView) -> None:
    """Raise :class:`TransactionRejected` with geth's message when its pool would refuse ``tx``."""
    fork = FORK_BY_NAME[view.fork]
    fields = fields_of(tx)
    if tx.type not in fork.transaction_types:
        raise TransactionRejected("transaction type not supported")
    if isinstance(tx, LegacyTransaction):
        if tx.v not in (27, 28) and (tx.v - 35) // 2 != view.chain_id:
            raise TransactionRejected(
                f"invalid chain id for signer: have {(tx.v - 35) // 2} want {view.chain_id}")
    elif tx.chain_id != view.chain_id:
        raise TransactionRejected(f"invalid chain id for signer: have {tx.chain_id} want {view.chain_id}")
    try:
        validity.check_initcode(fork, fields, sender)
        validity.check_gas_cap(fork, fields, sender)
        if tx.gas > view.gas_limit:
            raise TransactionRejected("exceeds block gas limit")
        validity.check_fee_caps(fields, sender)
        validity.check_authorizations(fields, sender)
        validity.check_blobs(fork, fields, sender)
        validity.check_intrinsic_gas(fork, fields, sender)
        validity.check_nonce(fields, view.next_nonce, sender)
        validity.check_nonce_cap(fields, sender)
        validity.check_sender_code(fork, view.code, sender)
        validity.check_base_fee(fields, view.base_fee, sender)
        validity.check_balance(fields, view.spendable, sender)
    except (TipAboveFeeCap, FeeCapBelowBaseFee, NoAuthorizations) as exc:
        raise TransactionRejected(str(exc)) from None
    except InvalidTransaction as exc:
        raise TransactionRejected(pool_words(exc)) from None


__all__ = ["PoolView", "admit", "cost", "decode_raw", "evm_transaction",
           "placeholder_signature", "pool_words", "recover_sender"]
