"""The logs table read with numpy, many blocks at a time (:mod:`.rlp_arrays`).

The receipts of a batch are walked level by level over one joined array and the columns
gathered by position; Python work is left per block (number, time, hash) and per transaction
that logged (its hash). A batch of another shape (an address not of 20 bytes, a topic not of
32, more than four topics, anything :func:`~ethread.rlpcodec.items.decode_nested` refuses) is
read by the plain path of :mod:`.bulk`; ``tests/frames/test_logs_arrays.py`` holds the two to
the same table.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..keccak import keccak_spans
from .block_arrays import Batch
from .columns import binary_ranges, hex_rows
from .extra import numpy, pyarrow
from .rlp_arrays import (
    Children,
    Heads,
    Irregular,
    children,
    fields,
    gather,
    heads,
    lists,
    strings,
)


class Logs(NamedTuple):
    """The logs of some receipts, walked."""

    items: Children
    """Each log: where it starts and its receipt (``parent``)."""
    address: Heads
    topics: Children
    """Each topic: where it starts, its log (``parent``) and its place (``ordinal``)."""
    topic: Heads
    data: Heads


def walk_logs(data: Any, lists_at: Any, end: Any) -> Logs | None:
    """The logs of the lists starting at ``lists_at`` (each inside a receipt ending at
    ``end``); None when there is none."""
    log_lists = lists(data, lists_at, end)
    logs = children(data, log_lists.start, log_lists.end)
    if not len(logs.position):
        return None
    log = lists(data, logs.position, log_lists.end[logs.parent])
    address_at, topics_at, data_at = fields(data, log.start, log.end, 3)
    address = strings(data, address_at, log.end, 20)
    topic_lists = lists(data, topics_at, log.end)
    topics = children(data, topic_lists.start, topic_lists.end)
    if (topics.counts > 4).any():
        raise Irregular("a log of more than four topics")
    topic = strings(data, topics.position, topic_lists.end[topics.parent], 32)
    return Logs(logs, address, topics, topic, strings(data, data_at, log.end))


def logs_table(batch: Batch) -> Any:
    """The logs table of ``batch``; None when it holds no log."""
    np = numpy()
    blocks, txs, found = batch.blocks, batch.transactions, batch.receipts
    data, end = found.stored.data, found.end
    walked = walk_logs(data, found.fields[3], end)
    if walked is None:  # nothing to walk: the plain path's empty table, read at once
        return None
    logs, address, topics, topic, payload = walked
    count = len(logs.position)

    # the rows: which block and transaction each log is of
    receipt = logs.parent
    block = found.items.parent[receipt]
    per_block = np.bincount(block, minlength=len(batch.raws))
    first_log = np.zeros(len(batch.raws), np.int64)
    np.cumsum(per_block[:-1], out=first_log[1:])
    log_index = np.arange(count, dtype=np.int64) - first_log[block]
    logged, rank = np.unique(receipt, return_inverse=True)
    every = batch.made("walked")
    if every is not None:  # the transactions or receipts walk hashed every transaction
        tx_hashes = every.hashes[logged].tobytes()
    else:  # only the transactions that logged are hashed
        at = txs.items.position[logged]
        tx = heads(txs.bodies.data, at, txs.lists.end[txs.items.parent[logged]])
        tx_hashes = keccak_spans(txs.bodies.blob, np.where(tx.is_list, at, tx.start).tolist(),
                                 tx.end.tolist())

    pa = pyarrow()
    columns: dict[str, Any] = {
        "block_number": pa.array(blocks.numbers[block], pa.uint64()),
        "block_hash": hex_rows(blocks.hashes[block]),
        "timestamp": pa.array(blocks.times[block], pa.timestamp("s", tz="UTC")),
        "transaction_index": pa.array(found.items.ordinal[receipt].astype(np.uint64),
                                      pa.uint64()),
        "transaction_hash": hex_rows(
            np.frombuffer(tx_hashes, np.uint8).reshape(len(logged), 32)[rank.reshape(-1)]),
        "log_index": pa.array(log_index.astype(np.uint64), pa.uint64()),
        "address": hex_rows(gather(data, address.start, 20)),
    }
    for k in range(4):
        chosen = topics.ordinal == k
        owner = topics.parent[chosen]
        where = np.zeros(count, np.int64)
        where[owner] = topic.start[chosen]
        present = np.zeros(count, bool)
        present[owner] = True
        columns[f"topic{k}"] = hex_rows(gather(data, where, 32), present)
    columns["data"] = binary_ranges(data, payload.start, payload.end)
    return pa.table(columns)
