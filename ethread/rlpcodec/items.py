"""RLP items: nested byte strings and lists, read and written without sedes.

:func:`decode_nested` reads the records a store holds faster than pyrlp
(``benchmarks/bench_rlp.py``). It is as strict about structure as pyrlp (every length must fit
its enclosing item, and the item must fill the record exactly: ValueError otherwise) but does
not look for non-canonical lengths, which ethread never writes: a store's records were checked
against their hashes at import. Bytes from outside (a chain file, a raw transaction) still go
through pyrlp.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import rlp

from ..errors import Picklable

Nested = bytes | list["Nested"]


class DecodeError(Picklable, ValueError):
    """Bytes that are not the RLP form they were said to be."""


class TruncatedRLP(DecodeError):
    """Back-to-back RLP items end in one that does not decode; ``complete`` holds the items
    before it and ``position`` the byte where it starts."""

    def __init__(self, message: str, complete: list[bytes], position: int) -> None:
        super().__init__(message)
        self.complete = complete
        self.position = position


def split_concatenated(data: bytes) -> list[bytes]:
    """Split back-to-back RLP items (as ``geth export`` writes blocks) into their encodings;
    :class:`TruncatedRLP` when an item is cut short or malformed."""
    out = []
    pos = 0
    try:
        while pos < len(data):
            _, _, end = rlp.codec.consume_item(data, pos)
            out.append(data[pos:end])
            pos = end
    except (rlp.DecodingError, IndexError) as exc:
        cut = "truncated" if isinstance(exc, IndexError) else "malformed"
        raise TruncatedRLP(f"item {len(out) + 1}, starting at byte {pos} of {len(data)}, is "
                           f"{cut} ({exc}); the {len(out)} item(s) before it are whole",
                           out, pos) from None
    return out


def int_to_bytes(value: int) -> bytes:
    """An integer as RLP stores it: big-endian, no leading zero bytes (0 is empty)."""
    return value.to_bytes((value.bit_length() + 7) // 8, "big")


def decode_nested(raw: bytes) -> Nested:
    """``raw`` decoded into byte strings and lists; ValueError when it is not one whole RLP item."""
    return _whole(raw, 0, len(raw))


def decode_list(raw: bytes) -> list[Nested]:
    """``raw`` decoded, when it must be a list (ValueError otherwise)."""
    return decode_list_at(raw, 0, len(raw))


def decode_list_at(raw: bytes, at: int, end: int) -> list[Nested]:
    """The list whose encoding is exactly ``raw[at:end]``, decoded without copying it out
    (ValueError when it is not one list filling that span)."""
    item = _whole(raw, at, end)
    if type(item) is not list:
        raise ValueError("expected an RLP list")
    return item


def _whole(raw: bytes, at: int, end: int) -> Nested:
    if at >= end:
        raise ValueError("an empty RLP record")
    item, stop = _item(raw, at, end)
    if stop != end:
        raise ValueError("trailing bytes after an RLP record")
    return item


def list_items(raw: bytes, at: int = 0) -> tuple[list[int], int]:
    """Where each item of the list encoded at ``raw[at]`` starts, with the list's end last
    (item ``i`` is ``raw[starts[i]:starts[i + 1]]``), and how many of them are lists; ValueError
    when ``raw[at]`` is not a list or an item runs past the list's end or the record's."""
    first = raw[at]
    if first < 0xC0:
        raise ValueError("expected an RLP list")
    if first < 0xF8:
        at += 1
        end = at + first - 0xC0
    else:
        start = at + first - 0xF6
        end = start + int.from_bytes(raw[at + 1:start], "big")
        at = start
    if end > len(raw):
        raise ValueError("an RLP item runs past its enclosing item")
    starts: list[int] = []
    append = starts.append
    lists = 0
    while at < end:
        append(at)
        first = raw[at]
        if first < 0x80:
            at += 1
        elif first < 0xB8:
            at += first - 0x7F
        elif first < 0xC0:
            at += first - 0xB6 + int.from_bytes(raw[at + 1:at + first - 0xB6], "big")
        else:
            lists += 1
            if first < 0xF8:
                at += first - 0xBF
            else:
                at += first - 0xF6 + int.from_bytes(raw[at + 1:at + first - 0xF6], "big")
    if at != end:
        raise ValueError("an RLP item runs past its enclosing item")
    append(end)
    return starts, lists


def string_start(raw: bytes, at: int) -> int:
    """Where the payload of the string item at ``at`` starts (after its prefix)."""
    first = raw[at]
    if first < 0x80:
        return at
    if first < 0xB8:
        return at + 1
    if first < 0xC0:
        return at + first - 0xB6
    raise ValueError("expected an RLP string")


def string_at(raw: bytes, at: int, end: int) -> bytes:
    """The bytes of the string item ``raw[at:end]`` (found by :func:`list_items`)."""
    return raw[string_start(raw, at):end]


def uint_at(raw: bytes, at: int, end: int) -> int:
    """The big-endian number the string item ``raw[at:end]`` holds."""
    first = raw[at]
    if first < 0x80:
        return first
    if first < 0xB8:
        return int.from_bytes(raw[at + 1:end], "big")
    if first < 0xC0:
        return int.from_bytes(raw[at + first - 0xB6:end], "big")
    raise ValueError("expected an RLP string")


def _item(raw: bytes, at: int, limit: int) -> tuple[Nested, int]:
    """The item starting at ``at`` (which must end by ``limit``) and where it ends."""
    first = raw[at]
    if first < 0x80:
        return raw[at:at + 1], at + 1
    if first < 0xB8:
        start, size = at + 1, first - 0x80
    elif first < 0xC0:
        width = first - 0xB7
        start = at + 1 + width
        size = int.from_bytes(raw[at + 1:start], "big")
    elif first < 0xF8:
        start, size = at + 1, first - 0xC0
    else:
        width = first - 0xF7
        start = at + 1 + width
        size = int.from_bytes(raw[at + 1:start], "big")
    end = start + size
    if end > limit:
        raise ValueError("an RLP item runs past its enclosing item")
    if first < 0xC0:
        return raw[start:end], end
    return _items(raw, start, end), end


def _items(raw: bytes, at: int, end: int, deep: bool = True) -> list[Any]:
    """The items of a list payload ``raw[at:end]``; a nested list decoded by recursion, or with
    ``deep`` false left as the ``(start, end)`` of its payload."""
    items: list[Any] = []
    append = items.append
    while at < end:
        first = raw[at]
        if first < 0x80:
            append(raw[at:at + 1])
            at += 1
            continue
        if first < 0xB8:
            start = at + 1
            stop = start + first - 0x80
        elif first < 0xC0:
            start = at + first - 0xB6
            stop = start + int.from_bytes(raw[at + 1:start], "big")
        elif first < 0xF8:
            start = at + 1
            stop = start + first - 0xC0
        else:
            start = at + first - 0xF6
            stop = start + int.from_bytes(raw[at + 1:start], "big")
        if stop > end:
            raise ValueError("an RLP item runs past its enclosing item")
        if first < 0xC0:
            append(raw[start:stop])
        else:
            append(_items(raw, start, stop) if deep else (start, stop))
        at = stop
    return items


def item_spans(raw: bytes, at: int, end: int) -> list[tuple[int, int]]:
    """(start, end) of every item of the list payload ``raw[at:end]``, prefixes included."""
    spans = []
    while at < end:
        first = raw[at]
        if first < 0x80:
            stop = at + 1
        elif first < 0xB8:
            stop = at + 1 + first - 0x80
        elif first < 0xC0 or first >= 0xF8:
            width = (first - 0xB7) if first < 0xC0 else (first - 0xF7)
            stop = at + 1 + width + int.from_bytes(raw[at + 1:at + 1 + width], "big")
        else:
            stop = at + 1 + first - 0xC0
        if stop > end:
            raise ValueError("an RLP item runs past its enclosing item")
        spans.append((at, stop))
        at = stop
    return spans


def shallow_items(raw: bytes, at: int, end: int) -> list[bytes | tuple[int, int]]:
    """The items of the list payload ``raw[at:end]`` one level deep, a list left as the
    ``(start, end)`` of its payload; ValueError when an item runs past ``end``."""
    return _items(raw, at, end, deep=False)


def count_items(raw: bytes, at: int, end: int) -> int:
    """How many items the list payload ``raw[at:end]`` holds, from their length prefixes alone;
    ValueError when the last item runs past ``end``."""
    count = 0
    while at < end:
        first = raw[at]
        if first >= 0xF8:
            width = first - 0xF7
        elif first >= 0xC0:
            at += first - 0xBF
            count += 1
            continue
        elif first >= 0xB8:
            width = first - 0xB7
        else:
            at += 1 if first < 0x80 else first - 0x7F
            count += 1
            continue
        if width == 1:  # a length below 256: the common case, read without a slice
            at += 2 + raw[at + 1]
        elif width == 2:
            at += 3 + (raw[at + 1] << 8 | raw[at + 2])
        else:
            at += 1 + width + int.from_bytes(raw[at + 1:at + 1 + width], "big")
        count += 1
    if at != end:
        raise ValueError("an RLP item runs past its enclosing item")
    return count


def payload_span(raw: bytes, at: int = 0) -> tuple[int, int]:
    """(start, end) of the payload of the list whose encoding starts at ``at``."""
    first = raw[at]
    if first < 0xC0:
        raise ValueError("expected an RLP list")
    if first < 0xF8:
        return at + 1, at + 1 + first - 0xC0
    width = first - 0xF7
    start = at + 1 + width
    return start, start + int.from_bytes(raw[at + 1:start], "big")


def _prefix(length: int, short: int) -> bytes:
    if length < 56:
        return bytes((short + length,))
    size = length.to_bytes((length.bit_length() + 7) // 8, "big")
    return bytes((short + 55 + len(size),)) + size


def encode_nested(item: object) -> bytes:
    """RLP of byte strings, non-negative integers (big-endian, zero as the empty string) and
    lists or tuples of them, as pyrlp's ``rlp.encode`` gives (no sedes inferred)."""
    if isinstance(item, (bytes, bytearray)):
        if len(item) == 1 and item[0] < 0x80:
            return bytes(item)
        return _prefix(len(item), 0x80) + bytes(item)
    if isinstance(item, (list, tuple)):
        payload = b"".join([encode_nested(x) for x in item])
        return _prefix(len(payload), 0xC0) + payload
    if isinstance(item, int) and not isinstance(item, bool) and item >= 0:
        return encode_nested(item.to_bytes((item.bit_length() + 7) // 8, "big"))
    raise TypeError(f"cannot RLP-encode a {type(item).__name__}")


def rlp_list_length(payload_length: int) -> int:
    """Bytes of an RLP list whose payload is ``payload_length`` bytes (prefix included)."""
    return len(_prefix(payload_length, 0xC0)) + payload_length


def encode_list_of_encoded(items: Sequence[bytes]) -> bytes:
    """An RLP list from items that are already RLP encoded (joins without re-encoding)."""
    return encode_list_payload(b"".join(items))


def encode_list_payload(payload: bytes) -> bytes:
    """An RLP list whose items, already RLP encoded, are joined in ``payload``."""
    return _prefix(len(payload), 0xC0) + payload
