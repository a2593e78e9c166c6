"""The receipts table read with numpy, many blocks at a time (:mod:`.rlp_arrays`).

Each row joins a receipt with its transaction, walked as :mod:`.transactions_arrays` and
:mod:`.logs_arrays` walk them. Python work is left per block (its header, a blob gas price),
per transaction (its hash) and per contract creation (the created address). ``ere``'s slim
receipts hold no bloom: it is made from their logs. A batch of another shape is read by the
plain path; ``tests/frames/test_receipts_arrays.py`` holds the two to the same table.
"""

from __future__ import annotations

from typing import Any

from ..forks import BLOB_GAS_PER_BLOB, ChainConfig
from ..keccak import keccak256 as keccak
from ..keccak import keccak_spans
from ..rlpcodec.items import encode_nested
from .block_arrays import Batch
from .columns import binary_ranges, decimal_rows, hex_rows
from .extra import numpy, pyarrow
from .logs_arrays import Logs, walk_logs
from .rlp_arrays import Irregular, children, gather, lists, right_aligned, strings
from .transactions_arrays import effective_price, key_columns, recipients, walk


def receipts_table(batch: Batch, config: ChainConfig) -> Any:
    """The receipts table of ``batch``; None when it holds no transaction."""
    np, pa = numpy(), pyarrow()
    walked = walk(batch)
    if walked is None:
        return None
    blocks, txs, count = walked.blocks, walked.txs, walked.rows
    found = batch.receipts
    data = found.stored.data
    block = txs.items.parent

    # a slim receipt is [type, status, cumulative gas, logs]; a full one [status or root,
    # cumulative gas, bloom, logs]
    outcome = strings(data, found.fields[1 if found.slim else 0], found.end)
    with_root = (outcome.end - outcome.start) == 32
    status = np.where(with_root, 0, ((outcome.end - outcome.start) == 1)
                      & (data[outcome.start] == 1)).astype(np.uint64)
    cumulative_at = strings(data, found.fields[2 if found.slim else 1], found.end)
    cumulative = right_aligned(data, cumulative_at.start, cumulative_at.end, 8).view(
        ">u8").reshape(-1).astype(np.int64)
    first = txs.items.ordinal == 0
    previous = np.where(first, 0, np.concatenate([[0], cumulative[:-1]]))
    used = cumulative - previous
    if (used < 0).any() or (cumulative < 0).any():
        raise Irregular("cumulative gas that falls")
    if found.slim:  # no bloom kept: made from the logs, which are read whole as decoding would
        logs = walk_logs(data, found.fields[3], found.end)
        log_count = np.zeros(count, np.int64) if logs is None else np.bincount(
            logs.items.parent, minlength=count)
        blooms = _blooms(found.stored.data, logs, count)
    else:
        bloom = strings(data, found.fields[2], found.end)
        blooms = binary_ranges(data, bloom.start, bloom.end)
        log_lists = lists(data, found.fields[3], found.end)
        log_count = children(data, log_lists.start, log_lists.end).counts

    _, sent_to = recipients(walked)
    contract = np.zeros((count, 20), np.uint8)
    created = np.flatnonzero(~sent_to)
    if len(created):
        nonce = walked.found["nonce"]
        blob = txs.bodies.blob
        senders = txs.senders
        addresses = b"".join([
            keccak(encode_nested([senders[i].tobytes(),
                                  blob[int(nonce.start[i]):int(nonce.end[i])]]))[12:]
            for i in created.tolist()])
        contract[created] = np.frombuffer(addresses, np.uint8).reshape(len(created), 20)

    blob_field = walked.found["blob_hashes"]
    where = np.flatnonzero(blob_field.present)
    blob_gas = blob_field.items * BLOB_GAS_PER_BLOB
    blob_price = np.zeros((count, 16), np.uint8)
    priced = np.zeros(count, bool)
    for b in np.unique(block[where]).tolist():  # the blocks with blob transactions
        excess = blocks.excess_blob_gas[b]
        if excess is None:
            continue
        price = config.blob_base_fee(int(blocks.numbers[b]), int(blocks.times[b]), excess)
        if price >= 10**38:
            raise Irregular("a blob gas price past decimal128")
        rows = where[block[where] == b]
        blob_price[rows] = np.frombuffer(price.to_bytes(16, "big"), np.uint8)
        priced[rows] = True

    columns: dict[str, Any] = {
        **key_columns(walked),
        "status": pa.array(status, pa.uint64(), mask=with_root),
        "root": hex_rows(gather(data, np.where(with_root, outcome.start, 0), 32), with_root),
        "gas_used": pa.array(used.astype(np.uint64), pa.uint64()),
        "cumulative_gas_used": pa.array(cumulative.astype(np.uint64), pa.uint64()),
        "effective_gas_price": effective_price(walked),
        "contract_address": hex_rows(contract, ~sent_to),
        "log_count": pa.array(log_count.astype(np.uint64), pa.uint64()),
        "blob_gas_used": pa.array(blob_gas, pa.uint64(), mask=~blob_field.present),
        "blob_gas_price": decimal_rows(blob_price, priced),
        "logs_bloom": blooms,
    }
    return pa.table(columns)


def _blooms(data: Any, logs: Logs | None, count: int) -> Any:
    """Each receipt's 256-byte log bloom made from its logs (as :mod:`ethread.bloom` does), as a
    binary column; each distinct address and topic of the batch is hashed once."""
    np, pa = numpy(), pyarrow()
    bloom = np.zeros((count, 256), np.uint8)
    if logs is not None:
        receipt = np.concatenate([logs.items.parent, logs.items.parent[logs.topics.parent]])
        bits = np.concatenate([_bloom_bits(data, logs.address.start, 20),
                               _bloom_bits(data, logs.topic.start, 32)])
        for k in range(3):
            bit = bits[:, k]
            np.bitwise_or.at(bloom, (receipt, 255 - bit // 8), (1 << (bit % 8)).astype(np.uint8))
    offsets = np.arange(0, 256 * (count + 1), 256, dtype=np.int32)
    return pa.Array.from_buffers(pa.binary(), count, [
        None, pa.py_buffer(offsets), pa.py_buffer(bloom)])


def _bloom_bits(data: Any, start: Any, width: int) -> Any:
    """The three bloom bits (0..2047) of each ``width``-byte value at ``start``, as a (count, 3) array."""
    np = numpy()
    values = gather(data, start, width).view(f"V{width}").reshape(-1)  # (a fresh, whole copy)
    distinct, which = np.unique(values, return_inverse=True)
    size = width * len(distinct)
    digests = np.frombuffer(keccak_spans(distinct.tobytes(), range(0, size, width),
                                         range(width, size + 1, width)),
                            np.uint8).reshape(len(distinct), 32)
    pairs = digests[:, :6].astype(np.int64)
    bits = (pairs[:, 0::2] << 8 | pairs[:, 1::2]) & 2047
    return bits[which.reshape(-1)]
