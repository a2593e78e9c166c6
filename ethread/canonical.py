"""Models rebuilt from the canonical RLP forms that persistent backends store.

The LevelDB store and Era1 archives both keep a block as its header RLP and body RLP, and its
receipts in their consensus encoding (status or root, cumulative gas, bloom, logs). What the
RPC answer adds (senders, per-transaction gas, contract addresses, block-wide log indexes,
effective gas prices) is derived here, in one place, so both backends answer identically and
neither stores a second copy of what the canonical bytes already say.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, cast

import rlp
from eth_hash.auto import keccak
from eth_keys.datatypes import Signature
from eth_keys.exceptions import BadSignature
from rlp.codec import length_prefix

from .assemble import (
    ReceiptRow,
    TxFacts,
    assemble_block,
    effective_gas_price,
    receipts_of_facts,
    receipts_of_rows,
)
from .encoding import (
    DecodeError,
    encode_receipt,
    header_fields,
    signing_hash_of_item,
    transaction_item,
    typed_transaction_from_fields,
)
from .fastrlp import (
    Nested,
    decode_list,
    decode_list_at,
    decode_nested,
    encode_nested,
    item_spans,
    list_items,
    payload_span,
    string_at,
    uint_at,
)
from .forks import ChainConfig
from .models import (
    AccessListEntry,
    AccessListTransaction,
    Address,
    BlobTransaction,
    Block,
    DynamicFeeTransaction,
    Hash32,
    Header,
    LegacyTransaction,
    Receipt,
    Transaction,
    trusted_maker,
)

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


_HEADER = trusted_maker(Header)
_HEADER_FIELDS = range(15, 22)
"""Fields a header has, by fork: 15 before London, up to 21 from Prague."""


def header_of_record(header_rlp: bytes, block_hash: Hash32 | None = None) -> Header:
    """The header a store holds in RLP, decoded by :mod:`ethread.fastrlp` since ethread wrote
    the record itself. Its hash is ``block_hash`` when the store found the record under it
    (the key it was written under, as keccak of these bytes, at import), else keccak of the
    bytes. Every field must be a string; the store is trusted for the rest (``ethread verify``
    checks every header against its hash)."""
    items = decode_list(header_rlp)
    count = len(items)
    if count not in _HEADER_FIELDS:
        raise DecodeError(f"a header has 15 to 21 fields, got {count}")
    if list in map(type, items):
        raise DecodeError("a header's fields are strings")
    f = cast("list[bytes]", items)
    number = int.from_bytes
    return _HEADER(
        f[0], f[1], f[2], f[3], f[4], f[5], f[6], number(f[7], "big"), number(f[8], "big"),
        number(f[9], "big"), number(f[10], "big"), number(f[11], "big"), f[12], f[13], f[14],
        number(f[15], "big") if count > 15 else None,
        f[16] if count > 16 else None,
        number(f[17], "big") if count > 17 else None,
        number(f[18], "big") if count > 18 else None,
        f[19] if count > 19 else None,
        f[20] if count > 20 else None,
        block_hash if block_hash is not None else keccak(header_rlp),
    )


def block_from_parts(header_rlp: bytes, body_rlp: bytes, senders: Sequence[Address],
                     header: Header | None = None) -> Block:
    """A block model from its header RLP, its body RLP (``[txs, uncles, (withdrawals)]``) and
    the senders recovered for its transactions, as a store holds them (decoded by
    :mod:`ethread.fastrlp`); ``header``, when the caller has decoded ``header_rlp`` already.

    Each transaction's hash is keccak of its bytes in the body (a legacy transaction's own
    RLP, a typed one's envelope): nothing is encoded again. Legacy, access-list and
    dynamic-fee transactions (all but a few of any chain's) are made with
    :func:`~ethread.models.trusted_maker`; blob and set-code ones go through the checked
    decoder."""
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
        if isinstance(item, list):
            transactions.append((_legacy(item), keccak(body_rlp[start:end])))
        elif item:
            transactions.append((_typed(item), keccak(item)))
        else:
            raise DecodeError("empty typed transaction")
    size = rlp_list_length(len(header_rlp) + payload_end - payload_start)
    return assemble_block(header, transactions, senders, _as_list(body[1]),
                          _as_list(body[2]) if len(body) > 2 else None, size)


_LEGACY = trusted_maker(LegacyTransaction)
_ACCESS_LIST_TX = trusted_maker(AccessListTransaction)
_DYNAMIC_FEE = trusted_maker(DynamicFeeTransaction)
_ENTRY = trusted_maker(AccessListEntry)


def _strings(fields: list[Nested], count: int, skip: int | None = None) -> list[bytes]:
    """``fields`` when it holds ``count`` strings (but at ``skip``, the access list)."""
    if len(fields) != count:
        raise DecodeError(f"a transaction of {count} fields has {len(fields)}")
    if skip is None:
        if list in map(type, fields):
            raise DecodeError("a transaction field must be a string")
    elif list in map(type, fields[:skip]) or list in map(type, fields[skip + 1:]):
        raise DecodeError("a transaction field must be a string")
    return fields  # type: ignore[return-value]  # checked above


def _legacy(item: list[Nested]) -> LegacyTransaction:
    f = _strings(item, 9)
    number = int.from_bytes
    return _LEGACY(number(f[0], "big"), number(f[1], "big"), number(f[2], "big"), f[3] or None,
                   number(f[4], "big"), f[5], number(f[6], "big"), number(f[7], "big"),
                   number(f[8], "big"))


def _typed(envelope: bytes) -> Transaction:
    kind = envelope[0]
    fields = decode_list(envelope[1:])
    number = int.from_bytes
    if kind == 2:
        f = _strings(fields, 12, skip=8)
        return _DYNAMIC_FEE(number(f[0], "big"), number(f[1], "big"), number(f[2], "big"),
                            number(f[3], "big"), number(f[4], "big"), f[5] or None,
                            number(f[6], "big"), f[7], _access_list(f[8]), number(f[9], "big"),
                            number(f[10], "big"), number(f[11], "big"))
    if kind == 1:
        f = _strings(fields, 11, skip=7)
        return _ACCESS_LIST_TX(number(f[0], "big"), number(f[1], "big"), number(f[2], "big"),
                               number(f[3], "big"), f[4] or None, number(f[5], "big"), f[6],
                               _access_list(f[7]), number(f[8], "big"), number(f[9], "big"),
                               number(f[10], "big"))
    return typed_transaction_from_fields(kind, fields)


def _access_list(raw: Nested) -> tuple[AccessListEntry, ...]:
    if type(raw) is not list:
        raise DecodeError("an access list must be a list")
    if not raw:
        return ()
    entries = []
    for entry in raw:
        if type(entry) is not list or len(entry) != 2 or type(entry[1]) is not list:
            raise DecodeError("an access list entry is [address, keys]")
        entries.append(_ENTRY(entry[0], tuple(entry[1])))
    return tuple(entries)  # type: ignore[arg-type]  # strings, as the store wrote them


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
    return encode_nested(item)


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


def decode_consensus_receipts(data: bytes) -> list[ConsensusReceipt]:
    """Decode ``rlp([receipt, ...])`` where each receipt is a list (legacy) or a typed
    envelope string, with pyrlp's strict decoder (the bytes come from outside: a store's own
    records are read by :func:`receipts_from_consensus`)."""
    decode = _strict_decode
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
    (decoded by :mod:`ethread.fastrlp`; topics and bloom kept as the bytes they are)."""
    items = decode_list(data)
    if len(items) != len(block.transactions):
        raise DecodeError(
            f"block {block.number} has {len(block.transactions)} transactions but "
            f"{len(items)} receipts"
        )
    return receipts_of_rows(block, map(_receipt_row, items), config if config is not None else _NO_SCHEDULE)


