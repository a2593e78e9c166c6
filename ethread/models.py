"""Typed values of the read interface.

Every model is a frozen, slotted dataclass. Each field is declared once: its JSON key and wire
kind follow from its name and type (:func:`wired`), or :func:`wire` names them;
:mod:`ethread.codec.serialize` derives every JSON shape from that, so adding a field is one edit.

Byte strings are raw ``bytes`` (addresses 20 bytes, hashes 32), numbers are ``int``: hex
appears only at the edge, and in the short ``repr`` and notebook HTML every model has
(:mod:`ethread.display`).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterator
from dataclasses import MISSING, dataclass, field, fields
from types import MappingProxyType
from typing import Any, ClassVar, Literal, TypeAlias, TypeVar, dataclass_transform

from .display import Pretty, utc
from .validation import (
    BLOCK_TAGS,
    check_address,
    check_addresses,
    check_bytes,
    check_data,
    check_hash,
    check_int,
    check_number_or_tag,
    check_optional_int,
    check_topics,
)

Hash32: TypeAlias = bytes
Address: TypeAlias = bytes


class Kind(enum.Enum):
    """How a scalar travels in JSON."""

    QUANTITY = "quantity"  # int -> "0x1a"
    DATA = "data"  # bytes -> "0x00ff"
    BOOL = "bool"
    TEXT = "text"  # str as is
    OBJECT = "object"  # a nested model, or a list of them
    SLOT = "slot"  # storage key: 32 bytes as data, a shorter one as a quantity (as geth does)


Q, D, B, OBJ = Kind.QUANTITY, Kind.DATA, Kind.BOOL, Kind.OBJECT
_M = TypeVar("_M")


def wire(key: str | None = None, kind: Kind | None = None, *, omit_none: bool = False,
         default: Any = MISSING) -> Any:
    """A field of a :func:`wired` model whose JSON key or kind is not the one derived;
    ``omit_none`` leaves the key out when the value is None (else it travels as null)."""
    meta = {"json": key, "kind": kind, "omit_none": omit_none}
    if default is MISSING and omit_none:
        default = None
    return field(default=default, metadata=meta)


_KINDS = {"int": Q, "bytes": D, "Hash32": D, "Address": D, "bool": B, "str": Kind.TEXT}
"""The kind of each scalar annotation; any other (a model, a union of them) is an object."""


@dataclass_transform(kw_only_default=True, frozen_default=True)
def wired(cls: type[_M]) -> type[_M]:
    """``cls`` as a frozen, slotted, keyword-only dataclass that travels as JSON: each field's
    key is its name in camelCase and its kind follows its annotation (``int``: quantity,
    bytes: data, a tuple: its items' kind), unless :func:`wire` names them."""
    made: Any = dataclass(frozen=True, slots=True, kw_only=True, repr=Pretty not in cls.__mro__)(cls)
    for f in fields(made):
        given = f.metadata or {"json": None, "kind": None, "omit_none": False}
        annotation = str(f.type).removesuffix(" | None").removeprefix("tuple[").removesuffix(", ...]")
        key = given["json"]
        f.metadata = MappingProxyType({
            "json": re.sub(r"_(\w)", lambda m: m[1].upper(), f.name) if key is None else key,
            "kind": given["kind"] or _KINDS.get(annotation, OBJ),
            "omit_none": given["omit_none"]})
    return made  # type: ignore[no-any-return]


_MAKERS: dict[tuple[type, bool], Callable[..., Any]] = {}


def trusted_maker(cls: type[_M], order: str | None = None, *,
                  by_keyword: bool = False) -> Callable[..., _M]:
    """A constructor of the frozen model ``cls`` that sets each slot directly, for decoders of
    records ethread wrote itself: nothing is checked and no ``__post_init__`` runs; the object
    equals one the dataclass constructor makes. Made once per class.

    ``by_keyword=True`` takes keywords only; ``order`` names every field in the order a caller
    passes them positionally, checked now (TypeError when a field moved, was added or renamed);
    with neither, fields are taken positionally unchecked."""
    if order is not None:
        check_field_order(cls, order)
    key = (cls, by_keyword)
    maker = _MAKERS.get(key)
    if maker is None:
        maker = _MAKERS[key] = _make_maker(cls, by_keyword)
    return maker


def check_field_order(cls: type, order: str) -> None:
    """Raise TypeError unless ``order`` names the fields of the dataclass ``cls``, in order."""
    declared = [f.name for f in fields(cls)]
    given = order.split()
    if given != declared:
        wrong = [f"{i}: {a} (the model has {b})"
                 for i, (a, b) in enumerate(zip(given, declared, strict=False)) if a != b]
        if len(given) != len(declared):
            wrong.append(f"{len(given)} names for {len(declared)} fields")
        raise TypeError(
            f"{cls.__name__} is built positionally in the order {' '.join(given)!r}, but its "
            f"fields are {' '.join(declared)!r}: {'; '.join(wrong)}. Update the maker's "
            "callers with the model.")


def _make_maker(cls: type, by_keyword: bool) -> Callable[..., Any]:
    names = [f.name for f in fields(cls)]
    twin = _writable_twin(cls)
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls, "_twin": twin}
    lines = [f"def make({'*, ' if by_keyword else ''}{', '.join(names)}):"]
    if twin is not None:
        # Plain attribute stores on the writable twin (the interpreter's fastest way to fill
        # a slot), then the object becomes an instance of ``cls``.
        lines.append("    m = _new(_twin)")
        lines.extend(f"    m.{name} = {name}" for name in names)
        lines.append("    m.__class__ = _cls")
    else:
        lines.append("    m = _new(_cls)")
        for number, name in enumerate(names):
            namespace[f"_set{number}"] = getattr(cls, name).__set__  # the slot's own setter
            lines.append(f"    _set{number}(m, {name})")
    lines.append("    return m")
    exec("\n".join(lines), namespace)  # the source is built above from the field names
    maker: Callable[..., Any] = namespace["make"]
    return maker


