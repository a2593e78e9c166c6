"""The logs table read with numpy, many blocks at a time (:mod:`.rlp_arrays`).

Every log of every block has one shape, so the receipts of a batch of blocks are walked level
by level over one joined array: receipts, their fields, their logs, each log's address, topics
and data. The rows are never Python objects: the columns are gathered from the joined bytes by
position. Python work is left per block (its header's number and time, its hash) and per
transaction that logged something (its hash: Keccak over its bytes, which archives do not
store).

A batch whose bytes are not the shape walked (an address that is not 20 bytes, a topic that
is not 32, more than four topics, anything :func:`~ethread.rlpcodec.items.decode_nested`
refuses) is read by the plain path of :mod:`.bulk` instead, which says what is wrong or reads
the odd shape; so the table is always the plain path's, which ``tests/frames/
test_logs_arrays.py`` holds it to.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..backends.history import RawBlock
from ..keccak import keccak256 as keccak
from ..keccak import keccak_spans
from ..rlpcodec.items import decode_nested
from .columns import hex_rows, numpy_module
from .extra import pyarrow
from .rlp_arrays import Irregular, Joined, children, fields, heads, joined

BATCH_BYTES = 32 << 20
"""Receipt bytes read per batch: large enough that the per-step cost of the walk vanishes, small
enough that a batch's arrays stay a small part of memory."""
BATCH_BLOCKS = 8192
"""Blocks per batch at most (nearly empty blocks: the per-block arrays stay small)."""


def batches(records: Iterable[RawBlock]) -> Iterator[list[RawBlock]]:
    """``records`` in batches of about :data:`BATCH_BYTES` of receipts (at most
    :data:`BATCH_BLOCKS` blocks)."""
    batch: list[RawBlock] = []
    size = 0
    for raw in records:
        batch.append(raw)
        size += len(raw.receipts_rlp or b"")
        if size >= BATCH_BYTES or len(batch) >= BATCH_BLOCKS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def batch_logs(batch: list[RawBlock], plain: Callable[[list[RawBlock]], Any]) -> Any:
    """The logs table of ``batch``; ``plain`` reads a batch the plain way, for a batch of
    another shape (or without a log)."""
    try:
        table = _batch_table(batch)
    except Irregular:
        table = None
    return plain(batch) if table is None else table


