"""Blocks: withdrawals, a block's RLP, a chain file's block and a store's header and body
records made into a :class:`~ethread.models.Block`, and what receipts read from a stored body.

The LevelDB and LMDB stores and Era1 archives all keep a block as its header RLP and body
RLP; a block decoded from either reads each transaction with the one decoder of its type
(:mod:`ethread.rlpcodec.transactions`), on trust, and hashes it from its bytes in the body.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from eth_hash.auto import keccak

from ..keccak import keccak256, keccak_spans
from ..models import (
    Address,
    BlobTransaction,
    Block,
    Hash32,
    Header,
    Transaction,
    Withdrawal,
    trusted_maker,
)
from .assemble import TxFacts, assemble_block, effective_gas_price
from .fields import STRICT, TRUSTED, Rules
from .headers import header_fields, header_from_fields, header_of_record
from .items import (
    DecodeError,
    Nested,
    decode_list_at,
    decode_nested,
    encode_nested,
    int_to_bytes,
    item_spans,
    list_items,
    payload_span,
    rlp_list_length,
    string_at,
    string_start,
    uint_at,
)
from .transactions import (
    access_list,
    decode_transaction,
    transaction_item,
    transaction_of_record,
    typed_transaction_from_fields,
)

# -- Withdrawals -----------------------------------------------------------------------------------

_WITHDRAWAL = trusted_maker(Withdrawal, by_keyword=True)


def read_withdrawal(item: Any, rules: Rules) -> Withdrawal:
    """A :class:`~ethread.models.Withdrawal` from its decoded RLP list."""
    f = rules.record(item, 4, "withdrawal must have 4 fields", ())
    uint = rules.uint
    return _WITHDRAWAL(index=uint(f[0]), validator_index=uint(f[1]),
                       address=rules.exact(f[2], 20), amount=uint(f[3]))


def decode_withdrawal(item: Any) -> Withdrawal:
    """A withdrawal from outside, every field checked (see :func:`read_withdrawal`)."""
    return read_withdrawal(item, STRICT)


def withdrawal_item(w: Withdrawal) -> list[Any]:
    """A withdrawal as RLP encodes it: index, validator index, address, amount."""
    return [int_to_bytes(w.index), int_to_bytes(w.validator_index), w.address, int_to_bytes(w.amount)]


# -- Blocks ----------------------------------------------------------------------------------------


def block_item(
    header: Header,
    transactions: Sequence[Transaction],
    uncles: Sequence[Header],
    withdrawals: Sequence[Withdrawal] | None,
) -> list[Any]:
    """A block as the nested list RLP encodes (withdrawals from Shanghai)."""
    return [header_fields(header), *body_item(transactions, uncles, withdrawals)]


def body_item(transactions: Sequence[Transaction], uncles: Sequence[Header],
              withdrawals: Sequence[Withdrawal] | None) -> list[Any]:
    """A block's body as the nested list RLP encodes: transactions, uncles, withdrawals."""
    item: list[Any] = [[transaction_item(tx) for tx in transactions], [header_fields(u) for u in uncles]]
    if withdrawals is not None:
        item.append([withdrawal_item(w) for w in withdrawals])
    return item


def _uncles_and_withdrawals(uncles: Any, withdrawals: Any | None
                            ) -> tuple[tuple[Header, ...], tuple[Withdrawal, ...] | None]:
    """A body's uncles and withdrawals (None before Shanghai), every field checked."""
    return (tuple(header_from_fields(u) for u in _as_list(uncles)),
            tuple(decode_withdrawal(w) for w in _as_list(withdrawals))
            if withdrawals is not None else None)


def decode_block(raw: bytes, items: list[Any], senders: Sequence[Address]) -> Block:
    """A block model from its RLP from outside (``raw``, already decoded by pyrlp into
    ``items``) and the senders execution recovered; every field checked."""
    header = header_from_fields(items[0])
    transactions = [decode_transaction(item) for item in items[1]]
    uncles, withdrawals = _uncles_and_withdrawals(items[2], items[3] if len(items) > 3 else None)
    return assemble_block(header, transactions, senders, uncles, withdrawals, len(raw))


