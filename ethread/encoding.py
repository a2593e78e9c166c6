"""Canonical RLP of headers, transactions, withdrawals, receipts and blocks.

These are the network forms that ``geth export``, Era1 archives and trie roots use. Decoding
returns models; encoding reproduces the same bytes, so hashes and roots recompute.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import rlp
from eth_utils import keccak

from .fastrlp import encode_nested
from .models import (
    AccessListEntry,
    AccessListTransaction,
    Address,
    Authorization,
    BlobTransaction,
    DynamicFeeTransaction,
    Hash32,
    Header,
    LegacyTransaction,
    Log,
    SetCodeTransaction,
    Transaction,
    Withdrawal,
)


class DecodeError(ValueError):
    """Bytes that are not the RLP form they were said to be."""


def _int(raw: Any) -> int:
    if not isinstance(raw, bytes):
        raise DecodeError("expected an RLP string for an integer, got a list")
    if raw[:1] == b"\x00":
        raise DecodeError("integer with leading zero bytes")
    return int.from_bytes(raw, "big")


def _bytes(raw: Any, length: int | None = None) -> bytes:
    if not isinstance(raw, bytes):
        raise DecodeError("expected an RLP string, got a list")
    if length is not None and len(raw) != length:
        raise DecodeError(f"expected {length} bytes, got {len(raw)}")
    return raw


def _list(raw: Any) -> list[Any]:
    if not isinstance(raw, list):
        raise DecodeError("expected an RLP list")
    return raw


def _to(raw: Any) -> Address | None:
    data = _bytes(raw)
    if not data:
        return None
    if len(data) != 20:
        raise DecodeError("recipient must be 20 bytes or empty")
    return data


def _rlp(item: Any) -> bytes:
    return encode_nested(item)


def int_to_bytes(value: int) -> bytes:
    """An integer as RLP stores it: big-endian, no leading zero bytes (0 is empty)."""
    return value.to_bytes((value.bit_length() + 7) // 8, "big")


# --------------------------------------------------------------------------------------------
# Headers

_HEADER_BASE = 15
_HEADER_OPTIONAL = (
    "base_fee_per_gas",
    "withdrawals_root",
    "blob_gas_used",
    "excess_blob_gas",
    "parent_beacon_block_root",
    "requests_hash",
)
_HEADER_INT_OPTIONAL = {"base_fee_per_gas", "blob_gas_used", "excess_blob_gas"}


def header_fields(header: Header) -> list[Any]:
    """The header as the nested list RLP encodes."""
    items: list[Any] = [
        header.parent_hash,
        header.uncles_hash,
        header.coinbase,
        header.state_root,
        header.transactions_root,
        header.receipts_root,
        header.logs_bloom,
        int_to_bytes(header.difficulty),
        int_to_bytes(header.number),
        int_to_bytes(header.gas_limit),
        int_to_bytes(header.gas_used),
        int_to_bytes(header.timestamp),
        header.extra_data,
        header.mix_hash,
        header.nonce,
    ]
    for name in _HEADER_OPTIONAL:
        value = getattr(header, name)
        if value is None:
            break
        items.append(int_to_bytes(value) if name in _HEADER_INT_OPTIONAL else value)
    return items


def encode_header(header: Header) -> bytes:
    """The RLP encoding of a header (keccak of it is the block hash)."""
    return _rlp(header_fields(header))


def header_from_fields(items: Any, *, raw: bytes | None = None) -> Header:
    """A :class:`~ethread.models.Header` from its decoded RLP fields (15 to 21 of them, by fork).
    """
    items = _list(items)
    if not _HEADER_BASE <= len(items) <= _HEADER_BASE + len(_HEADER_OPTIONAL):
        raise DecodeError(f"a header has 15 to 21 fields, got {len(items)}")
    optional: dict[str, Any] = {}
    for name, value in zip(_HEADER_OPTIONAL, items[_HEADER_BASE:], strict=False):
        optional[name] = _int(value) if name in _HEADER_INT_OPTIONAL else _bytes(value, 32)
    header = Header(
        parent_hash=_bytes(items[0], 32),
        uncles_hash=_bytes(items[1], 32),
        coinbase=_bytes(items[2], 20),
        state_root=_bytes(items[3], 32),
        transactions_root=_bytes(items[4], 32),
        receipts_root=_bytes(items[5], 32),
        logs_bloom=_bytes(items[6], 256),
        difficulty=_int(items[7]),
        number=_int(items[8]),
        gas_limit=_int(items[9]),
        gas_used=_int(items[10]),
        timestamp=_int(items[11]),
        extra_data=_bytes(items[12]),
        mix_hash=_bytes(items[13], 32),
        nonce=_bytes(items[14], 8),
        **optional,
    )
    encoded = raw if raw is not None else rlp.encode(items)
    return _with_hash(header, keccak(encoded))


def _with_hash(header: Header, digest: Hash32) -> Header:
    object.__setattr__(header, "hash", digest)
    return header


def decode_header(data: bytes) -> Header:
    """A :class:`~ethread.models.Header` from its RLP (its hash included); raises
    :class:`~ethread.errors.DecodeError` on malformed input."""
    try:
        items = rlp.decode(data)
    except rlp.DecodingError as exc:
        raise DecodeError(f"header RLP: {exc}") from None
    return header_from_fields(items, raw=data)


# --------------------------------------------------------------------------------------------
# Transactions


def _fixed_lists(raw: Any, count: int, wrong: str) -> Iterator[list[Any]]:
    """The items of the RLP list ``raw``, each a list of ``count`` fields (else ``wrong``)."""
    for item in _list(raw):
        fields = _list(item)
        if len(fields) != count:
            raise DecodeError(wrong)
        yield fields


def _access_list(raw: Any) -> tuple[AccessListEntry, ...]:
    return tuple(
        AccessListEntry(address=_bytes(pair[0], 20), storage_keys=tuple(_bytes(k, 32) for k in _list(pair[1])))
        for pair in _fixed_lists(raw, 2, "access list entry must be [address, keys]")
    )


def _access_list_fields(entries: Sequence[AccessListEntry]) -> list[Any]:
    return [[e.address, list(e.storage_keys)] for e in entries]


def _authorizations(raw: Any) -> tuple[Authorization, ...]:
    return tuple(
        Authorization(
            chain_id=_int(f[0]),
            address=_bytes(f[1], 20),
            nonce=_int(f[2]),
            y_parity=_int(f[3]),
            r=_int(f[4]),
            s=_int(f[5]),
        )
        for f in _fixed_lists(raw, 6, "authorization must have 6 fields")
    )


def _authorization_fields(auths: Sequence[Authorization]) -> list[Any]:
    return [
        [int_to_bytes(a.chain_id), a.address, int_to_bytes(a.nonce), int_to_bytes(a.y_parity),
         int_to_bytes(a.r), int_to_bytes(a.s)]
        for a in auths
    ]


def _expect(fields: list[Any], count: int, kind: str) -> list[Any]:
    if len(fields) != count:
        raise DecodeError(f"{kind} transaction has {count} fields, got {len(fields)}")
    return fields


def decode_transaction(item: Any, encoded: bytes | None = None) -> tuple[Transaction, bytes]:
    """Decode one transaction as it appears in a block body (a list for legacy, a string
    holding ``type || rlp(payload)`` for typed ones). Returns it with its hash. ``encoded``,
    when the caller has it, is a legacy item's own RLP (hashed instead of encoding the item
    again)."""
    if isinstance(item, list):
        f = _expect(item, 9, "legacy")
        tx: Transaction = LegacyTransaction(
            nonce=_int(f[0]), gas_price=_int(f[1]), gas=_int(f[2]), to=_to(f[3]),
            value=_int(f[4]), data=_bytes(f[5]), v=_int(f[6]), r=_int(f[7]), s=_int(f[8]),
        )
        return tx, keccak(encoded if encoded is not None else rlp.encode(item))
    return decode_typed_transaction(item), keccak(item)


def _fee_market_fields(f: list[Any]) -> dict[str, Any]:
    """The fields the EIP-1559 payload opens with, which the blob (EIP-4844) and set-code
    (EIP-7702) payloads keep in the same places; ``to`` (``f[5]``) each type reads its own way."""
    return {
        "chain_id": _int(f[0]), "nonce": _int(f[1]), "max_priority_fee_per_gas": _int(f[2]),
        "max_fee_per_gas": _int(f[3]), "gas": _int(f[4]), "value": _int(f[6]), "data": _bytes(f[7]),
        "access_list": _access_list(f[8]),
    }


def decode_typed_transaction(envelope: bytes) -> Transaction:
    """A typed transaction (types 1 to 4) from its envelope: the type byte followed by the RLP
    payload."""
    if not envelope:
        raise DecodeError("empty typed transaction")
    try:
        fields = rlp.decode(envelope[1:])
    except rlp.DecodingError as exc:
        raise DecodeError(f"typed transaction RLP: {exc}") from None
    return typed_transaction_from_fields(envelope[0], fields)


def typed_transaction_from_fields(kind: int, fields: Any) -> Transaction:
    """A typed transaction of type ``kind`` (1 to 4) from its decoded RLP payload."""
    f = _list(fields)
    if kind == 1:
        _expect(f, 11, "access-list")
        return AccessListTransaction(
            chain_id=_int(f[0]), nonce=_int(f[1]), gas_price=_int(f[2]), gas=_int(f[3]),
            to=_to(f[4]), value=_int(f[5]), data=_bytes(f[6]), access_list=_access_list(f[7]),
            y_parity=_int(f[8]), r=_int(f[9]), s=_int(f[10]),
        )
    if kind == 2:
        _expect(f, 12, "dynamic-fee")
        return DynamicFeeTransaction(
            **_fee_market_fields(f), to=_to(f[5]), y_parity=_int(f[9]), r=_int(f[10]), s=_int(f[11]),
        )
    if kind == 3:
        _expect(f, 14, "blob")
        return BlobTransaction(
            **_fee_market_fields(f), to=_bytes(f[5], 20), max_fee_per_blob_gas=_int(f[9]),
            blob_versioned_hashes=tuple(_bytes(h, 32) for h in _list(f[10])),
            y_parity=_int(f[11]), r=_int(f[12]), s=_int(f[13]),
        )
    if kind == 4:
        _expect(f, 13, "set-code")
        return SetCodeTransaction(
            **_fee_market_fields(f), to=_bytes(f[5], 20), authorization_list=_authorizations(f[9]),
            y_parity=_int(f[10]), r=_int(f[11]), s=_int(f[12]),
        )
    raise DecodeError(f"unknown transaction type {kind}")


def transaction_item(tx: Transaction) -> Any:
    """The transaction as a block body holds it: a list (legacy) or the typed envelope."""
    if isinstance(tx, LegacyTransaction):
        return [int_to_bytes(tx.nonce), int_to_bytes(tx.gas_price), int_to_bytes(tx.gas), tx.to or b"",
                int_to_bytes(tx.value), tx.data, int_to_bytes(tx.v), int_to_bytes(tx.r), int_to_bytes(tx.s)]
    head: list[Any] = [int_to_bytes(tx.chain_id), int_to_bytes(tx.nonce)]
    if isinstance(tx, AccessListTransaction):
        body = [*head, int_to_bytes(tx.gas_price), int_to_bytes(tx.gas), tx.to or b"",
                int_to_bytes(tx.value), tx.data, _access_list_fields(tx.access_list)]
    else:
        body = [*head, int_to_bytes(tx.max_priority_fee_per_gas), int_to_bytes(tx.max_fee_per_gas),
                int_to_bytes(tx.gas), tx.to or b"", int_to_bytes(tx.value), tx.data,
                _access_list_fields(tx.access_list)]
        if isinstance(tx, BlobTransaction):
            body += [int_to_bytes(tx.max_fee_per_blob_gas), list(tx.blob_versioned_hashes)]
        elif isinstance(tx, SetCodeTransaction):
            body.append(_authorization_fields(tx.authorization_list))
    body += [int_to_bytes(tx.y_parity), int_to_bytes(tx.r), int_to_bytes(tx.s)]
    return bytes([tx.type]) + encode_nested(body)


def signing_hash_of_item(item: Any, chain_id: int | None = None) -> Hash32:
    """The hash a sender signs, from the transaction as a block body holds it (see
    :func:`transaction_item`): the envelope without its signature fields. ``chain_id`` only
    matters for a legacy transaction: given, the signature is replay-protected (EIP-155);
    None, it is valid on any chain. Typed transactions carry their chain id themselves."""
    if isinstance(item, list):
        fields = item[:6]
        if chain_id is not None:
            fields = [*fields, int_to_bytes(chain_id), b"", b""]
        return keccak(encode_nested(fields))
    if not isinstance(item, bytes) or not item:
        raise DecodeError("malformed transaction")
    unsigned = rlp.decode(item[1:])[:-3]  # drop y_parity, r, s
    return keccak(item[:1] + encode_nested(unsigned))


def signing_hash(tx: Transaction, chain_id: int | None = None) -> Hash32:
    """The hash the sender of ``tx`` signs (see :func:`signing_hash_of_item`)."""
    return signing_hash_of_item(transaction_item(tx), chain_id)


def encode_transaction(tx: Transaction) -> bytes:
    """The bytes a transaction's hash is taken over (and eth_sendRawTransaction would take)."""
    item = transaction_item(tx)
    return _rlp(item) if isinstance(item, list) else bytes(item)


