"""Whether a transaction is valid under a fork: the one place that decides it (as
execution-specs' ``validate_transaction`` and ``check_transaction`` do).

Block import, ``ethread statetest``, the transaction pools, block building and the
pre-checks of eth_call and gas estimation all ask here; a rule that differs between forks
reads the fork's row (:class:`~.table.Fork`), never a fork name. Each rule raises one
:class:`InvalidTransaction` subclass carrying its figures, whose ``str()`` is geth's
state-transition wording.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eth_utils import ValidationError, to_checksum_address

from ..errors import Picklable
from ..evm.blobs import GAS_PER_BLOB
from ..models import AccessListTransaction, BlobTransaction, LegacyTransaction, SetCodeTransaction
from ..models import Transaction as ModelTransaction
from .table import ACCESS_LIST, BLOB, FORKS, LEGACY, SET_CODE, Fork

TX_GAS = 21_000
"""Every transaction's base cost."""
ZERO_BYTE_GAS = 4
ACCESS_LIST_ADDRESS_GAS = 2400
ACCESS_LIST_KEY_GAS = 1900
INITCODE_WORD_GAS = 2
"""EIP-3860: per 32-byte word of a creation's initcode (Shanghai on)."""
AUTHORIZATION_GAS = 25_000
"""EIP-7702: per authorization (an empty account's cost)."""
FLOOR_GAS_PER_TOKEN = 10
"""EIP-7623 (Prague on): the calldata floor's price per token."""
MAX_NONCE = 2**64 - 1
"""EIP-2681: a nonce this high cannot be incremented."""
BLOB_HASH_VERSION = 0x01
"""EIP-4844: the version byte of a KZG commitment's versioned hash."""
DELEGATION_PREFIX = b"\xef\x01\x00"
"""EIP-7702: the code of an account that delegates (a designator, not code of its own)."""
SECP256K1_HALF_N = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0
"""EIP-2 (Homestead on): the largest signature ``s`` a transaction may carry."""


# -- what is read of a transaction, its block and its sender -------------------------------------


@dataclass(slots=True)
class TxFields:
    """The fields of a transaction that its validity depends on (not frozen: cheaper to make)."""

    kind: int
    """Its type (EIP-2718; 0 for legacy)."""
    nonce: int
    gas: int
    to: bytes | None
    """The recipient; None for a creation."""
    value: int
    data: bytes
    fee_cap: int
    """The most it pays per gas (a legacy or access-list gas price)."""
    tip_cap: int
    """The most it tips per gas (a legacy or access-list gas price)."""
    access_list_addresses: int = 0
    access_list_keys: int = 0
    blob_hashes: tuple[bytes, ...] | None = None
    """A blob transaction's versioned hashes (None for any other type)."""
    blob_fee_cap: int = 0
    authorizations: int | None = None
    """How many authorizations a set-code transaction carries (None for any other type)."""
    s: int = 0
    """The signature's ``s`` (0: not signed, EIP-2's bound is not checked)."""

    @property
    def blob_gas(self) -> int:
        """The blob gas it uses (EIP-4844)."""
        return GAS_PER_BLOB * len(self.blob_hashes) if self.blob_hashes else 0


def fields_of(tx: ModelTransaction) -> TxFields:
    """An ethread transaction model's fields."""
    if isinstance(tx, LegacyTransaction | AccessListTransaction):
        fee_cap = tip_cap = tx.gas_price
    else:
        fee_cap, tip_cap = tx.max_fee_per_gas, tx.max_priority_fee_per_gas
    entries = () if isinstance(tx, LegacyTransaction) else tx.access_list
    return TxFields(
        kind=tx.type, nonce=tx.nonce, gas=tx.gas, to=tx.to, value=tx.value, data=tx.data,
        fee_cap=fee_cap, tip_cap=tip_cap,
        access_list_addresses=len(entries),
        access_list_keys=sum(len(e.storage_keys) for e in entries),
        blob_hashes=tuple(tx.blob_versioned_hashes) if isinstance(tx, BlobTransaction) else None,
        blob_fee_cap=tx.max_fee_per_blob_gas if isinstance(tx, BlobTransaction) else 0,
        authorizations=len(tx.authorization_list) if isinstance(tx, SetCodeTransaction) else None,
        s=tx.s,
    )