def _writable_twin(cls: type) -> type | None:
    """A class with the slots of ``cls`` over the same bases but no frozen ``__setattr__``,
    whose instances may become instances of ``cls``; None when ``cls`` has no such twin."""
    slots = cls.__dict__.get("__slots__")
    if slots is None:
        return None
    twin = type(f"_Writable{cls.__name__}", cls.__bases__, {"__slots__": slots})
    if twin.__setattr__ is not object.__setattr__:  # type: ignore[comparison-overlap]
        return None
    probe: Any = object.__new__(twin)
    try:
        probe.__class__ = cls
    except TypeError:
        return None
    return twin


# -- Blocks ----------------------------------------------------------------------------------------


@wired
class Header(Pretty):
    """A block header, with every field through Prague."""

    parent_hash: Hash32
    uncles_hash: Hash32 = wire("sha3Uncles")
    coinbase: Address = wire("miner")
    state_root: Hash32
    transactions_root: Hash32
    receipts_root: Hash32
    logs_bloom: bytes
    difficulty: int
    number: int
    gas_limit: int
    gas_used: int
    timestamp: int
    extra_data: bytes
    mix_hash: Hash32
    nonce: bytes
    base_fee_per_gas: int | None = wire(omit_none=True)
    withdrawals_root: Hash32 | None = wire(omit_none=True)
    blob_gas_used: int | None = wire(omit_none=True)
    excess_blob_gas: int | None = wire(omit_none=True)
    parent_beacon_block_root: Hash32 | None = wire(omit_none=True)
    requests_hash: Hash32 | None = wire(omit_none=True)
    hash: Hash32 = b""
    """keccak of the header's RLP; filled by the decoder, never by hand."""

    def _summary(self) -> Iterator[tuple[str, Any]]:
        yield from (("number", self.number), ("hash", self.hash), ("parent_hash", self.parent_hash),
                    ("timestamp", utc(self.timestamp)), ("miner", self.coinbase),
                    ("gas_used", self.gas_used), ("gas_limit", self.gas_limit))
        if self.base_fee_per_gas is not None:
            yield "base_fee_per_gas", self.base_fee_per_gas
        if self.difficulty:
            yield "difficulty", self.difficulty


@wired
class Withdrawal(Pretty):
    """A validator withdrawal (Shanghai and later); amount in gwei."""

    index: int
    validator_index: int
    address: Address
    amount: int


# -- Transactions ----------------------------------------------------------------------------------


@wired
class AccessListEntry(Pretty):
    """One entry of an access list (EIP-2930): an address and the storage keys to touch."""

    address: Address
    storage_keys: tuple[Hash32, ...]


