"""Receipts: their consensus encoding (what the receipts trie and Era1 files hold), read
back from outside or from a store's own records into full receipt models."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import rlp

from ..forks import NO_SCHEDULE, ChainConfig
from ..models import Block, Hash32, Log, Receipt
from .assemble import ReceiptRow, TxFacts, receipts_of_facts, receipts_of_rows
from .items import (
    DecodeError,
    Nested,
    decode_list,
    decode_list_at,
    decode_nested,
    encode_list_of_encoded,
    encode_nested,
    int_to_bytes,
    list_items,
)


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
    payload = encode_nested([first, int_to_bytes(cumulative_gas_used), logs_bloom,
                             [log_item(log) for log in logs]])
    return payload if tx_type == 0 else bytes([tx_type]) + payload


class ConsensusLog(NamedTuple):
    """A log as the receipt's consensus encoding holds it (py-evm's shape: integer topics)."""

    address: bytes
    topics: tuple[int, ...]
    data: bytes


class ConsensusReceipt(NamedTuple):
    """A receipt's consensus fields, shaped as :func:`~ethread.rlpcodec.assemble.build_receipts` reads."""

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
    """Decode ``rlp([receipt, ...])`` from outside with pyrlp's strict decoder."""
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
    (decoded by :mod:`ethread.rlpcodec.items`; topics and bloom kept as the bytes they are)."""
    items = decode_list(data)
    if len(items) != len(block.transactions):
        raise DecodeError(
            f"block {block.number} has {len(block.transactions)} transactions but "
            f"{len(items)} receipts"
        )
    return receipts_of_rows(block, map(_receipt_row, items), config if config is not None else NO_SCHEDULE)




def receipts_of_records(block_hash: Hash32, header: tuple[int, int, int | None, int | None],
                        facts: Sequence[TxFacts], data: bytes, config: ChainConfig | None
                        ) -> tuple[Receipt, ...]:
    """The receipts of the block ``block_hash`` from its header's and body's facts and its
    stored consensus receipts RLP: the models :func:`receipts_from_consensus` makes."""
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
                             config if config is not None else NO_SCHEDULE)


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