def fields_of_evm(tx: Any) -> TxFields:
    """A py-evm signed transaction's fields."""
    kind = getattr(tx, "type_id", None) or LEGACY
    if kind in (LEGACY, ACCESS_LIST):
        fee_cap = tip_cap = tx.gas_price
    else:
        fee_cap, tip_cap = tx.max_fee_per_gas, tx.max_priority_fee_per_gas
    entries = tx.access_list if kind != LEGACY else ()
    return TxFields(
        kind=kind, nonce=tx.nonce, gas=tx.gas, to=bytes(tx.to) or None, value=tx.value,
        data=bytes(tx.data), fee_cap=fee_cap, tip_cap=tip_cap,
        access_list_addresses=len(entries),
        access_list_keys=sum(len(keys) for _, keys in entries),
        blob_hashes=tuple(map(bytes, tx.blob_versioned_hashes)) if kind == BLOB else None,
        blob_fee_cap=tx.max_fee_per_blob_gas if kind == BLOB else 0,
        authorizations=len(tx.authorization_list) if kind == SET_CODE else None,
        s=tx.s,
    )


@dataclass(slots=True)
class BlockContext:
    """What a transaction is checked against in the block it would join."""

    base_fee: int | None = None
    """The block's base fee (None before London)."""
    blob_base_fee: int | None = None
    """The block's blob base fee (None before Cancun)."""
    gas_available: int | None = None
    """Gas the block has left (None: not checked)."""
    blob_gas_available: int | None = None
    """Blob gas the block has left (None: the fork's per-block maximum)."""


@dataclass(slots=True)
class SenderAccount:
    """The sender as the state holds it."""

    nonce: int
    balance: int
    code: bytes = b""


# -- the errors -------------------------------------------------------------------------------------


class InvalidTransaction(Picklable, ValidationError):
    """A transaction that cannot be included under the fork (a py-evm ``ValidationError``);
    ``sender`` is the address the message names, when known. A subclass declares its figures as
    annotations (positional in that order, or by name) and :attr:`wording` over them and ``who``."""

    eip: str = ""
    """The EIP whose rule it breaks, if one does."""
    wording: str = ""

    def __init__(self, *figures: Any, sender: bytes | None = None, **named: Any) -> None:
        super().__init__()
        self.sender = sender
        names = vars(type(self)).get("__annotations__", {})  # (a trailing one may default)
        self.__dict__.update(zip(names, figures, strict=False), **named)

    @property
    def who(self) -> str:
        """The sender, checksummed (empty when not known)."""
        return to_checksum_address(self.sender) if self.sender else ""

    def __str__(self) -> str:
        return self.wording.format(who=self.who, **vars(self)) or type(self).__name__


class TypeNotSupported(InvalidTransaction):
    """The fork carries no transaction of this type (EIP-2718)."""

    kind: int
    first: Fork | None
    wording = "transaction type not supported"


class NonceTooHigh(InvalidTransaction):
    nonce: int
    state: int
    wording = "nonce too high: address {who}, tx: {nonce} state: {state}"


class NonceTooLow(InvalidTransaction):
    nonce: int
    state: int
    wording = "nonce too low: address {who}, tx: {nonce} state: {state}"


class NonceMax(InvalidTransaction):
    nonce: int
    eip = "EIP-2681"
    wording = "nonce has max value: address {who}, nonce: {nonce}"


class GasCapExceeded(InvalidTransaction):
    gas: int
    cap: int
    eip = "EIP-7825"
    wording = "transaction gas limit too high (cap: {cap}, tx: {gas})"


class SenderNotEOA(InvalidTransaction):
    code_size: int
    eip = "EIP-3607"
    wording = "sender not an eoa: address {who}, len(code): {code_size}"


