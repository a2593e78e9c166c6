"""A batch of blocks read for the array walks (:mod:`.rlp_arrays`): the header fields every row
repeats (number, time, hash, base fee), decoded block by block, and where each transaction's
bytes are in the batch's joined bodies.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple, TypeVar, cast

from ..backends.history import RawBlock
from ..keccak import keccak256 as keccak
from ..rlpcodec.items import decode_nested
from .extra import numpy
from .rlp_arrays import (
    Children,
    Heads,
    Irregular,
    Joined,
    check_nested,
    children,
    fields,
    heads,
    joined,
    lists,
    records,
)

T = TypeVar("T")


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
    excess_blob_gas: list[int | None]
    """From Cancun on, each block's excess blob gas (None before)."""


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
    """What the rows of ``batch`` repeat from its headers, each header decoded once."""
    np = numpy()
    numbers, times, hashes, base_fees = [], [], [], []
    excess: list[int | None] = []
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
        excess.append(int.from_bytes(fields[18], "big") if len(fields) > 18 else None)
        hashes.append(keccak(raw.header_rlp))
    return Blocks(np.asarray(numbers, np.uint64), np.asarray(times, np.int64),
                  np.frombuffer(b"".join(hashes), np.uint8).reshape(len(batch), 32),
                  np.asarray(base_fees, np.uint64), excess)


def transactions(batch: list[RawBlock]) -> Transactions:
    """Where each transaction of ``batch`` is, the rest of each body (uncles, withdrawals)
    walked too, as strictly as decoding it would be."""
    np = numpy()
    bodies = joined([raw.body_rlp for raw in batch])
    body = records(bodies)
    parts = children(bodies.data, body.start, body.end)
    if ((parts.counts != 2) & (parts.counts != 3)).any():
        raise Irregular("a body that is not [transactions, uncles] or with withdrawals")
    first_part = np.zeros(len(batch), np.int64)
    np.cumsum(parts.counts[:-1], out=first_part[1:])
    tx_lists = lists(bodies.data, parts.position[first_part], body.end)
    items = children(bodies.data, tx_lists.start, tx_lists.end)
    rest = np.flatnonzero(parts.ordinal > 0)
    other = lists(bodies.data, parts.position[rest], body.end[parts.parent[rest]])
    check_nested(bodies.data, other.start, other.end)
    stored = np.fromiter((len(raw.senders) for raw in batch), np.int64, len(batch))
    if not np.array_equal(stored, 20 * items.counts):
        raise Irregular("transactions stored without their senders")
    senders = b"".join([raw.senders for raw in batch])
    return Transactions(bodies, tx_lists, items,
                        np.frombuffer(senders, np.uint8).reshape(len(items.position), 20))


class Receipts(NamedTuple):
    """Where each receipt of a batch of blocks is, and its four fields."""

    stored: Joined
    items: Children
    """Each receipt: where it starts, its block (``parent``) and its index (``ordinal``)."""
    fields: list[Any]
    """Where each receipt's fields start: status or root (a type for a slim receipt), then
    cumulative gas, then bloom (status for a slim receipt), then the list of its logs."""
    end: Any
    """Where each receipt's list of fields ends."""
    slim: bool
    """Whether these are ``ere``'s slim receipts (``[type, status, cumulative gas, logs]``)."""


def receipts(batch: list[RawBlock], txs: Transactions) -> Receipts:
    """The receipts of ``batch``: one for each of its transactions (``txs``)."""
    np = numpy()
    slim = batch[0].slim
    if any(raw.receipts_rlp is None or raw.slim != slim for raw in batch):
        raise Irregular("a block without receipts, or receipts of two encodings")
    stored = joined([raw.receipts_rlp or b"" for raw in batch])
    data = stored.data
    top = records(stored)
    items = children(data, top.start, top.end)
    if not np.array_equal(items.counts, txs.items.counts):
        raise Irregular("as many receipts as transactions")
    item = heads(data, items.position, stored.offsets[1:][items.parent])
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
            inner = lists(data, inner_at, end[typed])
            if not np.array_equal(inner.end, end[typed]):
                raise Irregular("a typed receipt that is not one list")
            start = start.copy()
            start[typed] = inner.start
    return Receipts(stored, items, fields(data, start, end, 4), end, slim)


BATCH_BYTES = 48 << 20
"""Body and receipt bytes read per batch: large enough that the per-step cost of the walk
vanishes, small enough that a batch's arrays stay a small part of memory."""
BATCH_BLOCKS = 8192
"""Blocks per batch at most (nearly empty blocks: the per-block arrays stay small)."""


def batches(stream: Iterable[RawBlock]) -> Iterator[list[RawBlock]]:
    """The blocks of ``stream`` in batches of about :data:`BATCH_BYTES` (or :data:`BATCH_BLOCKS`)."""
    batch: list[RawBlock] = []
    size = 0
    for raw in stream:
        batch.append(raw)
        size += len(raw.body_rlp) + len(raw.receipts_rlp or b"")
        if size >= BATCH_BYTES or len(batch) >= BATCH_BLOCKS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


class Batch:
    """A batch of blocks' records and what walking them found, each walk made once for all the
    tables read from the batch (a walk that raises :class:`Irregular` is not kept)."""

    def __init__(self, raws: list[RawBlock]) -> None:
        self.raws = raws
        self._found: dict[str, Any] = {}

    def once(self, key: str, make: Callable[[], T]) -> T:
        """What ``make`` makes, made the first time ``key`` is asked for."""
        if key not in self._found:
            self._found[key] = make()
        return cast(T, self._found[key])

    def made(self, key: str) -> Any:
        """What was made for ``key`` so far (None: nothing yet)."""
        return self._found.get(key)

    @property
    def blocks(self) -> Blocks:
        """What the rows repeat from the headers."""
        return self.once("blocks", lambda: block_heads(self.raws))

    @property
    def transactions(self) -> Transactions:
        """Where each transaction is (the rest of each body walked too)."""
        return self.once("transactions", lambda: transactions(self.raws))

    @property
    def receipts(self) -> Receipts:
        """Where each receipt and its fields are."""
        return self.once("receipts", lambda: receipts(self.raws, self.transactions))
