"""Admitting a transaction to a dev chain's pending list: the checks geth's transaction pool
makes, in its order and words, before anything is kept (no nonce is taken by a transaction
that is refused).

The state checked against is the head's, with the transactions already pending counted in:
the next nonce of a sender is its state nonce plus what it has pending, and what it can spend
is its balance less the cost of what it has pending.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import rlp
from eth_utils import ValidationError, to_checksum_address

from ..errors import TransactionRejected
from ..forks import FORK_BY_NAME
from ..models import (
    AccessListTransaction,
    Address,
    BlobTransaction,
    LegacyTransaction,
    SetCodeTransaction,
    Transaction,
)
from ..rlpcodec.items import DecodeError
from ..rlpcodec.transactions import (
    decode_transaction,
    decode_typed_transaction,
    encode_transaction,
)

KIND_NAMES = {0: "legacy", 1: "access-list", 2: "dynamic-fee", 3: "blob", 4: "set-code"}
MAX_RAW_SIZE = 128 * 1024
"""geth's limit on a transaction's encoded size (blob data aside)."""
DELEGATION_PREFIX = b"\xef\x01\x00"


def decode_raw(raw: bytes) -> Transaction:
    """A transaction from eth_sendRawTransaction's bytes: a legacy RLP list, a typed envelope,
    or a blob transaction in its network form (the blobs, commitments and proofs after it are
    dropped: blocks commit only to the versioned hashes)."""
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
    """``tx`` with a well-formed signature that recovers to nobody in particular, for an
    impersonated sender (the chain is told the sender; see :meth:`DevChain.impersonate`)."""
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
    """The sender a py-evm transaction's signature recovers to; :class:`TransactionRejected` if the
    signature is invalid."""
    try:
        return bytes(evm_tx.sender)
    except (ValidationError, ValueError, Exception) as exc:  # eth-keys raises BadSignature
        raise TransactionRejected(f"invalid sender: {exc}") from None


@dataclass(frozen=True, slots=True)
class PoolView:
    """What admission reads: the chain's id and next block's rules, and the sender's account
    with its pending transactions counted in."""

    chain_id: int
    fork: str
    base_fee: int | None
    gas_limit: int
    next_nonce: int
    spendable: int
    code: bytes


def cost(tx: Transaction) -> int:
    """The most a transaction can take from its sender: gas at its fee cap, value, blob gas."""
    if isinstance(tx, LegacyTransaction | AccessListTransaction):
        total = tx.gas * tx.gas_price
    else:
        total = tx.gas * tx.max_fee_per_gas
    if isinstance(tx, BlobTransaction):
        total += 131_072 * len(tx.blob_versioned_hashes) * tx.max_fee_per_blob_gas
    return total + tx.value


def admit(tx: Transaction, evm_tx: Any, sender: Address, view: PoolView) -> None:
    """Raise :class:`TransactionRejected` with geth's message when the pool would refuse
    ``tx`` from ``sender``."""
    kind = tx.type
    if kind not in FORK_BY_NAME[view.fork].transaction_types:
        raise TransactionRejected("transaction type not supported")
    if isinstance(tx, LegacyTransaction):
        if tx.v not in (27, 28) and (tx.v - 35) // 2 != view.chain_id:
            raise TransactionRejected(
                f"invalid chain id for signer: have {(tx.v - 35) // 2} want {view.chain_id}")
    elif tx.chain_id != view.chain_id:
        raise TransactionRejected(f"invalid chain id for signer: have {tx.chain_id} want {view.chain_id}")
    if tx.gas > view.gas_limit:
        raise TransactionRejected("exceeds block gas limit")
    if (not isinstance(tx, LegacyTransaction | AccessListTransaction)
            and tx.max_priority_fee_per_gas > tx.max_fee_per_gas):
            raise TransactionRejected(
                "max priority fee per gas higher than max fee per gas: address "
                f"{to_checksum_address(sender)}, maxPriorityFeePerGas: "
                f"{tx.max_priority_fee_per_gas}, maxFeePerGas: {tx.max_fee_per_gas}")
    if isinstance(tx, SetCodeTransaction) and not tx.authorization_list:
        raise TransactionRejected("EIP-7702 transaction with empty auth list")
    if isinstance(tx, BlobTransaction) and not tx.blob_versioned_hashes:
        raise TransactionRejected("blobless blob transaction")
    intrinsic = int(evm_tx.intrinsic_gas)
    if tx.gas < intrinsic:
        raise TransactionRejected(f"intrinsic gas too low: gas {tx.gas}, minimum needed {intrinsic}")
    if tx.nonce < view.next_nonce:
        raise TransactionRejected(f"nonce too low: next nonce {view.next_nonce}, tx nonce {tx.nonce}")
    if tx.nonce > view.next_nonce:
        raise TransactionRejected(f"nonce too high: next nonce {view.next_nonce}, tx nonce {tx.nonce}")
    if view.code and not view.code.startswith(DELEGATION_PREFIX):
        raise TransactionRejected(f"sender not an eoa: address {to_checksum_address(sender)}")
    fee_cap = tx.gas_price if isinstance(tx, LegacyTransaction | AccessListTransaction) else tx.max_fee_per_gas
    if view.base_fee is not None and fee_cap < view.base_fee:
        raise TransactionRejected(
            f"max fee per gas less than block base fee: address {to_checksum_address(sender)}, "
            f"maxFeePerGas: {fee_cap}, baseFee: {view.base_fee}")
    needed = cost(tx)
    if needed > view.spendable:
        raise TransactionRejected(
            f"insufficient funds for gas * price + value: balance {view.spendable}, "
            f"tx cost {needed}, overshot {needed - view.spendable}")


__all__ = ["KIND_NAMES", "PoolView", "admit", "cost", "decode_raw", "evm_transaction",
           "placeholder_signature", "recover_sender"]