class FeeCapTooHigh(InvalidTransaction):
    """A fee cap or tip cap past 256 bits."""

    tip: bool
    bits: int

    def __str__(self) -> str:
        name = "max priority fee per gas" if self.tip else "max fee per gas"
        field = "maxPriorityFeePerGas" if self.tip else "maxFeePerGas"
        return f"{name} higher than 2^256-1: address {self.who}, {field} bit length: {self.bits}"


class TipAboveFeeCap(InvalidTransaction):
    tip_cap: int
    fee_cap: int
    eip = "EIP-1559"
    wording = ("max priority fee per gas higher than max fee per gas: address {who}, "
               "maxPriorityFeePerGas: {tip_cap}, maxFeePerGas: {fee_cap}")


class FeeCapBelowBaseFee(InvalidTransaction):
    fee_cap: int
    base_fee: int
    eip = "EIP-1559"
    wording = ("max fee per gas less than block base fee: address {who}, "
               "maxFeePerGas: {fee_cap}, baseFee: {base_fee}")


class BlobCreate(InvalidTransaction):
    eip = "EIP-4844"
    wording = "blob transaction of type create"


class NoBlobs(InvalidTransaction):
    eip = "EIP-4844"
    wording = "blob transaction missing blob hashes"


class TooManyBlobs(InvalidTransaction):
    """More blobs than one transaction may carry (EIP-7594, Osaka on; before it only the
    block's blob gas bounds them, :class:`BlobGasLimitReached`)."""

    count: int
    limit: int
    eip = "EIP-7594"
    wording = "blob transaction has too many blobs"


class BadBlobHashVersion(InvalidTransaction):
    index: int
    eip = "EIP-4844"
    wording = "blob {index} has invalid hash version"


class BlobFeeCapTooLow(InvalidTransaction):
    blob_fee_cap: int
    blob_base_fee: int
    eip = "EIP-4844"
    wording = ("max fee per blob gas less than block blob gas fee: address {who} "
               "blobGasFeeCap: {blob_fee_cap}, blobBaseFee: {blob_base_fee}")


class BlobGasLimitReached(InvalidTransaction):
    blob_gas: int
    available: int
    eip = "EIP-4844"
    wording = "blob gas limit reached"


class SetCodeCreate(InvalidTransaction):
    eip = "EIP-7702"
    wording = "EIP-7702 transaction cannot be used to create contract (sender {who})"


class NoAuthorizations(InvalidTransaction):
    eip = "EIP-7702"
    wording = "EIP-7702 transaction with empty auth list (sender {who})"


class InitcodeTooLarge(InvalidTransaction):
    size: int
    limit: int
    eip = "EIP-3860"
    wording = "max initcode size exceeded: code size {size} limit {limit}"


class InsufficientFunds(InvalidTransaction):
    """The balance does not cover the upfront cost (:func:`upfront_cost`; ``overflow``: it
    does not fit in 256 bits)."""

    balance: int
    cost: int
    overflow: bool = False

    def __str__(self) -> str:
        want = ("required balance exceeds 256 bits" if self.overflow
                else f"have {self.balance} want {self.cost}")
        return f"insufficient funds for gas * price + value: address {self.who} {want}"


class GasLimitReached(InvalidTransaction):
    """More gas than the block has left."""

    gas: int
    available: int
    wording = "gas limit reached"


class IntrinsicGasTooLow(InvalidTransaction):
    gas: int
    needed: int
    wording = "intrinsic gas too low: have {gas}, want {needed}"


class FloorGasTooLow(InvalidTransaction):
    gas: int
    needed: int
    eip = "EIP-7623"
    wording = "insufficient gas for floor data gas cost: have {gas}, want {needed}"


class InsufficientFundsForTransfer(InvalidTransaction):
    wording = "insufficient funds for transfer: address {who}"


class HighSignatureS(InvalidTransaction):
    eip = "EIP-2"
    wording = "invalid transaction v, r, s values"


# -- the rules, one function each ------------------------------------------------------------------


def introduced(kind: int) -> Fork | None:
    """The first fork that carries transactions of type ``kind`` (None: none does)."""
    return next((fork for fork in FORKS if kind in fork.transaction_types), None)