@wired
class Authorization(Pretty):
    """A set-code authorization: the signer delegates its code to ``address``."""

    chain_id: int
    address: Address
    nonce: int
    y_parity: int
    r: int
    s: int


@wired
class LegacyTransaction(Pretty):
    """A pre-typed transaction; ``v`` carries the chain id when replay-protected."""

    nonce: int
    gas_price: int
    gas: int
    to: Address | None
    value: int
    data: bytes = wire("input")
    v: int
    r: int
    s: int

    type: ClassVar[int] = 0
    computed: ClassVar[tuple[tuple[str, str, Kind], ...]] = (
        ("type", "type", Q),
        ("chainId", "chain_id", Q),
    )

    @property
    def chain_id(self) -> int | None:
        """The chain id of a replay-protected (EIP-155) signature, else None."""
        return (self.v - 35) // 2 if self.v >= 35 else None


class _Typed(Pretty):
    """Base of the typed (EIP-2718) transactions: ``v`` is their ``y_parity``."""

    __slots__ = ()
    computed: ClassVar[tuple[tuple[str, str, Kind], ...]] = (("type", "type", Q), ("v", "y_parity", Q))


@wired
class AccessListTransaction(_Typed):
    """A type-1 transaction (EIP-2930, Berlin): a legacy gas price plus an access list."""

    chain_id: int
    nonce: int
    gas_price: int
    gas: int
    to: Address | None
    value: int
    data: bytes = wire("input")
    access_list: tuple[AccessListEntry, ...]
    y_parity: int
    r: int
    s: int

    type: ClassVar[int] = 1


@wired
class DynamicFeeTransaction(_Typed):
    """A type-2 transaction (EIP-1559, London): a fee cap and a tip cap instead of a gas price."""

    chain_id: int
    nonce: int
    max_priority_fee_per_gas: int
    max_fee_per_gas: int
    gas: int
    to: Address | None
    value: int
    data: bytes = wire("input")
    access_list: tuple[AccessListEntry, ...]
    y_parity: int
    r: int
    s: int

    type: ClassVar[int] = 2


@wired
class BlobTransaction(_Typed):
    """A type-3 transaction (EIP-4844, Cancun): blob versioned hashes and a blob fee cap."""

    chain_id: int
    nonce: int
    max_priority_fee_per_gas: int
    max_fee_per_gas: int
    gas: int
    to: Address
    value: int
    data: bytes = wire("input")
    access_list: tuple[AccessListEntry, ...]
    max_fee_per_blob_gas: int
    blob_versioned_hashes: tuple[Hash32, ...]
    y_parity: int
    r: int
    s: int

    type: ClassVar[int] = 3


@wired
class SetCodeTransaction(_Typed):
    """A type-4 transaction (EIP-7702, Prague): authorizations delegating accounts' code."""

    chain_id: int
    nonce: int
    max_priority_fee_per_gas: int
    max_fee_per_gas: int
    gas: int
    to: Address
    value: int
    data: bytes = wire("input")
    access_list: tuple[AccessListEntry, ...]
    authorization_list: tuple[Authorization, ...]
    y_parity: int
    r: int
    s: int

    type: ClassVar[int] = 4


Transaction: TypeAlias = (
    LegacyTransaction
    | AccessListTransaction
    | DynamicFeeTransaction
    | BlobTransaction
    | SetCodeTransaction
)


@wired
class IncludedTransaction(Pretty):
    """A transaction as it stands in a block: where it is, who sent it (recovered at import),
    what gas price it paid."""

    transaction: Transaction = wire("")
    hash: Hash32
    sender: Address = wire("from")
    block_hash: Hash32
    block_number: int
    block_timestamp: int
    """The block's timestamp (geth 1.17 writes it; see :mod:`ethread.codec.answers`)."""
    index: int = wire("transactionIndex")
    gas_price: int
    """The effective gas price: base fee plus the tip the fee caps allowed."""

    def _summary(self) -> Iterator[tuple[str, Any]]:
        tx = self.transaction
        yield from (("hash", self.hash), ("block_number", self.block_number),
                    ("index", self.index), ("type", tx.type), ("sender", self.sender),
                    ("to", tx.to), ("value", tx.value), ("nonce", tx.nonce), ("gas", tx.gas),
                    ("gas_price", self.gas_price), ("data", tx.data))


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Block(Pretty):
    """A block with its body; ``transactions`` carry their senders."""

    header: Header
    transactions: tuple[IncludedTransaction, ...]
    uncles: tuple[Header, ...]
    withdrawals: tuple[Withdrawal, ...] | None
    size: int
    """Bytes of the block's RLP encoding."""

    @property
    def hash(self) -> Hash32:
        """The header's hash."""
        return self.header.hash

    @property
    def number(self) -> int:
        """The header's number."""
        return self.header.number

    def _summary(self) -> Iterator[tuple[str, Any]]:
        yield from self.header._summary()
        yield from (("transactions", self.transactions), ("uncles", self.uncles))
        if self.withdrawals is not None:
            yield "withdrawals", self.withdrawals
        yield "size", self.size


