"""Models rebuilt from the canonical RLP forms that persistent backends store.

The LevelDB store and Era1 archives both keep a block as its header RLP and body RLP, and its
receipts in their consensus encoding (status or root, cumulative gas, bloom, logs). What the
RPC answer adds (senders, per-transaction gas, contract addresses, block-wide log indexes,
effective gas prices) is derived here, in one place, so both backends answer identically and
neither stores a second copy of what the canonical bytes already say.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import rlp
from eth_keys.datatypes import Signature
from eth_keys.exceptions import BadSignature
from eth_utils import keccak
from rlp.codec import length_prefix

from .assemble import assemble_block, build_receipts
from .encoding import (
    DecodeError,
    decode_transaction,
    encode_receipt,
    header_fields,
    header_from_fields,
    signing_hash_of_item,
    transaction_item,
    typed_transaction_from_fields,
)
from .fastrlp import Nested, decode_nested, item_spans, payload_span
from .forks import ChainConfig
from .models import Address, Block, Header, Receipt

# --------------------------------------------------------------------------------------------
# Blocks


def rlp_list_length(payload_length: int) -> int:
    """Bytes of an RLP list whose payload is ``payload_length`` bytes (prefix included)."""
    return len(length_prefix(payload_length, 0xC0)) + payload_length


def list_payload(encoded: bytes) -> bytes:
    """The payload of an RLP list encoding, without its prefix."""
    if not encoded or encoded[0] < 0xC0:
        raise DecodeError("expected an RLP list")
    first = encoded[0]
    if first <= 0xF7:
        return encoded[1:]
    return encoded[1 + first - 0xF7:]


def encode_list_of_encoded(items: Sequence[bytes]) -> bytes:
    """An RLP list from items that are already RLP encoded (joins without re-encoding)."""
    payload = b"".join(items)
    length = len(payload)
    return bytes(length_prefix(length, 0xC0)) + payload


def header_of_record(header_rlp: bytes) -> Header:
    """The header a store holds in RLP, with its hash (keccak of these very bytes); decoded by
    :mod:`ethread.fastrlp`, since ethread wrote the record itself."""
    return header_from_fields(decode_nested(header_rlp), raw=header_rlp)


def block_from_parts(header_rlp: bytes, body_rlp: bytes, senders: Sequence[Address],
                     header: Header | None = None) -> Block:
    """A block model from its header RLP, its body RLP (``[txs, uncles, (withdrawals)]``) and
    the senders recovered for its transactions, as a store holds them (decoded by
    :mod:`ethread.fastrlp`); ``header``, when the caller has decoded ``header_rlp`` already.

    Each transaction's hash is keccak of its bytes in the body (a legacy transaction's own
    RLP, a typed one's envelope): nothing is encoded again."""
    if header is None:
        header = header_of_record(header_rlp)
    body = decode_nested(body_rlp)
    if not isinstance(body, list) or len(body) not in (2, 3):
        raise DecodeError("a block body is [transactions, uncles] or with withdrawals")
    items = body[0]
    if not isinstance(items, list):
        raise DecodeError("a block body's transactions must be a list")
    txs_start, txs_end = payload_span(body_rlp, payload_span(body_rlp)[0])
    spans = item_spans(body_rlp, txs_start, txs_end)
    transactions = []
    for item, (start, end) in zip(items, spans, strict=True):
        if isinstance(item, list):
            transactions.append(decode_transaction(item, body_rlp[start:end]))
        elif item:
            transactions.append((typed_transaction_from_fields(item[0], decode_nested(item[1:])),
                                 keccak(item)))
        else:
            raise DecodeError("empty typed transaction")
    size = rlp_list_length(len(header_rlp) + len(list_payload(body_rlp)))
    return assemble_block(header, transactions, senders, _as_list(body[1]),
                          _as_list(body[2]) if len(body) > 2 else None, size)


def _as_list(item: Nested) -> list[Nested]:
    if not isinstance(item, list):
        raise DecodeError("expected an RLP list")
    return item