def check_type(fork: Fork, kind: int, sender: bytes | None = None) -> None:
    """EIP-2718: a type the fork carries."""
    if kind not in fork.transaction_types:
        raise TypeNotSupported(kind, introduced(kind), sender=sender)


def check_nonce_cap(tx: TxFields, sender: bytes | None = None) -> None:
    """EIP-2681: a nonce below 2^64 - 1 (every fork)."""
    if tx.nonce >= MAX_NONCE:
        raise NonceMax(tx.nonce, sender=sender)


def check_gas_cap(fork: Fork, tx: TxFields, sender: bytes | None = None) -> None:
    """EIP-7825 (Osaka on): at most the fork's per-transaction gas."""
    if fork.tx_gas_cap is not None and tx.gas > fork.tx_gas_cap:
        raise GasCapExceeded(tx.gas, fork.tx_gas_cap, sender=sender)


def check_signature(fork: Fork, tx: TxFields, sender: bytes | None = None) -> None:
    """EIP-2 (Homestead on): a signature's ``s`` in the lower half of the curve's order."""
    if fork.low_s and tx.s > SECP256K1_HALF_N:
        raise HighSignatureS(sender=sender)


def check_fee_caps(tx: TxFields, sender: bytes | None = None) -> None:
    """Fee caps within 256 bits, the tip at most the fee cap (EIP-1559)."""
    if tx.fee_cap.bit_length() > 256:
        raise FeeCapTooHigh(False, tx.fee_cap.bit_length(), sender=sender)
    if tx.tip_cap.bit_length() > 256:
        raise FeeCapTooHigh(True, tx.tip_cap.bit_length(), sender=sender)
    if tx.fee_cap < tx.tip_cap:
        raise TipAboveFeeCap(tx.tip_cap, tx.fee_cap, sender=sender)


def check_base_fee(tx: TxFields, base_fee: int | None, sender: bytes | None = None) -> None:
    """EIP-1559 (London on): a fee cap at least the block's base fee."""
    if base_fee is not None and tx.fee_cap < base_fee:
        raise FeeCapBelowBaseFee(tx.fee_cap, base_fee, sender=sender)


def check_blobs(fork: Fork, tx: TxFields, sender: bytes | None = None) -> None:
    """EIP-4844: a blob transaction calls, carries at least one blob (from Osaka at most
    EIP-7594's number), each hash of version 1."""
    hashes = tx.blob_hashes
    if hashes is None:
        return
    if tx.to is None:
        raise BlobCreate(sender=sender)
    if not hashes:
        raise NoBlobs(sender=sender)
    limit = fork.max_blobs_per_tx
    if limit is not None and len(hashes) > limit:
        raise TooManyBlobs(len(hashes), limit, sender=sender)
    for index, blob_hash in enumerate(hashes):
        if blob_hash[:1] != bytes([BLOB_HASH_VERSION]):
            raise BadBlobHashVersion(index, sender=sender)


def check_blob_fee(tx: TxFields, blob_base_fee: int | None, sender: bytes | None = None) -> None:
    """EIP-4844: a blob fee cap at least the block's blob base fee."""
    if tx.blob_hashes is not None and blob_base_fee is not None and tx.blob_fee_cap < blob_base_fee:
        raise BlobFeeCapTooLow(tx.blob_fee_cap, blob_base_fee, sender=sender)


def check_authorizations(tx: TxFields, sender: bytes | None = None) -> None:
    """EIP-7702: a set-code transaction calls and carries at least one authorization."""
    if tx.authorizations is None:
        return
    if tx.to is None:
        raise SetCodeCreate(sender=sender)
    if not tx.authorizations:
        raise NoAuthorizations(sender=sender)


def check_initcode(fork: Fork, tx: TxFields, sender: bytes | None = None) -> None:
    """EIP-3860 (Shanghai on): a creation's initcode at most the fork's bound."""
    limit = fork.max_initcode_size
    if tx.to is None and limit is not None and len(tx.data) > limit:
        raise InitcodeTooLarge(len(tx.data), limit, sender=sender)