# -- Receipts and logs -----------------------------------------------------------------------------


@wired
class Log(Pretty):
    """An event emitted by a contract, with its block, transaction and position in the block."""

    address: Address
    topics: tuple[Hash32, ...]
    data: bytes
    block_number: int
    transaction_hash: Hash32
    transaction_index: int
    block_hash: Hash32
    block_timestamp: int
    log_index: int
    """Position among all logs of the block, not of the transaction."""
    removed: bool = False


@wired
class Receipt(Pretty):
    """A transaction's receipt with the context the RPC answer carries; exactly one of ``root``
    (before Byzantium) and ``status`` is set."""

    type: int
    status: int | None = wire(omit_none=True)
    root: Hash32 | None = wire(omit_none=True)
    cumulative_gas_used: int
    logs_bloom: bytes
    logs: tuple[Log, ...]
    transaction_hash: Hash32
    transaction_index: int
    block_hash: Hash32
    block_number: int
    sender: Address = wire("from")
    to: Address | None
    gas_used: int
    effective_gas_price: int
    contract_address: Address | None
    blob_gas_used: int | None = wire(omit_none=True)
    blob_gas_price: int | None = wire(omit_none=True)

    def _summary(self) -> Iterator[tuple[str, Any]]:
        yield from (("transaction_hash", self.transaction_hash),
                    ("block_number", self.block_number),
                    ("transaction_index", self.transaction_index))
        yield ("status", self.status) if self.status is not None else ("root", self.root)
        yield from (("sender", self.sender), ("to", self.to), ("gas_used", self.gas_used),
                    ("effective_gas_price", self.effective_gas_price))
        if self.contract_address is not None:
            yield "contract_address", self.contract_address
        yield "logs", self.logs


# -- Proofs ----------------------------------------------------------------------------------------


@wired
class StorageProof(Pretty):
    """An EIP-1186 proof of one storage slot: its key, value and the trie nodes from the storage root."""

    key: bytes = wire(kind=Kind.SLOT)
    """The key as the caller wrote it (32 bytes, or shorter: then answered as a quantity)."""
    value: int
    proof: tuple[bytes, ...]


@wired
class AccountProof(Pretty):
    """An EIP-1186 proof of one account and some of its storage slots."""

    address: Address
    account_proof: tuple[bytes, ...]
    balance: int
    code_hash: Hash32
    nonce: int
    storage_hash: Hash32
    storage_proof: tuple[StorageProof, ...]


# -- Requests --------------------------------------------------------------------------------------

Tag: TypeAlias = Literal["latest", "earliest", "pending", "safe", "finalized"]
TAGS: tuple[Tag, ...] = BLOCK_TAGS  # type: ignore[assignment]


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class BlockHashRef(Pretty):
    """A block named by hash (EIP-1898); ``require_canonical`` rejects non-canonical ones."""

    hash: Hash32
    require_canonical: bool = False

    def __post_init__(self) -> None:
        check_bytes(self.hash, "BlockHashRef.hash", 32)
        if not isinstance(self.require_canonical, bool):
            raise TypeError("BlockHashRef.require_canonical: pass a bool")


BlockRef: TypeAlias = int | Tag | BlockHashRef
"""A block number, a tag, or a block hash."""