_NO_SCHEDULE = ChainConfig(chain_id=0, block_forks=((0, "frontier"),))
"""The schedule receipts are made with when a store has none. Only the blob base fee needs
the fork schedule, and only blocks with blob gas (Cancun on) have one. Without a schedule
those would get Prague's update fraction; the backends that come here without one (Era1
archives) hold pre-merge history."""


def header_facts(header_rlp: bytes) -> tuple[int, int, int | None, int | None]:
    """(number, timestamp, base fee, excess blob gas) of a header record: what the receipts of
    its block take from it, found without decoding the other fields. The record is checked
    as :func:`header_of_record` checks it: one list filling the record, of 15 to 21 strings."""
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
    # Each number read in line (a call apiece costs more than the read): a string item's
    # bytes follow its one-byte prefix, or its length, or are the item itself (below 0x80).
    raw = header_rlp
    number = int.from_bytes
    i = at[8]
    first = raw[i]
    block_number = first if first < 0x80 else number(
        raw[i + 1 if first < 0xB8 else i + first - 0xB6:at[9]], "big")
    i = at[11]
    first = raw[i]
    timestamp = first if first < 0x80 else number(
        raw[i + 1 if first < 0xB8 else i + first - 0xB6:at[12]], "big")
    base_fee = excess_blob_gas = None
    if count > 15:
        i = at[15]
        first = raw[i]
        base_fee = first if first < 0x80 else number(
            raw[i + 1 if first < 0xB8 else i + first - 0xB6:at[16]], "big")
        if count > 18:
            i = at[18]
            first = raw[i]
            excess_blob_gas = first if first < 0x80 else number(
                raw[i + 1 if first < 0xB8 else i + first - 0xB6:at[19]], "big")
    return block_number, timestamp, base_fee, excess_blob_gas