def _batch_table(batch: list[RawBlock]) -> Any:
    """The logs table of ``batch``; None when it holds no log."""
    np = numpy_module()
    numbers, times, hashes, receipts_records, senders_lengths = [], [], [], [], []
    slim = batch[0].slim
    for raw in batch:
        if raw.receipts_rlp is None or raw.slim != slim:
            raise Irregular("a block without receipts, or receipts of two encodings")
        try:
            header = decode_nested(raw.header_rlp)
        except ValueError:
            raise Irregular("a header that does not decode") from None
        if not isinstance(header, list) or len(header) < 12:
            raise Irregular("a header of another shape")
        numbers.append(int.from_bytes(header[8], "big"))  # type: ignore[arg-type]
        times.append(int.from_bytes(header[11], "big"))  # type: ignore[arg-type]
        hashes.append(keccak(raw.header_rlp))
        receipts_records.append(raw.receipts_rlp)
        senders_lengths.append(len(raw.senders))
    blocks = len(batch)

    # the transactions: where each one's bytes are (hashed below when it has logs)
    bodies = joined([raw.body_rlp for raw in batch])
    body = _records(bodies)
    parts = children(bodies.data, body.start, body.end)
    if ((parts.counts != 2) & (parts.counts != 3)).any():
        raise Irregular("a body that is not [transactions, uncles] or with withdrawals")
    first_part = np.zeros(blocks, np.int64)
    np.cumsum(parts.counts[:-1], out=first_part[1:])
    tx_lists = _lists(bodies.data, parts.position[first_part], body.end)
    txs = children(bodies.data, tx_lists.start, tx_lists.end)
    if not np.array_equal(np.asarray(senders_lengths), 20 * txs.counts):
        raise Irregular("transactions stored without their senders")

    # the receipts and their logs
    stored = joined(receipts_records)
    data = stored.data
    top = _records(stored)
    receipts = children(data, top.start, top.end)
    if not np.array_equal(receipts.counts, txs.counts):
        raise Irregular("as many receipts as transactions")
    record_end = stored.offsets[1:][receipts.parent]
    item = heads(data, receipts.position, record_end)
    start, end = item.start, item.end
    if slim:
        if not item.is_list.all():
            raise Irregular("a slim receipt that is not a list")
    else:  # a typed receipt is a string: its type byte, then its list
        typed = ~item.is_list
        if typed.any():
            inner_at = start[typed] + 1
            if (inner_at >= end[typed]).any():
                raise Irregular("a typed receipt without its list")
            inner = heads(data, inner_at, end[typed])
            if not inner.is_list.all() or not np.array_equal(inner.end, end[typed]):
                raise Irregular("a typed receipt that is not one list")
            start = start.copy()
            start[typed] = inner.start
    logs_at = fields(data, start, end, 4)[3]
    log_lists = _lists(data, logs_at, end)
    logs = children(data, log_lists.start, log_lists.end)
    count = len(logs.position)
    if count == 0:  # nothing to walk: the plain path's empty table, read at once
        return None
    log = _lists(data, logs.position, log_lists.end[logs.parent])
    address_at, topics_at, data_at = fields(data, log.start, log.end, 3)
    address = _strings(data, address_at, log.end, 20)
    topic_lists = _lists(data, topics_at, log.end)
    topics = children(data, topic_lists.start, topic_lists.end)
    if (topics.counts > 4).any():
        raise Irregular("a log of more than four topics")
    topic_end = topic_lists.end[topics.parent]
    topic = _strings(data, topics.position, topic_end, 32)
    payload = heads(data, data_at, log.end)
    if payload.is_list.any():
        raise Irregular("log data that is a list")

    # the rows: which block and transaction each log is of
    receipt = logs.parent
    block = receipts.parent[receipt]
    per_block = np.bincount(block, minlength=blocks)
    first_log = np.zeros(blocks, np.int64)
    np.cumsum(per_block[:-1], out=first_log[1:])
    log_index = np.arange(count, dtype=np.int64) - first_log[block]
    logged, rank = np.unique(receipt, return_inverse=True)
    tx = heads(bodies.data, txs.position[logged], tx_lists.end[txs.parent[logged]])
    tx_hashes = keccak_spans(bodies.blob, np.where(tx.is_list, txs.position[logged],
                                                   tx.start).tolist(), tx.end.tolist())

    pa = pyarrow()
    block_hashes = np.frombuffer(b"".join(hashes), np.uint8).reshape(blocks, 32)
    columns: dict[str, Any] = {
        "block_number": pa.array(np.asarray(numbers, np.uint64)[block], pa.uint64()),
        "block_hash": hex_rows(block_hashes[block]),
        "timestamp": pa.array(np.asarray(times, np.int64)[block], pa.timestamp("s", tz="UTC")),
        "transaction_index": pa.array(receipts.ordinal[receipt].astype(np.uint64), pa.uint64()),
        "transaction_hash": hex_rows(
            np.frombuffer(tx_hashes, np.uint8).reshape(len(logged), 32)[rank.reshape(-1)]),
        "log_index": pa.array(log_index.astype(np.uint64), pa.uint64()),
        "address": hex_rows(_gather(data, address, 20)),
    }
    for k in range(4):
        chosen = topics.ordinal == k
        owner = topics.parent[chosen]
        at = np.zeros(count, np.int64)
        at[owner] = topic[chosen]
        present = np.zeros(count, bool)
        present[owner] = True
        columns[f"topic{k}"] = hex_rows(_gather(data, at, 32), present)
    columns["data"] = _binary(data, payload.start, payload.end)
    return pa.table(columns)


def _records(records: Joined) -> Any:
    """The heads of joined records that must each be one whole list."""
    start, end = records.offsets[:-1], records.offsets[1:]
    if (start >= end).any():
        raise Irregular("an empty record")
    found = _lists(records.data, start, end)
    if not (found.end == end).all():
        raise Irregular("trailing bytes after an RLP record")
    return found


def _lists(data: Any, position: Any, limit: Any) -> Any:
    """The heads of items that must be lists."""
    found = heads(data, position, limit)
    if not found.is_list.all():
        raise Irregular("expected RLP lists")
    return found


def _strings(data: Any, position: Any, limit: Any, width: int) -> Any:
    """Where the payloads of strings of ``width`` bytes each start."""
    found = heads(data, position, limit)
    if found.is_list.any() or ((found.end - found.start) != width).any():
        raise Irregular(f"expected {width}-byte strings")
    return found.start


def _gather(data: Any, start: Any, width: int) -> Any:
    """The ``width`` bytes at each of ``start`` as a (count, width) array."""
    np = numpy_module()
    return np.lib.stride_tricks.sliding_window_view(data, width)[start]


def _binary(data: Any, start: Any, end: Any) -> Any:
    """An Arrow binary column of ``data[start[i]:end[i]]``."""
    np, pa = numpy_module(), pyarrow()
    lengths = end - start
    offsets = np.zeros(len(start) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    if total >= 1 << 31:
        raise Irregular("more log data than one binary column holds")
    where = np.repeat(start - offsets[:-1], lengths) + np.arange(total, dtype=np.int64)
    return pa.Array.from_buffers(pa.binary(), len(start), [
        None, pa.py_buffer(offsets.astype(np.int32).tobytes()),
        pa.py_buffer(data[where].tobytes())])
