"""Senders recovered from the signatures of a block body's transactions."""

from __future__ import annotations

from typing import Any

import rlp
from eth_keys.datatypes import Signature
from eth_keys.exceptions import BadSignature

from ..models import Address
from .items import DecodeError
from .transactions import signing_hash_of_item, typed_signing_hash


def _signature(item: Any) -> tuple[bytes, int, int, int]:
    """(hash signed, y parity, r, s) of a transaction as a block body holds it."""
    if isinstance(item, list):
        v = int.from_bytes(item[6], "big")
        chain_id = (v - 35) // 2 if v >= 35 else None
        parity = v - 35 - 2 * chain_id if chain_id is not None else v - 27
        r, s = int.from_bytes(item[7], "big"), int.from_bytes(item[8], "big")
        return signing_hash_of_item(item, chain_id), parity, r, s
    if not isinstance(item, bytes) or not item:
        raise DecodeError("malformed transaction")
    fields = rlp.decode(item[1:])
    y, r, s = (int.from_bytes(f, "big") for f in fields[-3:])
    return typed_signing_hash(item[:1], fields), y, r, s


def recover_senders(body: bytes) -> list[Address]:
    """Recover the sender of every transaction of a body RLP from its signature (once per
    block, at import or indexing: the slowest step of reading history)."""
    try:
        items = rlp.decode(body)
    except rlp.DecodingError as exc:
        raise DecodeError(f"body RLP: {exc}") from None
    senders = []
    for item in items[0]:
        try:
            digest, parity, r, s = _signature(item)
            signature = Signature(vrs=(parity, r, s))
            public = signature.recover_public_key_from_msg_hash(digest)
        except (BadSignature, ValueError, IndexError, rlp.DecodingError) as exc:
            raise DecodeError(f"transaction signature: {exc}") from None
        senders.append(public.to_canonical_address())
    return senders