def body_facts(body_rlp: bytes, senders: Sequence[Address], base_fee: int | None
               ) -> list[TxFacts]:
    """What each transaction of a stored body (see :func:`block_from_parts`) gives its
    receipt, without the block and transaction models: its hash (keccak of its bytes in the
    body), sender, ``to``, type, nonce, effective gas price and blob count.

    Legacy, access-list and dynamic-fee transactions are read field by field where they lie
    in the record, each checked as :func:`block_from_parts` checks it (its count of fields,
    strings but for the access list, whose entries are checked when it has any); blob and
    set-code ones go through the checked decoder. Of the uncles and withdrawals only their
    extent is checked: receipts do not read them."""
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
            tx = typed_transaction_from_fields(kind, decode_list_at(raw, envelope + 1, stop))
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
            _access_list_shape(decode_list_at(raw, f[access], f[access + 1]))
        # The nonce, fees and recipient read in line, as header_facts reads its numbers.
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


def _access_list_shape(raw: Nested) -> None:
    """``raw`` is an access list as :func:`_access_list` would take it, without the models."""
    if type(raw) is not list:
        raise DecodeError("an access list must be a list")
    for entry in raw:
        if type(entry) is not list or len(entry) != 2 or type(entry[1]) is not list:
            raise DecodeError("an access list entry is [address, keys]")


def receipts_of_records(block_hash: Hash32, header: tuple[int, int, int | None, int | None],
                        facts: Sequence[TxFacts], data: bytes, config: ChainConfig | None
                        ) -> tuple[Receipt, ...]:
    """The receipts of the block ``block_hash`` from :func:`header_facts` of its header,
    :func:`body_facts` of its body and its consensus receipts RLP as a store holds it: the
    same models :func:`receipts_from_consensus` makes from the decoded block."""
    number, timestamp, _, excess_blob_gas = header
    if not data:
        raise DecodeError("an empty receipts record")
    spans = list_items(data)[0]
    if spans[-1] != len(data):
        raise DecodeError("receipts must fill their record")
    if len(spans) - 1 != len(facts):
        raise DecodeError(
            f"block {number} has {len(facts)} transactions but {len(spans) - 1} receipts")
    rows = []
    for index in range(len(facts)):
        at, stop = spans[index], spans[index + 1]
        first = data[at]
        if first < 0xC0:  # a typed envelope: its type byte, then the receipt's list
            if first < 0x80:
                raise DecodeError("a typed receipt is an envelope of more than one byte")
            at = (at + 2 if first < 0xB8 else at + first - 0xB5)
            if at >= stop:
                raise DecodeError("empty typed receipt")
        rows.append(_receipt_row(decode_list_at(data, at, stop)))
    return receipts_of_facts(block_hash, number, timestamp, excess_blob_gas, facts, rows,
                             config if config is not None else _NO_SCHEDULE)


def _receipt_row(item: Nested) -> ReceiptRow:
    """A stored receipt (a list, or a typed envelope holding one) as its consensus fields."""
    if type(item) is bytes:
        if not item:
            raise DecodeError("empty typed receipt")
        item = decode_nested(item[1:])
    if type(item) is not list or len(item) != 4:
        raise DecodeError("a receipt has 4 fields")
    state_root, cumulative, bloom, logs = item
    if type(state_root) is not bytes or type(cumulative) is not bytes or type(bloom) is not bytes \
            or len(bloom) != 256 or type(logs) is not list:
        raise DecodeError("a receipt is [status or root, gas, bloom, logs]")
    return state_root, int.from_bytes(cumulative, "big"), bloom, map(_log_row, logs)


def _log_row(item: Nested) -> tuple[bytes, tuple[Hash32, ...], bytes]:
    if type(item) is not list or len(item) != 3:
        raise DecodeError("a log is [address, topics, data]")
    address, topics, data = item
    if type(address) is not bytes or type(topics) is not list or type(data) is not bytes:
        raise DecodeError("a log is [address, topics, data]")
    for topic in topics:
        if type(topic) is not bytes or len(topic) != 32:
            raise DecodeError("a log topic is 32 bytes")
    return address, tuple(topics), data  # type: ignore[arg-type]  # checked above


def encode_receipts(receipts: Sequence[Receipt]) -> bytes:
    """``rlp([receipt, ...])`` in consensus form: the bytes the receipts trie and Era1 hold."""
    encoded = []
    for receipt in receipts:
        first: int | bytes = receipt.root if receipt.root is not None else (receipt.status or 0)
        one = encode_receipt(
            receipt.type, first, receipt.cumulative_gas_used, receipt.logs_bloom, receipt.logs
        )
        encoded.append(one if receipt.type == 0 else encode_nested(one))
    return encode_list_of_encoded(encoded)
