"""Transactions: one decoder per type (legacy, access-list, dynamic-fee, blob, set-code), the
access-list and authorization readers, a transaction's encodings, and its signing hash.

Each decoder reads its type's fields in RLP order as the :class:`~ethread.rlpcodec.fields.Rules`
it is given say; the fields come from pyrlp (bytes from outside) or from
:mod:`ethread.rlpcodec.items` (a store's records) alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import rlp
from eth_utils import keccak

from ..models import (
    AccessListEntry,
    AccessListTransaction,
    Authorization,
    BlobTransaction,
    DynamicFeeTransaction,
    Hash32,
    LegacyTransaction,
    SetCodeTransaction,
    Transaction,
    trusted_maker,
)
from .fields import STRICT, Rules
from .items import DecodeError, Nested, decode_list, encode_nested, int_to_bytes

_ENTRY = trusted_maker(AccessListEntry, "address storage_keys")
_AUTHORIZATION = trusted_maker(Authorization, by_keyword=True)
_LEGACY = trusted_maker(LegacyTransaction, by_keyword=True)
_ACCESS_LIST_TX = trusted_maker(AccessListTransaction, by_keyword=True)
_DYNAMIC_FEE = trusted_maker(DynamicFeeTransaction, by_keyword=True)
_BLOB = trusted_maker(BlobTransaction, by_keyword=True)
_SET_CODE = trusted_maker(SetCodeTransaction, by_keyword=True)


# -- Access lists and authorizations ---------------------------------------------------------------


def access_list(raw: Nested, rules: Rules) -> tuple[AccessListEntry, ...]:
    """The one access-list reader (EIP-2930): ``[[address, [key, ...]], ...]``."""
    entries = rules.sequence(raw)
    if not entries:  # most transactions' access lists are empty
        return ()
    exact, hashes, record = rules.exact, rules.hashes, rules.record
    out = []
    for entry in entries:
        address, keys = record(entry, 2, "access list entry must be [address, keys]", (1,))
        out.append(_ENTRY(exact(address, 20), hashes(keys)))
    return tuple(out)


def _access_list_fields(entries: Sequence[AccessListEntry]) -> list[Any]:
    return [[e.address, list(e.storage_keys)] for e in entries]


def authorizations(raw: Nested, rules: Rules) -> tuple[Authorization, ...]:
    """The one reader of a set-code transaction's authorization list (EIP-7702)."""
    uint = rules.uint
    out = []
    for item in rules.sequence(raw):
        f = rules.record(item, 6, "authorization must have 6 fields", ())
        out.append(_AUTHORIZATION(chain_id=uint(f[0]), address=rules.exact(f[1], 20),
                                  nonce=uint(f[2]), y_parity=uint(f[3]), r=uint(f[4]),
                                  s=uint(f[5])))
    return tuple(out)


def _authorization_fields(auths: Sequence[Authorization]) -> list[Any]:
    return [
        [int_to_bytes(a.chain_id), a.address, int_to_bytes(a.nonce), int_to_bytes(a.y_parity),
         int_to_bytes(a.r), int_to_bytes(a.s)]
        for a in auths
    ]


# -- One decoder per type --------------------------------------------------------------------------


def _fields(raw: Nested, rules: Rules, count: int, kind: str, *lists_at: int) -> list[Any]:
    """The ``count`` fields of a ``kind`` transaction. (The fee-market decoders read ``to``
    after the access list, so that a payload with two bad fields names the same one as ever.)"""
    return rules.record(raw, count, f"{kind} transaction has {count} fields, got {{got}}",
                        lists_at)


def legacy_transaction(raw: Nested, rules: Rules) -> LegacyTransaction:
    """A legacy transaction from its 9 fields: nonce, gas price, gas, to, value, data, v, r, s."""
    f = _fields(raw, rules, 9, "legacy")
    uint = rules.uint
    return _LEGACY(nonce=uint(f[0]), gas_price=uint(f[1]), gas=uint(f[2]), to=rules.to(f[3]),
                   value=uint(f[4]), data=rules.string(f[5]), v=uint(f[6]), r=uint(f[7]),
                   s=uint(f[8]))


def access_list_transaction(raw: Nested, rules: Rules) -> AccessListTransaction:
    """A type-1 transaction from its 11 fields: chain id, nonce, gas price, gas, to, value,
    data, access list, y parity, r, s."""
    f = _fields(raw, rules, 11, "access-list", 7)
    uint = rules.uint
    return _ACCESS_LIST_TX(
        chain_id=uint(f[0]), nonce=uint(f[1]), gas_price=uint(f[2]), gas=uint(f[3]),
        to=rules.to(f[4]), value=uint(f[5]), data=rules.string(f[6]),
        access_list=access_list(f[7], rules), y_parity=uint(f[8]), r=uint(f[9]), s=uint(f[10]))


def _fee_market(f: list[Any], rules: Rules) -> dict[str, Any]:
    """The nine fields the blob and set-code types open with, as a type-2 transaction's:
    chain id, nonce, tip cap, fee cap, gas, to (never empty), value, data, access list."""
    uint = rules.uint
    return {"chain_id": uint(f[0]), "nonce": uint(f[1]), "max_priority_fee_per_gas": uint(f[2]),
            "max_fee_per_gas": uint(f[3]), "gas": uint(f[4]), "value": uint(f[6]),
            "data": rules.string(f[7]), "access_list": access_list(f[8], rules),
            "to": rules.exact(f[5], 20)}