def intrinsic_gas(fork: Fork, tx: TxFields) -> int:
    """The gas charged before the code runs: the base cost, calldata (EIP-2028's price from
    Istanbul), a creation's cost (Homestead on) and its initcode words (EIP-3860), the
    access list (EIP-2930), the authorizations (EIP-7702)."""
    zeros = tx.data.count(0)
    gas = (TX_GAS + ZERO_BYTE_GAS * zeros + fork.nonzero_byte_gas * (len(tx.data) - zeros)
           + ACCESS_LIST_ADDRESS_GAS * tx.access_list_addresses
           + ACCESS_LIST_KEY_GAS * tx.access_list_keys
           + AUTHORIZATION_GAS * (tx.authorizations or 0))
    if tx.to is None:
        gas += fork.creation_gas
        if fork.max_initcode_size is not None:
            gas += INITCODE_WORD_GAS * ((len(tx.data) + 31) // 32)
    return gas


def floor_data_gas(data: bytes) -> int:
    """EIP-7623: the least gas a transaction with this calldata pays (Prague on)."""
    zeros = data.count(0)
    return TX_GAS + FLOOR_GAS_PER_TOKEN * (zeros + 4 * (len(data) - zeros))


def check_intrinsic_gas(fork: Fork, tx: TxFields, sender: bytes | None = None,
                        intrinsic: int | None = None) -> int:
    """Gas for the intrinsic cost (``intrinsic``: the caller's figure) and (Prague on) the
    calldata floor; returns the intrinsic gas."""
    needed = intrinsic_gas(fork, tx) if intrinsic is None else intrinsic
    if tx.gas < needed:
        raise IntrinsicGasTooLow(tx.gas, needed, sender=sender)
    if fork.calldata_floor:
        floor = floor_data_gas(tx.data)
        if tx.gas < floor:
            raise FloorGasTooLow(tx.gas, floor, sender=sender)
    return needed


def check_sender_code(fork: Fork, code: bytes, sender: bytes | None = None) -> None:
    """EIP-3607 (every fork): a sender without code, but for an EIP-7702 delegation (from Prague)."""
    if code and not (SET_CODE in fork.transaction_types and code.startswith(DELEGATION_PREFIX)):
        raise SenderNotEOA(len(code), sender=sender)


def check_nonce(tx: TxFields, state_nonce: int, sender: bytes | None = None) -> None:
    """The sender's next nonce."""
    if tx.nonce > state_nonce:
        raise NonceTooHigh(tx.nonce, state_nonce, sender=sender)
    if tx.nonce < state_nonce:
        raise NonceTooLow(tx.nonce, state_nonce, sender=sender)


def upfront_cost(tx: TxFields) -> int:
    """The most a transaction can take from its sender: gas and blob gas at their caps, and value."""
    return tx.gas * tx.fee_cap + tx.value + tx.blob_gas * tx.blob_fee_cap


def check_balance(tx: TxFields, balance: int, sender: bytes | None = None) -> None:
    """A balance covering the upfront cost (which must fit in 256 bits)."""
    cost = upfront_cost(tx)
    if cost >= 2**256 or tx.gas * tx.fee_cap >= 2**256:
        raise InsufficientFunds(balance, cost, sender=sender, overflow=True)
    if balance < cost:
        raise InsufficientFunds(balance, cost, sender=sender)


def check_gas_available(tx: TxFields, block: BlockContext, sender: bytes | None = None) -> None:
    """Gas the block has left."""
    if block.gas_available is not None and tx.gas > block.gas_available:
        raise GasLimitReached(tx.gas, block.gas_available, sender=sender)


def check_blob_gas_available(fork: Fork, tx: TxFields, block: BlockContext,
                             sender: bytes | None = None) -> None:
    """Blob gas the block has left (all of it at most the fork's per-block maximum)."""
    if not tx.blob_gas or fork.blob is None:
        return
    available = fork.blob.max_gas if block.blob_gas_available is None else block.blob_gas_available
    if tx.blob_gas > available:
        raise BlobGasLimitReached(tx.blob_gas, available, sender=sender)


def effective_gas_price(tx: TxFields, base_fee: int | None) -> int:
    """What the sender pays per gas: its price, or from London the base fee and the tip
    the fee cap leaves room for."""
    if base_fee is None:
        return tx.fee_cap
    return min(tx.fee_cap, base_fee + tx.tip_cap)


@dataclass(frozen=True, slots=True)
class Checks:
    """Which of the rules a caller applies (geth's message flags)."""

    tx_type: bool = True
    """A type the fork carries (a call's message has none: its fields were checked against
    the fork when it was read)."""
    nonce: bool = True
    """The sender's nonce (and EIP-2681's cap on it)."""
    sender_code: bool = True
    """EIP-3607: a sender without code."""
    gas_cap: bool = True
    """EIP-7825's per-transaction gas cap."""
    block_limits: bool = True
    """Gas and blob gas the block has left."""
    free_fees: bool = False
    """Fee caps of zero skip the fee checks, a blob fee cap of zero the blob fee check
    (geth's ``NoBaseFee`` for calls)."""


BLOCK = Checks()
"""Every rule: a transaction joining a block (import, block building, state tests)."""
CALL = Checks(tx_type=False, nonce=False, sender_code=False, gas_cap=False, block_limits=False,
              free_fees=True)
"""eth_call's and gas estimation's messages, as geth checks them."""


def validate_transaction(fork: Fork, tx: TxFields, block: BlockContext,
                         account: SenderAccount, *, sender: bytes | None = None,
                         checks: Checks = BLOCK, intrinsic: int | None = None) -> int:
    """Raise the :class:`InvalidTransaction` that keeps ``tx`` out of a block under ``fork`` (in
    geth's order), or return its intrinsic gas. ``checks``: which rules apply (see :data:`CALL`)."""
    if checks.tx_type:
        check_type(fork, tx.kind, sender)
    check_signature(fork, tx, sender)
    if checks.nonce:
        check_nonce(tx, account.nonce, sender)
        check_nonce_cap(tx, sender)
    if checks.gas_cap:
        check_gas_cap(fork, tx, sender)
    if checks.sender_code:
        check_sender_code(fork, account.code, sender)
    if fork.base_fee and not (checks.free_fees and tx.fee_cap == 0 and tx.tip_cap == 0):
        check_fee_caps(tx, sender)
        check_base_fee(tx, block.base_fee, sender)
    if tx.blob_hashes is not None:
        check_blobs(fork, tx, sender)
        if not (checks.free_fees and tx.blob_fee_cap == 0):
            check_blob_fee(tx, block.blob_base_fee, sender)
        if checks.block_limits:
            check_blob_gas_available(fork, tx, block, sender)
    if tx.authorizations is not None:
        check_authorizations(tx, sender)
    if tx.to is None:
        check_initcode(fork, tx, sender)
    check_balance(tx, account.balance, sender)
    if checks.block_limits:
        check_gas_available(tx, block, sender)
    needed = check_intrinsic_gas(fork, tx, sender, intrinsic)
    if tx.value:
        paid = tx.gas * effective_gas_price(tx, block.base_fee)
        if tx.blob_hashes:
            paid += tx.blob_gas * (block.blob_base_fee or 0)
        if account.balance - paid < tx.value:
            raise InsufficientFundsForTransfer(sender=sender)
    return needed


__all__ = [
    "BLOCK", "CALL", "BlockContext", "Checks", "InvalidTransaction", "SenderAccount", "TxFields",
    "check_authorizations", "check_balance", "check_base_fee", "check_blob_fee",
    "check_blob_gas_available", "check_blobs", "check_fee_caps", "check_gas_available",
    "check_gas_cap", "check_initcode", "check_intrinsic_gas", "check_nonce", "check_nonce_cap",
    "check_sender_code", "check_signature", "check_type", "effective_gas_price", "fields_of",
    "fields_of_evm", "floor_data_gas", "intrinsic_gas", "introduced", "upfront_cost",
    "validate_transaction",
]