def block_from_parts(header_rlp: bytes, body_rlp: bytes, senders: Sequence[Address],
                     header: Header | None = None) -> Block:
    """A block model from its header RLP, its body RLP (``[txs, uncles, (withdrawals)]``) and
    its senders, as a store holds them (read on trust); ``header``: ``header_rlp`` decoded
    already. Each transaction's hash is keccak of its bytes in the body."""
    if header is None:
        header = header_of_record(header_rlp)
    body = decode_nested(body_rlp)
    if not isinstance(body, list) or len(body) not in (2, 3):
        raise DecodeError("a block body is [transactions, uncles] or with withdrawals")
    items = body[0]
    if not isinstance(items, list):
        raise DecodeError("a block body's transactions must be a list")
    payload_start, payload_end = payload_span(body_rlp)
    if len(senders) != len(items):
        raise DecodeError(f"a body of {len(items)} transactions stored with "
                          f"{len(senders)} senders")
    spans = item_spans(body_rlp, *payload_span(body_rlp, payload_start)) if items else []
    transactions: list[tuple[Transaction, bytes]] = []
    for item, (start, end) in zip(items, spans, strict=True):
        tx = transaction_of_record(item, TRUSTED)
        transactions.append((tx, keccak256(item if isinstance(item, bytes)
                                           else body_rlp[start:end])))
    size = rlp_list_length(len(header_rlp) + payload_end - payload_start)
    uncles, withdrawals = _uncles_and_withdrawals(body[1], body[2] if len(body) > 2 else None)
    return assemble_block(header, transactions, senders, uncles, withdrawals, size)


@dataclass(frozen=True, slots=True)
class BlockOutline:
    """What a block object with transaction hashes is made of: the header, the transaction and
    uncle hashes, the withdrawals and the block's size."""

    header: Header
    transaction_hashes: tuple[Hash32, ...]
    uncle_hashes: tuple[Hash32, ...]
    withdrawals: tuple[Withdrawal, ...] | None
    size: int


def outline_of_block(block: Block) -> BlockOutline:
    """The outline of a block already decoded."""
    return BlockOutline(block.header, tuple(t.hash for t in block.transactions),
                        tuple(u.hash for u in block.uncles), block.withdrawals, block.size)


def outline_from_parts(header_rlp: bytes, body_rlp: bytes, header: Header | None = None
                       ) -> BlockOutline:
    """The outline of a block from its header and body records, as :func:`block_from_parts`
    reads them, without decoding its transactions or uncles (each hashed from its bytes)."""
    if header is None:
        header = header_of_record(header_rlp)
    payload_start, payload_end = payload_span(body_rlp)
    parts = item_spans(body_rlp, payload_start, payload_end)
    if len(parts) not in (2, 3):
        raise DecodeError("a block body is [transactions, uncles] or with withdrawals")
    transactions = _hashes(body_rlp, [
        (start if body_rlp[start] >= 0xC0 else string_start(body_rlp, start), end)
        for start, end in item_spans(body_rlp, *payload_span(body_rlp, parts[0][0]))])
    uncles = _hashes(body_rlp, item_spans(body_rlp, *payload_span(body_rlp, parts[1][0])))
    withdrawals = None
    if len(parts) == 3:
        start, end = parts[2]
        withdrawals = tuple(decode_withdrawal(w)
                            for w in _as_list(decode_nested(body_rlp[start:end])))
    size = rlp_list_length(len(header_rlp) + payload_end - payload_start)
    return BlockOutline(header, transactions, uncles, withdrawals, size)


def _hashes(raw: bytes, spans: Sequence[tuple[int, int]]) -> tuple[Hash32, ...]:
    """The Keccak of each ``raw[start:end]``, hashed in one call."""
    digests = keccak_spans(raw, [start for start, _ in spans], [end for _, end in spans])
    return tuple([digests[at:at + 32] for at in range(0, len(digests), 32)])


def _as_list(item: Nested) -> list[Nested]:
    if not isinstance(item, list):
        raise DecodeError("expected an RLP list")
    return item


def body_rlp(block: Block) -> bytes:
    """The body of a block as Era1 stores it: ``[txs, uncles]`` plus withdrawals if any."""
    transactions = [tx.transaction for tx in block.transactions]
    return encode_nested(body_item(transactions, block.uncles, block.withdrawals))