TopicFilter: TypeAlias = tuple[Hash32, ...] | None
"""One position of a topic filter: any of these hashes, or None for a wildcard."""


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class LogFilter(Pretty):
    """The filter object of eth_getLogs and eth_newFilter."""

    from_block: int | Tag = "latest"
    to_block: int | Tag = "latest"
    block_hash: Hash32 | None = None
    addresses: tuple[Address, ...] = ()
    """Empty: any address."""
    topics: tuple[TopicFilter, ...] = ()

    def __post_init__(self) -> None:
        """Refuse what would silently match nothing or the wrong thing: hex strings for
        addresses or topics, a bare topic where a tuple is wanted, a block as a string."""
        check_number_or_tag(self.from_block, "from_block")
        check_number_or_tag(self.to_block, "to_block")
        if self.block_hash is not None:
            check_hash(self.block_hash, "block_hash")
        object.__setattr__(self, "addresses", check_addresses(self.addresses))
        object.__setattr__(self, "topics", check_topics(self.topics))

    @property
    def parameter_count(self) -> int:
        """Addresses plus topic values, the number the 5,000-parameter limit counts."""
        return len(self.addresses) + sum(len(t) for t in self.topics if t)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class CallRequest(Pretty):
    """The call object of eth_call; None means "not given"."""

    sender: Address | None = None
    to: Address | None = None
    gas: int | None = None
    gas_price: int | None = None
    max_fee_per_gas: int | None = None
    max_priority_fee_per_gas: int | None = None
    value: int = 0
    data: bytes = b""
    access_list: tuple[AccessListEntry, ...] | None = None
    """None when not given; an empty list given is a request for an access-list call."""
    max_fee_per_blob_gas: int | None = None
    blob_versioned_hashes: tuple[Hash32, ...] | None = None
    authorization_list: tuple[Authorization, ...] | None = None
    nonce: int | None = None
    chain_id: int | None = None
    """When given, it must be the chain's (geth refuses a call meant for another chain)."""
    conflicts: str | None = None
    """Fields given together that must not be (geth answers these when the call runs)."""

    def __post_init__(self) -> None:
        if self.sender is not None:
            check_address(self.sender, "sender")
        if self.to is not None:
            check_address(self.to, "to")
        check_data(self.data)
        check_int(self.value, "value")
        check_optional_int(self.gas, "gas", bits=64)
        check_optional_int(self.nonce, "nonce", bits=64)
        for name in ("gas_price", "max_fee_per_gas", "max_priority_fee_per_gas",
                     "max_fee_per_blob_gas"):
            check_optional_int(getattr(self, name), name)
        for blob_hash in self.blob_versioned_hashes or ():
            check_hash(blob_hash, "blob_versioned_hashes")

    @property
    def wants_blobs(self) -> bool:
        """Whether the call carries blob fields, making it a blob transaction."""
        return self.blob_versioned_hashes is not None or self.max_fee_per_blob_gas is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class AccountOverride:
    """One account of an eth_call state override set; None means "leave as it is". ``state``
    replaces the whole storage, ``state_diff`` only the slots it names (not both, as in geth)."""

    address: Address
    nonce: int | None = None
    code: bytes | None = None
    balance: int | None = None
    state: tuple[tuple[Hash32, Hash32], ...] | None = None
    state_diff: tuple[tuple[Hash32, Hash32], ...] | None = None
    move_precompile_to: Address | None = None


StateOverride: TypeAlias = tuple[AccountOverride, ...]
"""Accounts to override for one call, in address order (the order geth applies them in)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HeaderOverrides:
    """The fields of a block's context a caller sets instead of the block's own (geth's
    ``BlockOverrides``); None: the block's own."""

    number: int | None = None
    difficulty: int | None = None
    time: int | None = None
    gas_limit: int | None = None
    fee_recipient: Address | None = None
    prev_randao: Hash32 | None = None
    base_fee_per_gas: int | None = None
    blob_base_fee: int | None = None
    """Not a header field: what BLOBBASEFEE and the blob fee checks read."""
    beacon_root: Hash32 | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockOverrides(HeaderOverrides):
    """Fields of the block context a call runs in, replaced for that call only.
    ``beacon_root`` is accepted in the parameter and refused by eth_call and eth_estimateGas,
    as geth does."""

    withdrawals: bool = False
    """Whether withdrawals were given (refused the same way)."""


# -- Results of execution methods ------------------------------------------------------------------


@wired
class AccessListResult:
    """eth_createAccessList: the list a transaction would touch, the gas it would use with
    that list, and why it failed when it does (the list is still answered)."""

    access_list: tuple[AccessListEntry, ...] = wire("accessList", OBJ)
    error: str | None = wire("error", Kind.TEXT, omit_none=True)
    gas_used: int = wire("gasUsed", Q)