def body_rlp(block: Block) -> bytes:
    """The body of a block as Era1 stores it: ``[txs, uncles]`` plus withdrawals if any."""
    item: list[Any] = [
        [transaction_item(tx.transaction) for tx in block.transactions],
        [header_fields(u) for u in block.uncles],
    ]
    if block.withdrawals is not None:
        from .encoding import withdrawal_item

        item.append([withdrawal_item(w) for w in block.withdrawals])
    return bytes(rlp.encode(item))


# --------------------------------------------------------------------------------------------
# Senders


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
    y, r, s = (int.from_bytes(f, "big") for f in rlp.decode(item[1:])[-3:])
    return signing_hash_of_item(item), y, r, s


def recover_senders(body: bytes) -> list[Address]:
    """Recover the sender of every transaction of a body RLP from its signature.

    Done once per block (at import, or when an Era1 file is first indexed) because it is the
    slowest step of reading history: senders are then stored or cached, never recomputed.
    """
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


# --------------------------------------------------------------------------------------------
# Receipts


class ConsensusLog(NamedTuple):
    """A log as the receipt's consensus encoding holds it (py-evm's shape: integer topics)."""

    address: bytes
    topics: tuple[int, ...]
    data: bytes


class ConsensusReceipt(NamedTuple):
    """A receipt's consensus fields, in the shape :func:`build_receipts` reads from py-evm."""

    state_root: bytes
    gas_used: int
    bloom: int
    logs: tuple[ConsensusLog, ...]


def _strict_decode(data: bytes) -> Any:
    try:
        return rlp.decode(data)
    except rlp.DecodingError as exc:
        raise DecodeError(f"RLP: {exc}") from None


def decode_consensus_receipts(data: bytes, decode: Callable[[bytes], Any] = _strict_decode
                              ) -> list[ConsensusReceipt]:
    """Decode ``rlp([receipt, ...])`` where each receipt is a list (legacy) or a typed
    envelope string. ``decode`` decodes RLP: pyrlp's strict decoder unless the caller wrote
    the bytes itself (a store's record: :func:`~ethread.fastrlp.decode_nested`)."""
    items = decode(data)
    if not isinstance(items, list):
        raise DecodeError("receipts must be an RLP list")
    out = []
    for item in items:
        if isinstance(item, bytes):
            if not item:
                raise DecodeError("empty typed receipt")
            item = decode(item[1:])
        if not isinstance(item, list) or len(item) != 4:
            raise DecodeError("a receipt has 4 fields")
        logs = tuple(
            ConsensusLog(
                address=log[0],
                topics=tuple(int.from_bytes(t, "big") for t in log[1]),
                data=log[2],
            )
            for log in item[3]
        )
        out.append(
            ConsensusReceipt(
                state_root=item[0],
                gas_used=int.from_bytes(item[1], "big"),
                bloom=int.from_bytes(item[2], "big"),
                logs=logs,
            )
        )
    return out


def receipts_from_consensus(
    block: Block, data: bytes, config: ChainConfig | None
) -> tuple[Receipt, ...]:
    """Full receipt models of ``block`` from its consensus receipts RLP, as a store holds it
    (decoded by :mod:`ethread.fastrlp`)."""
    consensus = decode_consensus_receipts(data, decode_nested)
    if len(consensus) != len(block.transactions):
        raise DecodeError(
            f"block {block.number} has {len(block.transactions)} transactions but "
            f"{len(consensus)} receipts"
        )
    if config is None:
        # Only the blob base fee needs the fork schedule, and only blocks with blob gas
        # (Cancun on) have one. Without a schedule those would get Prague's update fraction;
        # the backends that come here without one (Era1 archives) hold pre-merge history.
        config = ChainConfig(chain_id=0, block_forks=((0, "frontier"),))
    return build_receipts(block, consensus, config)


def encode_receipts(receipts: Sequence[Receipt]) -> bytes:
    """``rlp([receipt, ...])`` in consensus form: the bytes the receipts trie and Era1 hold."""
    encoded = []
    for receipt in receipts:
        first: int | bytes = receipt.root if receipt.root is not None else (receipt.status or 0)
        one = encode_receipt(
            receipt.type, first, receipt.cumulative_gas_used, receipt.logs_bloom, receipt.logs
        )
        encoded.append(one if receipt.type == 0 else rlp.encode(one))
    return encode_list_of_encoded(encoded)
