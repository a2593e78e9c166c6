"""A batch of blocks read for the array walks of :mod:`ethread.frames` (:mod:`.rlp_arrays`): the
header fields every row repeats (number, time, hash, base fee), and where each transaction's
bytes are in the batch's joined bodies.

The headers are decoded one by one (a handful of fields per block, whatever the number of its
rows); the bodies are walked as arrays.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..backends.history import RawBlock
from ..keccak import keccak256 as keccak
from ..rlpcodec.items import decode_nested
from .columns import numpy_module
from .rlp_arrays import (
    Children,
    Heads,
    Irregular,
    Joined,
    check_nested,
    children,
    joined,
    lists,
    records,
)


class Blocks(NamedTuple):
    """What the rows of a batch of blocks repeat from their headers."""

    numbers: Any
    """uint64, one a block."""
    times: Any
    """int64 Unix seconds, one a block."""
    hashes: Any
    """A (blocks, 32) uint8 array."""
    base_fees: Any
    """uint64, zero before London (as the plain path takes it)."""


class Transactions(NamedTuple):
    """Where each transaction of a batch of blocks is."""

    bodies: Joined
    lists: Heads
    """Each block's list of transactions."""
    items: Children
    """Each transaction: where it starts, its block (``parent``) and its index (``ordinal``)."""
    senders: Any
    """A (transactions, 20) uint8 array of their senders, as the store keeps them."""


def block_heads(batch: list[RawBlock]) -> Blocks:
    np = numpy_module()
    numbers, times, hashes, base_fees = [], [], [], []
    for raw in batch:
        try:
            header = decode_nested(raw.header_rlp)
        except ValueError:
            raise Irregular("a header that does not decode") from None
        if not isinstance(header, list) or len(header) < 15:
            raise Irregular("a header of another shape")
        fields: list[bytes] = header  # type: ignore[assignment]
        if not all(type(field) is bytes for field in fields):
            raise Irregular("a header with a list among its fields")
        base_fee = fields[15] if len(fields) > 15 else b""
        if len(fields[8]) > 8 or len(fields[11]) > 7 or len(base_fee) > 7:
            raise Irregular("a header number past 64 bits")
        numbers.append(int.from_bytes(fields[8], "big"))
        times.append(int.from_bytes(fields[11], "big"))
        base_fees.append(int.from_bytes(base_fee, "big"))
        hashes.append(keccak(raw.header_rlp))
    return Blocks(np.asarray(numbers, np.uint64), np.asarray(times, np.int64),
                  np.frombuffer(b"".join(hashes), np.uint8).reshape(len(batch), 32),
                  np.asarray(base_fees, np.uint64))


def transactions(batch: list[RawBlock], whole: bool = False) -> Transactions:
    """Where each transaction of ``batch`` is; ``whole``: the rest of each body (uncles,
    withdrawals) walked too, as strictly as decoding it would."""
    np = numpy_module()
    bodies = joined([raw.body_rlp for raw in batch])
    body = records(bodies)
    parts = children(bodies.data, body.start, body.end)
    if ((parts.counts != 2) & (parts.counts != 3)).any():
        raise Irregular("a body that is not [transactions, uncles] or with withdrawals")
    first_part = np.zeros(len(batch), np.int64)
    np.cumsum(parts.counts[:-1], out=first_part[1:])
    tx_lists = lists(bodies.data, parts.position[first_part], body.end)
    items = children(bodies.data, tx_lists.start, tx_lists.end)
    if whole:
        rest = np.flatnonzero(parts.ordinal > 0)
        other = lists(bodies.data, parts.position[rest], body.end[parts.parent[rest]])
        check_nested(bodies.data, other.start, other.end)
    senders = b"".join([raw.senders for raw in batch])
    if (len(senders) != 20 * len(items.position)
            or not np.array_equal(np.fromiter((len(raw.senders) for raw in batch), np.int64,
                                              len(batch)), 20 * items.counts)):
        raise Irregular("transactions stored without their senders")
    return Transactions(bodies, tx_lists, items,
                        np.frombuffer(senders, np.uint8).reshape(len(items.position), 20))
