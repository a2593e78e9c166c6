"""RLP read with numpy: the same step taken for many items at once.

A table whose rows all have one shape (a log is ``[address, [topics...], data]`` everywhere)
is read by joining the records of thousands of blocks into one byte array and walking it level
by level, each step one numpy operation over every item of that depth: a few array operations
per level and list position, whatever the number of rows.

The walk is as strict as :func:`ethread.rlpcodec.items.decode_nested` (and, like it, does not
look for non-canonical lengths). Bytes not of the expected shape raise :class:`Irregular`, and
the caller reads those records the plain way.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .extra import numpy

PAD = 16
"""Zero bytes after the joined records, so that reading a long length's bytes (at most 8 after
the first) or a short value's 12-byte window never indexes past the array; an item that would
reach into them is refused."""


class Irregular(ValueError):
    """Bytes the array walk does not take: not RLP, or RLP of another shape than asked for."""


class Heads(NamedTuple):
    """Where the payloads of items start and end, and which items are lists."""

    start: Any
    end: Any
    is_list: Any


class Children(NamedTuple):
    """The items inside some lists, in order: list by list, and within a list by position."""

    position: Any
    """Where each item starts."""
    parent: Any
    """Which of the given lists it is in."""
    ordinal: Any
    """Its place in that list (0 first)."""
    counts: Any
    """How many items each given list holds."""


class Joined(NamedTuple):
    """Records joined into one array."""

    blob: bytes
    """The records back to back, then :data:`PAD` zero bytes."""
    data: Any
    """``blob`` as a uint8 array (no copy)."""
    offsets: Any
    """Where each record starts, with the end of the last one last."""


def joined(records: list[bytes]) -> Joined:
    """``records`` joined into one array."""
    np = numpy()
    lengths = np.fromiter(map(len, records), np.int64, len(records))
    offsets = np.zeros(len(records) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    blob = b"".join([*records, bytes(PAD)])
    return Joined(blob, np.frombuffer(blob, np.uint8), offsets)


def heads(data: Any, position: Any, limit: Any) -> Heads:
    """The heads of the items at ``position``; :class:`Irregular` when an item runs past
    ``limit`` (its enclosing item's end: an array, or one number for all)."""
    np = numpy()
    header, short = _prefix_tables()
    first = data[position]
    start = position + header[first]
    length = short[first]
    long = length < 0
    if long.any():
        at = np.flatnonzero(long)
        own = header[first[at]] - 1
        if int(own.max()) <= 4:
            # the four bytes after each first byte, as one big-endian word (unaligned)
            words = np.ndarray((len(data) - 4,), ">u4", data, offset=1, strides=(1,))
            length[at] = words[position[at]].astype(np.int64) >> (8 * (4 - own))
        else:  # up to 8 length bytes (a non-canonical length can have leading zeros)
            value = np.zeros(len(at), np.int64)
            for k in range(int(own.max())):
                if (value >= 1 << 40).any():
                    raise Irregular("an RLP length beyond any record")
                value = np.where(k < own, (value << 8) | data[position[at] + 1 + k], value)
            length[at] = value
    end = start + length
    if (end > limit).any():
        raise Irregular("an RLP item runs past its enclosing item")
    return Heads(start, end, first >= 0xC0)


def item_ends(data: Any, position: Any, limit: Any) -> Any:
    """Where the items at ``position`` end (the next item starts there)."""
    return heads(data, position, limit).end


def _prefix_tables() -> tuple[Any, Any]:
    """For each first byte of an item: how many bytes its head takes, and its payload's length
    (-1 when a long length follows)."""
    global _TABLES
    if _TABLES is None:
        np = numpy()
        first = np.arange(256, dtype=np.int64)
        header = np.select([first < 0x80, first < 0xB8, first < 0xC0, first < 0xF8],
                           [0, 1, first - 0xB6, 1], first - 0xF6)
        short = np.select([first < 0x80, first < 0xB8, first < 0xC0, first < 0xF8],
                          [1, first - 0x80, -1, first - 0xC0], -1)
        _TABLES = (header, short)
    return _TABLES


_TABLES: tuple[Any, Any] | None = None


def children(data: Any, start: Any, end: Any) -> Children:
    """The items of the lists whose payloads are ``data[start[i]:end[i]]``; :class:`Irregular`
    unless each list's items fill it exactly."""
    np = numpy()
    count = len(start)
    found: list[tuple[Any, Any, int]] = []
    parent = np.arange(count, dtype=np.int64)
    here, until = start, end
    open_ = here < until
    here, until, parent = here[open_], until[open_], parent[open_]
    ordinal = 0
    while len(here):
        found.append((here, parent, ordinal))
        after = item_ends(data, here, until)
        going = after < until  # an item ending past its list was refused by item_ends
        here, until, parent = after[going], until[going], parent[going]
        ordinal += 1
    counts = np.zeros(count, np.int64)
    if not found:
        empty = np.zeros(0, np.int64)
        return Children(empty, empty, empty, counts)
    all_parents = np.concatenate([p for _, p, _ in found])
    counts = np.bincount(all_parents, minlength=count).astype(np.int64)
    first = np.zeros(count, np.int64)
    np.cumsum(counts[:-1], out=first[1:])
    total = len(all_parents)
    position = np.empty(total, np.int64)
    parents = np.empty(total, np.int64)
    ordinals = np.empty(total, np.int64)
    for here, parent, ordinal in found:
        place = first[parent] + ordinal
        position[place] = here
        parents[place] = parent
        ordinals[place] = ordinal
    return Children(position, parents, ordinals, counts)


def fields(data: Any, start: Any, end: Any, count: int) -> list[Any]:
    """Where each of the ``count`` items of each list ``data[start[i]:end[i]]`` starts (one
    array per field); :class:`Irregular` unless every list holds exactly ``count`` items."""
    np = numpy()
    out = []
    here = start
    for _ in range(count):
        if (here >= end).any():
            raise Irregular(f"a list of fewer than {count} items")
        out.append(here)
        here = item_ends(data, here, end)
    if not np.array_equal(here, end):
        raise Irregular(f"a list of more than {count} items")
    return out


def records(found: Joined) -> Heads:
    """The heads of joined records that must each be one whole list."""
    start, end = found.offsets[:-1], found.offsets[1:]
    if (start >= end).any():
        raise Irregular("an empty record")
    heads_ = lists(found.data, start, end)
    if not (heads_.end == end).all():
        raise Irregular("trailing bytes after an RLP record")
    return heads_


def lists(data: Any, position: Any, limit: Any) -> Heads:
    """The heads of items that must be lists."""
    found = heads(data, position, limit)
    if not found.is_list.all():
        raise Irregular("expected RLP lists")
    return found


def strings(data: Any, position: Any, limit: Any, width: int | None = None) -> Heads:
    """The heads of items that must be strings (of ``width`` bytes each, when given)."""
    found = heads(data, position, limit)
    if found.is_list.any():
        raise Irregular("expected RLP strings")
    if width is not None and ((found.end - found.start) != width).any():
        raise Irregular(f"expected {width}-byte strings")
    return found


def gather(data: Any, start: Any, width: int) -> Any:
    """The ``width`` bytes at each of ``start`` as a (count, width) uint8 array (a copy: each
    row taken whole, as one ``width``-byte value of an overlapping view)."""
    np = numpy()
    if not len(start):
        return np.zeros((0, width), np.uint8)
    values = np.ndarray((len(data) - width + 1,), f"V{width}", data, strides=(1,))
    return values[start].view(np.uint8).reshape(len(start), width)


def right_aligned(data: Any, start: Any, end: Any, width: int) -> Any:
    """The strings ``data[start[i]:end[i]]`` right-aligned in ``width`` bytes (zeros before),
    as a (count, width) uint8 array; :class:`Irregular` when one is longer."""
    np = numpy()
    length = end - start
    if (length > width).any():
        raise Irregular(f"a number of more than {width} bytes")
    if len(data) < width:
        return _right_aligned_bytewise(data, start, end, width)
    low = end - width
    out = gather(data, np.maximum(low, 0), width)
    np.multiply(out, np.arange(width) >= (width - length)[:, None], out=out)
    early = np.flatnonzero((low < 0) & (length > 0))  # (an empty one is zeros already)
    if len(early):
        out[early] = _right_aligned_bytewise(data, start[early], end[early], width)
    return out


def _right_aligned_bytewise(data: Any, start: Any, end: Any, width: int) -> Any:
    np = numpy()
    where = end[:, None] - width + np.arange(width)
    inside = where >= start[:, None]
    return np.where(inside, data[np.where(inside, where, 0)], 0).astype(np.uint8)


def check_nested(data: Any, start: Any, end: Any) -> Any:
    """How many items each list ``data[start[i]:end[i]]`` holds, every list inside walked:
    :class:`Irregular` where :func:`~ethread.rlpcodec.items.decode_nested` would refuse them."""
    np = numpy()
    counts = np.zeros(len(start), np.int64)
    first = True
    while len(start):
        inner = children(data, start, end)
        if first:
            counts, first = inner.counts, False
        found = heads(data, inner.position, end[inner.parent])
        start, end = found.start[found.is_list], found.end[found.is_list]
    return counts