def transaction_hash(tx: Transaction) -> Hash32:
    """The hash of a transaction: keccak of its canonical encoding."""
    return keccak(encode_transaction(tx))


# --------------------------------------------------------------------------------------------
# Withdrawals, logs, receipts


def decode_withdrawal(item: Any) -> Withdrawal:
    """A :class:`~ethread.models.Withdrawal` from its decoded RLP list."""
    f = _list(item)
    if len(f) != 4:
        raise DecodeError("withdrawal must have 4 fields")
    return Withdrawal(index=_int(f[0]), validator_index=_int(f[1]), address=_bytes(f[2], 20),
                      amount=_int(f[3]))


def withdrawal_item(w: Withdrawal) -> list[Any]:
    """A withdrawal as RLP encodes it: index, validator index, address, amount."""
    return [int_to_bytes(w.index), int_to_bytes(w.validator_index), w.address, int_to_bytes(w.amount)]


def log_item(log: Log) -> list[Any]:
    """A log as the receipt's RLP holds it: address, topics, data."""
    return [log.address, list(log.topics), log.data]


def encode_receipt(
    tx_type: int,
    status_or_root: int | bytes,
    cumulative_gas_used: int,
    logs_bloom: bytes,
    logs: Sequence[Log],
) -> bytes:
    """Consensus encoding of a receipt (what the receipts trie and Era1 files hold)."""
    first = status_or_root if isinstance(status_or_root, bytes) else int_to_bytes(status_or_root)
    payload = _rlp([first, int_to_bytes(cumulative_gas_used), logs_bloom,
                          [log_item(log) for log in logs]])
    return payload if tx_type == 0 else bytes([tx_type]) + payload