def dynamic_fee_transaction(raw: Nested, rules: Rules) -> DynamicFeeTransaction:
    """A type-2 transaction from its 12 fields: the nine of :func:`_fee_market`, y parity, r, s."""
    f = _fields(raw, rules, 12, "dynamic-fee", 8)
    uint = rules.uint
    return _DYNAMIC_FEE(
        chain_id=uint(f[0]), nonce=uint(f[1]), max_priority_fee_per_gas=uint(f[2]),
        max_fee_per_gas=uint(f[3]), gas=uint(f[4]), value=uint(f[6]), data=rules.string(f[7]),
        access_list=access_list(f[8], rules), to=rules.to(f[5]), y_parity=uint(f[9]),
        r=uint(f[10]), s=uint(f[11]))


def blob_transaction(raw: Nested, rules: Rules) -> BlobTransaction:
    """A type-3 transaction from its 14 fields: the nine of :func:`_fee_market` (``to`` never
    empty), then the blob fee cap and the blob versioned hashes, y parity, r, s."""
    f = _fields(raw, rules, 14, "blob", 8, 10)
    uint = rules.uint
    return _BLOB(**_fee_market(f, rules), max_fee_per_blob_gas=uint(f[9]),
                 blob_versioned_hashes=rules.hashes(f[10]), y_parity=uint(f[11]), r=uint(f[12]),
                 s=uint(f[13]))


def set_code_transaction(raw: Nested, rules: Rules) -> SetCodeTransaction:
    """A type-4 transaction from its 13 fields: the nine of :func:`_fee_market` (``to`` never
    empty), then the authorization list, y parity, r, s."""
    f = _fields(raw, rules, 13, "set-code", 8, 9)
    uint = rules.uint
    return _SET_CODE(**_fee_market(f, rules),
                     authorization_list=authorizations(f[9], rules), y_parity=uint(f[10]),
                     r=uint(f[11]), s=uint(f[12]))


_TYPED: dict[int, Callable[[Any, Rules], Transaction]] = {
    1: access_list_transaction, 2: dynamic_fee_transaction, 3: blob_transaction,
    4: set_code_transaction,
}


def typed_transaction_from_fields(kind: int, fields: Any, rules: Rules = STRICT) -> Transaction:
    """A typed transaction of type ``kind`` (1 to 4) from its decoded RLP payload."""
    fields = rules.sequence(fields)
    decoder = _TYPED.get(kind)
    if decoder is None:
        raise DecodeError(f"unknown transaction type {kind}")
    return decoder(fields, rules)


def decode_typed_transaction(envelope: bytes) -> Transaction:
    """A typed transaction (types 1 to 4) from its envelope from outside, every field checked."""
    if not envelope:
        raise DecodeError("empty typed transaction")
    try:
        fields = rlp.decode(envelope[1:])
    except rlp.DecodingError as exc:
        raise DecodeError(f"typed transaction RLP: {exc}") from None
    return typed_transaction_from_fields(envelope[0], fields)


def decode_transaction(item: Any, encoded: bytes | None = None) -> tuple[Transaction, bytes]:
    """Decode one transaction of a block body from outside (a list for legacy, a string holding
    ``type || rlp(payload)`` for typed ones), every field checked, with its hash; ``encoded``:
    a legacy item's own RLP, when the caller has it."""
    if isinstance(item, list):
        tx: Transaction = legacy_transaction(item, STRICT)
        return tx, keccak(encoded if encoded is not None else rlp.encode(item))
    return decode_typed_transaction(item), keccak(item)


def transaction_of_record(item: Nested, rules: Rules) -> Transaction:
    """A transaction of a stored body (a legacy list, or a typed envelope), read by ``rules``;
    its envelope's payload decoded by :func:`~ethread.rlpcodec.items.decode_list`."""
    if isinstance(item, list):
        return legacy_transaction(item, rules)
    if not item:
        raise DecodeError("empty typed transaction")
    return typed_transaction_from_fields(item[0], decode_list(item[1:]), rules)


# -- Encoding, hashes ------------------------------------------------------------------------------


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


def typed_signing_hash(kind: bytes, fields: Sequence[Any]) -> Hash32:
    """The hash a typed transaction's sender signs: its envelope without y parity, r and s."""
    return keccak(kind + encode_nested(fields[:-3]))


def signing_hash_of_item(item: Any, chain_id: int | None = None) -> Hash32:
    """The hash a sender signs, from the transaction as a block body holds it: the envelope
    without its signature fields. ``chain_id`` matters for a legacy transaction only: given,
    it is replay-protected (EIP-155)."""
    if isinstance(item, list):
        fields = item[:6]
        if chain_id is not None:
            fields = [*fields, int_to_bytes(chain_id), b"", b""]
        return keccak(encode_nested(fields))
    if not isinstance(item, bytes) or not item:
        raise DecodeError("malformed transaction")
    return typed_signing_hash(item[:1], rlp.decode(item[1:]))


def signing_hash(tx: Transaction, chain_id: int | None = None) -> Hash32:
    """The hash the sender of ``tx`` signs (see :func:`signing_hash_of_item`)."""
    return signing_hash_of_item(transaction_item(tx), chain_id)


def encode_transaction(tx: Transaction) -> bytes:
    """The bytes a transaction's hash is taken over (and eth_sendRawTransaction would take)."""
    item = transaction_item(tx)
    return encode_nested(item) if isinstance(item, list) else bytes(item)


def transaction_hash(tx: Transaction) -> Hash32:
    """The hash of a transaction: keccak of its canonical encoding."""
    return keccak(encode_transaction(tx))
