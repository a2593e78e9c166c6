"""Headers: their RLP (15 fields before London, up to 21 from Prague), one decoder for a
chain file's and a store's, and the few numbers receipts read from a stored header."""

from __future__ import annotations

from typing import Any

import rlp
from eth_hash.auto import keccak

from ..models import Hash32, Header, trusted_maker
from .fields import STRICT, TRUSTED, Rules
from .items import DecodeError, decode_list, encode_nested, int_to_bytes, list_items, uint_at

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
_HEADER_FIELDS = range(_HEADER_BASE, _HEADER_BASE + len(_HEADER_OPTIONAL) + 1)
"""Fields a header has, by fork: 15 before London, up to 21 from Prague."""


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
    return encode_nested(header_fields(header))


_HEADER = trusted_maker(Header, by_keyword=True)


def read_header(items: Any, rules: Rules, digest: Hash32 | None = None,
                encoded: bytes | None = None) -> Header:
    """The one header decoder: a :class:`~ethread.models.Header` from its decoded RLP fields,
    read by ``rules``; hashed as ``digest``, else keccak of ``encoded`` or the fields re-encoded."""
    f = rules.sequence(items)
    count = len(f)
    if count not in _HEADER_FIELDS:
        raise DecodeError(f"a header has 15 to 21 fields, got {count}")
    rules.record(f, count, "a header", ())
    if digest is None:
        digest = keccak(encoded if encoded is not None else encode_nested(f))
    uint, exact = rules.uint, rules.exact
    return _HEADER(  # the fork's fields read first, as they always were (the same error first)
        base_fee_per_gas=uint(f[15]) if count > 15 else None,
        withdrawals_root=exact(f[16], 32) if count > 16 else None,
        blob_gas_used=uint(f[17]) if count > 17 else None,
        excess_blob_gas=uint(f[18]) if count > 18 else None,
        parent_beacon_block_root=exact(f[19], 32) if count > 19 else None,
        requests_hash=exact(f[20], 32) if count > 20 else None,
        parent_hash=exact(f[0], 32),
        uncles_hash=exact(f[1], 32),
        coinbase=exact(f[2], 20),
        state_root=exact(f[3], 32),
        transactions_root=exact(f[4], 32),
        receipts_root=exact(f[5], 32),
        logs_bloom=exact(f[6], 256),
        difficulty=uint(f[7]),
        number=uint(f[8]),
        gas_limit=uint(f[9]),
        gas_used=uint(f[10]),
        timestamp=uint(f[11]),
        extra_data=rules.string(f[12]),
        mix_hash=exact(f[13], 32),
        nonce=exact(f[14], 8),
        hash=digest,
    )


def header_from_fields(items: Any, *, raw: bytes | None = None) -> Header:
    """A :class:`~ethread.models.Header` from its decoded RLP fields, every field checked;
    ``raw``: the header's RLP, when the caller has it."""
    return read_header(items, STRICT, encoded=raw)


def decode_header(data: bytes) -> Header:
    """A :class:`~ethread.models.Header` from its RLP, every field checked (else DecodeError)."""
    try:
        items = rlp.decode(data)
    except rlp.DecodingError as exc:
        raise DecodeError(f"header RLP: {exc}") from None
    return header_from_fields(items, raw=data)


def header_of_record(header_rlp: bytes, block_hash: Hash32 | None = None) -> Header:
    """The header a store holds in RLP, read on trust (every field must be a string). Its hash
    is ``block_hash``, the key the store found it under, else keccak of the bytes."""
    return read_header(decode_list(header_rlp), TRUSTED,
                       block_hash if block_hash is not None else keccak(header_rlp))


def header_facts(header_rlp: bytes) -> tuple[int, int, int | None, int | None]:
    """(number, timestamp, base fee, excess blob gas) of a header record, without decoding the
    other fields; checked as :func:`header_of_record` checks it (15 to 21 strings)."""
    if not header_rlp:
        raise DecodeError("an empty header record")
    at, lists = list_items(header_rlp)
    count = len(at) - 1
    if at[count] != len(header_rlp):
        raise DecodeError("a header must fill its record")
    if count not in _HEADER_FIELDS:
        raise DecodeError(f"a header has 15 to 21 fields, got {count}")
    if lists:
        raise DecodeError("a header's fields are strings")
    block_number = uint_at(header_rlp, at[8], at[9])
    timestamp = uint_at(header_rlp, at[11], at[12])
    base_fee = uint_at(header_rlp, at[15], at[16]) if count > 15 else None
    excess_blob_gas = uint_at(header_rlp, at[18], at[19]) if count > 18 else None
    return block_number, timestamp, base_fee, excess_blob_gas