# --------------------------------------------------------------------------------------------
# Blocks


class TruncatedRLP(DecodeError):
    """Back-to-back RLP items end in one that does not decode; ``complete`` holds the items
    before it and ``position`` the byte where it starts."""

    def __init__(self, message: str, complete: list[bytes], position: int) -> None:
        super().__init__(message)
        self.complete = complete
        self.position = position


def split_concatenated(data: bytes) -> list[bytes]:
    """Split back-to-back RLP items (as ``geth export`` writes blocks) into their encodings.

    Raises :class:`TruncatedRLP` when an item is cut short or malformed."""
    out = []
    pos = 0
    try:
        while pos < len(data):
            _, _, end = rlp.codec.consume_item(data, pos)
            out.append(data[pos:end])
            pos = end
    except (rlp.DecodingError, IndexError) as exc:
        cut = "truncated" if isinstance(exc, IndexError) else "malformed"
        raise TruncatedRLP(f"item {len(out) + 1}, starting at byte {pos} of {len(data)}, is "
                           f"{cut} ({exc}); the {len(out)} item(s) before it are whole",
                           out, pos) from None
    return out


def block_item(
    header: Header,
    transactions: Sequence[Transaction],
    uncles: Sequence[Header],
    withdrawals: Sequence[Withdrawal] | None,
) -> list[Any]:
    """A block as the nested list RLP encodes: header fields, transactions, uncles and (from
    Shanghai) withdrawals."""
    item: list[Any] = [
        header_fields(header),
        [transaction_item(tx) for tx in transactions],
        [header_fields(u) for u in uncles],
    ]
    if withdrawals is not None:
        item.append([withdrawal_item(w) for w in withdrawals])
    return item
