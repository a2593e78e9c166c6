"""Typed values of the read interface.

Every model is a frozen, slotted dataclass. Each field is declared once, with the JSON key and
the wire kind it takes on (see :func:`wire`); :mod:`ethread.codec.serialize` derives every JSON
shape from those declarations, so adding a field is one edit here.

Byte strings are raw ``bytes`` (addresses 20 bytes, hashes 32), numbers are ``int``: hex
appears only at the edge, and in the short ``repr`` and notebook HTML every model has
(:mod:`ethread.display`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, Literal, TypeAlias, TypeVar

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


def wire(key: str, kind: Kind, *, omit_none: bool = False, default: Any = MISSING) -> Any:
    """Declare a model field with its JSON key and kind.

    ``omit_none`` leaves the key out when the value is None (fork-dependent header fields);
    otherwise None travels as JSON null (``to`` of a contract creation).
    """
    meta = {"json": key, "kind": kind, "omit_none": omit_none}
    if default is MISSING and omit_none:
        default = None
    return field(default=default, metadata=meta)


_M = TypeVar("_M")
_MAKERS: dict[tuple[type, bool], Callable[..., Any]] = {}


def trusted_maker(cls: type[_M], order: str | None = None, *,
                  by_keyword: bool = False) -> Callable[..., _M]:
    """A constructor of the frozen model ``cls`` that sets each slot directly instead of going
    through the dataclass ``__init__`` (its keyword handling and one ``object.__setattr__``
    per field cost more).

    Every caller says how it names the values, so that a field moved in the model can never
    silently swap two values of every object built: ``by_keyword=True`` gives a maker that
    takes keyword arguments only (slower a call than positional ones: for
    makers off the hottest paths), and ``order`` names every field of ``cls``, space-separated,
    in the order a caller passes them positionally, checked against the class now, at import
    (TypeError when a field was moved, added or renamed). A maker made with neither takes
    the fields positionally unchecked; only callers not yet moved to one of the two do so.

    For decoders of records ethread wrote itself (a store's blocks and receipts), whose values
    already have the declared types: it checks nothing, and runs no ``__post_init__``. The
    object is an ordinary instance of ``cls``, equal to one the dataclass constructor makes
    from the same values. Made once per class."""
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
    whose instances may become instances of ``cls`` (same layout); None when ``cls`` has
    no such twin (no slots of its own, or a base that intercepts attribute stores)."""
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


# --------------------------------------------------------------------------------------------
# Blocks


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Header(Pretty):
    """A block header, with every field through Prague."""

    parent_hash: Hash32 = wire("parentHash", D)
    uncles_hash: Hash32 = wire("sha3Uncles", D)
    coinbase: Address = wire("miner", D)
    state_root: Hash32 = wire("stateRoot", D)
    transactions_root: Hash32 = wire("transactionsRoot", D)
    receipts_root: Hash32 = wire("receiptsRoot", D)
    logs_bloom: bytes = wire("logsBloom", D)
    difficulty: int = wire("difficulty", Q)
    number: int = wire("number", Q)
    gas_limit: int = wire("gasLimit", Q)
    gas_used: int = wire("gasUsed", Q)
    timestamp: int = wire("timestamp", Q)
    extra_data: bytes = wire("extraData", D)
    mix_hash: Hash32 = wire("mixHash", D)
    nonce: bytes = wire("nonce", D)
    base_fee_per_gas: int | None = wire("baseFeePerGas", Q, omit_none=True)
    withdrawals_root: Hash32 | None = wire("withdrawalsRoot", D, omit_none=True)
    blob_gas_used: int | None = wire("blobGasUsed", Q, omit_none=True)
    excess_blob_gas: int | None = wire("excessBlobGas", Q, omit_none=True)
    parent_beacon_block_root: Hash32 | None = wire("parentBeaconBlockRoot", D, omit_none=True)
    requests_hash: Hash32 | None = wire("requestsHash", D, omit_none=True)
    hash: Hash32 = wire("hash", D, default=b"")
    """keccak of the header's RLP; filled by the decoder, never by hand."""

    def _summary(self) -> Iterator[tuple[str, Any]]:
        yield from (("number", self.number), ("hash", self.hash), ("parent_hash", self.parent_hash),
                    ("timestamp", utc(self.timestamp)), ("miner", self.coinbase),
                    ("gas_used", self.gas_used), ("gas_limit", self.gas_limit))
        if self.base_fee_per_gas is not None:
            yield "base_fee_per_gas", self.base_fee_per_gas
        if self.difficulty:
            yield "difficulty", self.difficulty


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Withdrawal(Pretty):
    """A validator withdrawal (Shanghai and later); amount in gwei."""

    index: int = wire("index", Q)
    validator_index: int = wire("validatorIndex", Q)
    address: Address = wire("address", D)
    amount: int = wire("amount", Q)


# --------------------------------------------------------------------------------------------
# Transactions


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class AccessListEntry(Pretty):
    """One entry of an access list (EIP-2930): an address and the storage keys a transaction
    declares it will touch."""

    address: Address = wire("address", D)
    storage_keys: tuple[Hash32, ...] = wire("storageKeys", D)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Authorization(Pretty):
    """A set-code authorization: the signer delegates its code to ``address``."""

    chain_id: int = wire("chainId", Q)
    address: Address = wire("address", D)
    nonce: int = wire("nonce", Q)
    y_parity: int = wire("yParity", Q)
    r: int = wire("r", Q)
    s: int = wire("s", Q)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class LegacyTransaction(Pretty):
    """A pre-typed transaction; ``v`` carries the chain id when replay-protected."""

    nonce: int = wire("nonce", Q)
    gas_price: int = wire("gasPrice", Q)
    gas: int = wire("gas", Q)
    to: Address | None = wire("to", D)
    value: int = wire("value", Q)
    data: bytes = wire("input", D)
    v: int = wire("v", Q)
    r: int = wire("r", Q)
    s: int = wire("s", Q)

    type: ClassVar[int] = 0
    computed: ClassVar[tuple[tuple[str, str, Kind], ...]] = (
        ("type", "type", Q),
        ("chainId", "chain_id", Q),
    )

    @property
    def chain_id(self) -> int | None:
        """The chain id of a replay-protected (EIP-155) signature, else None."""
        return (self.v - 35) // 2 if self.v >= 35 else None


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class AccessListTransaction(Pretty):
    """A type-1 transaction (EIP-2930, Berlin): a legacy gas price plus an access list."""

    chain_id: int = wire("chainId", Q)
    nonce: int = wire("nonce", Q)
    gas_price: int = wire("gasPrice", Q)
    gas: int = wire("gas", Q)
    to: Address | None = wire("to", D)
    value: int = wire("value", Q)
    data: bytes = wire("input", D)
    access_list: tuple[AccessListEntry, ...] = wire("accessList", OBJ)
    y_parity: int = wire("yParity", Q)
    r: int = wire("r", Q)
    s: int = wire("s", Q)

    type: ClassVar[int] = 1
    computed: ClassVar[tuple[tuple[str, str, Kind], ...]] = (("type", "type", Q), ("v", "y_parity", Q))


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class DynamicFeeTransaction(Pretty):
    """A type-2 transaction (EIP-1559, London): a fee cap and a priority fee (tip) cap instead of a
    gas price."""

    chain_id: int = wire("chainId", Q)
    nonce: int = wire("nonce", Q)
    max_priority_fee_per_gas: int = wire("maxPriorityFeePerGas", Q)
    max_fee_per_gas: int = wire("maxFeePerGas", Q)
    gas: int = wire("gas", Q)
    to: Address | None = wire("to", D)
    value: int = wire("value", Q)
    data: bytes = wire("input", D)
    access_list: tuple[AccessListEntry, ...] = wire("accessList", OBJ)
    y_parity: int = wire("yParity", Q)
    r: int = wire("r", Q)
    s: int = wire("s", Q)

    type: ClassVar[int] = 2
    computed: ClassVar[tuple[tuple[str, str, Kind], ...]] = (("type", "type", Q), ("v", "y_parity", Q))


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class BlobTransaction(Pretty):
    """A type-3 transaction (EIP-4844, Cancun): a dynamic-fee transaction carrying blob versioned
    hashes and a blob fee cap."""

    chain_id: int = wire("chainId", Q)
    nonce: int = wire("nonce", Q)
    max_priority_fee_per_gas: int = wire("maxPriorityFeePerGas", Q)
    max_fee_per_gas: int = wire("maxFeePerGas", Q)
    gas: int = wire("gas", Q)
    to: Address = wire("to", D)
    value: int = wire("value", Q)
    data: bytes = wire("input", D)
    access_list: tuple[AccessListEntry, ...] = wire("accessList", OBJ)
    max_fee_per_blob_gas: int = wire("maxFeePerBlobGas", Q)
    blob_versioned_hashes: tuple[Hash32, ...] = wire("blobVersionedHashes", D)
    y_parity: int = wire("yParity", Q)
    r: int = wire("r", Q)
    s: int = wire("s", Q)

    type: ClassVar[int] = 3
    computed: ClassVar[tuple[tuple[str, str, Kind], ...]] = (("type", "type", Q), ("v", "y_parity", Q))


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class SetCodeTransaction(Pretty):
    """A type-4 transaction (EIP-7702, Prague): a dynamic-fee transaction carrying authorizations
    that set accounts' code to a delegation."""

    chain_id: int = wire("chainId", Q)
    nonce: int = wire("nonce", Q)
    max_priority_fee_per_gas: int = wire("maxPriorityFeePerGas", Q)
    max_fee_per_gas: int = wire("maxFeePerGas", Q)
    gas: int = wire("gas", Q)
    to: Address = wire("to", D)
    value: int = wire("value", Q)
    data: bytes = wire("input", D)
    access_list: tuple[AccessListEntry, ...] = wire("accessList", OBJ)
    authorization_list: tuple[Authorization, ...] = wire("authorizationList", OBJ)
    y_parity: int = wire("yParity", Q)
    r: int = wire("r", Q)
    s: int = wire("s", Q)

    type: ClassVar[int] = 4
    computed: ClassVar[tuple[tuple[str, str, Kind], ...]] = (("type", "type", Q), ("v", "y_parity", Q))


Transaction: TypeAlias = (
    LegacyTransaction
    | AccessListTransaction
    | DynamicFeeTransaction
    | BlobTransaction
    | SetCodeTransaction
)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class IncludedTransaction(Pretty):
    """A transaction as it stands in a block: where it is, who sent it, what gas price it paid.

    The sender is recovered once, at import, and stored.
    """

    transaction: Transaction = wire("", OBJ)
    hash: Hash32 = wire("hash", D)
    sender: Address = wire("from", D)
    block_hash: Hash32 = wire("blockHash", D)
    block_number: int = wire("blockNumber", Q)
    block_timestamp: int = wire("blockTimestamp", Q)
    """The block's timestamp (geth 1.17 writes it; see :mod:`ethread.codec.answers`)."""
    index: int = wire("transactionIndex", Q)
    gas_price: int = wire("gasPrice", Q)
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


# --------------------------------------------------------------------------------------------
# Receipts and logs


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Log(Pretty):
    """An event emitted by a contract, with where it was emitted: block, transaction and position
    in the block."""

    address: Address = wire("address", D)
    topics: tuple[Hash32, ...] = wire("topics", D)
    data: bytes = wire("data", D)
    block_number: int = wire("blockNumber", Q)
    transaction_hash: Hash32 = wire("transactionHash", D)
    transaction_index: int = wire("transactionIndex", Q)
    block_hash: Hash32 = wire("blockHash", D)
    block_timestamp: int = wire("blockTimestamp", Q)
    log_index: int = wire("logIndex", Q)
    """Position among all logs of the block, not of the transaction."""
    removed: bool = wire("removed", B, default=False)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Receipt(Pretty):
    """A transaction's receipt with the context the RPC answer carries.

    Before Byzantium a receipt commits to the intermediate state ``root``; later ones carry a
    ``status``. Exactly one of the two is set.
    """

    type: int = wire("type", Q)
    status: int | None = wire("status", Q, omit_none=True)
    root: Hash32 | None = wire("root", D, omit_none=True)
    cumulative_gas_used: int = wire("cumulativeGasUsed", Q)
    logs_bloom: bytes = wire("logsBloom", D)
    logs: tuple[Log, ...] = wire("logs", OBJ)
    transaction_hash: Hash32 = wire("transactionHash", D)
    transaction_index: int = wire("transactionIndex", Q)
    block_hash: Hash32 = wire("blockHash", D)
    block_number: int = wire("blockNumber", Q)
    sender: Address = wire("from", D)
    to: Address | None = wire("to", D)
    gas_used: int = wire("gasUsed", Q)
    effective_gas_price: int = wire("effectiveGasPrice", Q)
    contract_address: Address | None = wire("contractAddress", D)
    blob_gas_used: int | None = wire("blobGasUsed", Q, omit_none=True)
    blob_gas_price: int | None = wire("blobGasPrice", Q, omit_none=True)

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


# --------------------------------------------------------------------------------------------
# Proofs


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class StorageProof(Pretty):
    """An EIP-1186 proof of one storage slot: its key, value and the trie nodes from the storage
    root."""

    key: bytes = wire("key", Kind.SLOT)
    """The key as the caller wrote it (32 bytes, or shorter: then answered as a quantity)."""
    value: int = wire("value", Q)
    proof: tuple[bytes, ...] = wire("proof", D)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class AccountProof(Pretty):
    """An EIP-1186 proof of one account and some of its storage slots."""

    address: Address = wire("address", D)
    account_proof: tuple[bytes, ...] = wire("accountProof", D)
    balance: int = wire("balance", Q)
    code_hash: Hash32 = wire("codeHash", D)
    nonce: int = wire("nonce", Q)
    storage_hash: Hash32 = wire("storageHash", D)
    storage_proof: tuple[StorageProof, ...] = wire("storageProof", OBJ)


# --------------------------------------------------------------------------------------------
# Requests

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
    """The filter object of eth_getLogs and eth_newFilter: a block range or one block hash,
    addresses and topic positions."""

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
        """Whether the call carries blob fields (versioned hashes or a blob fee cap), making it a
        blob transaction."""
        return self.blob_versioned_hashes is not None or self.max_fee_per_blob_gas is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class AccountOverride:
    """One account of an eth_call state override set; None means "leave as it is".

    ``state`` replaces the account's whole storage, ``state_diff`` changes only the slots it
    names; geth refuses both at once, when the call runs.
    """

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


# --------------------------------------------------------------------------------------------
# Results of execution methods


@dataclass(frozen=True, slots=True, kw_only=True)
class AccessListResult:
    """eth_createAccessList: the list a transaction would touch, the gas it would use with
    that list, and why it failed when it does (the list is still answered)."""

    access_list: tuple[AccessListEntry, ...] = wire("accessList", OBJ)
    error: str | None = wire("error", Kind.TEXT, omit_none=True)
    gas_used: int = wire("gasUsed", Q)