# -- What receipts read from a stored body ---------------------------------------------------------


def body_facts(body_rlp: bytes, senders: Sequence[Address], base_fee: int | None
               ) -> list[TxFacts]:
    """What each transaction of a stored body (see :func:`block_from_parts`) gives its
    receipt, without models: its hash, sender, ``to``, type, nonce, effective gas price and
    blob count. Types 0 to 2 are read where they lie, checked as :func:`block_from_parts`
    checks them; blob and set-code ones go through their decoders. Of the uncles and
    withdrawals only their extent is checked."""
    if not body_rlp:
        raise DecodeError("an empty block body")
    parts, lists = list_items(body_rlp)
    if parts[-1] != len(body_rlp):
        raise DecodeError("a block body must fill its record")
    if len(parts) not in (3, 4) or lists != len(parts) - 1:
        raise DecodeError("a block body is [transactions, uncles] or with withdrawals, lists")
    spans = list_items(body_rlp, parts[0])[0]
    count = len(spans) - 1
    if len(senders) != count:
        raise DecodeError(f"a body of {count} transactions stored with {len(senders)} senders")
    raw = body_rlp
    number = int.from_bytes
    hasher = keccak.hasher  # eth-hash's backend, without its type check on every call
    facts: list[TxFacts] = []
    for index, sender in enumerate(senders):
        at, stop = spans[index], spans[index + 1]
        first = raw[at]
        if first >= 0xC0:
            f, lists = list_items(raw, at)
            if len(f) != 10 or lists:
                raise DecodeError("a legacy transaction is 9 strings")
            facts.append((hasher(raw[at:stop]), sender, string_at(raw, f[3], f[4]) or None, 0,
                          uint_at(raw, f[0], f[1]), uint_at(raw, f[1], f[2]), None))
            continue
        if first < 0x80:
            raise DecodeError("a typed transaction is an envelope of more than one byte")
        envelope = at + 1 if first < 0xB8 else at + first - 0xB6
        if envelope + 1 >= stop:
            raise DecodeError("empty typed transaction")
        kind = raw[envelope]
        if kind != 2 and kind != 1:
            tx = typed_transaction_from_fields(kind, decode_list_at(raw, envelope + 1, stop),
                                               TRUSTED)
            blobs = len(tx.blob_versioned_hashes) if isinstance(tx, BlobTransaction) else None
            facts.append((hasher(raw[envelope:stop]), sender, tx.to, tx.type, tx.nonce,
                          effective_gas_price(tx, base_fee), blobs))
            continue
        f, lists = list_items(raw, envelope + 1)
        access = 8 if kind == 2 else 7
        if f[-1] != stop:
            raise DecodeError("a typed transaction must fill its envelope")
        if len(f) != access + 5 or lists != 1 or raw[f[access]] < 0xC0:
            raise DecodeError("a typed transaction's fields are strings but its access list")
        if raw[f[access]] != 0xC0:  # entries to check
            access_list(decode_list_at(raw, f[access], f[access + 1]), TRUSTED)
        # The nonce, fees and recipient read in line (a call apiece costs more than the read:
        # about 8% of a dense body's facts): a string item's bytes follow its one-byte
        # prefix, or its length, or are the item itself (below 0x80).
        i = f[1]
        first = raw[i]
        nonce = first if first < 0x80 else number(
            raw[i + 1 if first < 0xB8 else i + first - 0xB6:f[2]], "big")
        i = f[2]
        first = raw[i]
        price = first if first < 0x80 else number(  # the gas price, or the tip
            raw[i + 1 if first < 0xB8 else i + first - 0xB6:f[3]], "big")
        if kind == 2:
            i = f[3]
            first = raw[i]
            max_fee = first if first < 0x80 else number(
                raw[i + 1 if first < 0xB8 else i + first - 0xB6:f[4]], "big")
            price = max_fee if base_fee is None else min(max_fee, base_fee + price)
        i = f[access - 3]
        first = raw[i]
        to = raw[i:i + 1] if first < 0x80 else raw[i + 1 if first < 0xB8 else i + first - 0xB6:
                                                    f[access - 2]]
        facts.append((hasher(raw[envelope:stop]), sender, to or None, kind, nonce, price, None))
    return facts
