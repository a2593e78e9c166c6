"""RLP walked with numpy (:mod:`ethread.frames.rlp_arrays`) reads what the item decoder reads:
walking every list of many records level by level rebuilds each record as
:func:`~ethread.rlpcodec.items.decode_nested` decodes it, and a record that decoder refuses is
refused (:class:`Irregular`), never read as something else."""

from __future__ import annotations

from typing import Any

import pytest
import rlp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ethread.frames.rlp_arrays import (
    Irregular,
    children,
    fields,
    gather,
    heads,
    item_ends,
    joined,
    right_aligned,
)
from ethread.rlpcodec.items import Nested, decode_nested

np = pytest.importorskip("numpy")

items: st.SearchStrategy[Any] = st.recursive(
    st.binary(max_size=80) | st.sampled_from([b"", b"\x00", b"\x7f", b"\x80", bytes(56)]),
    lambda inner: st.lists(inner, max_size=6), max_leaves=30)


def walk(records: list[bytes]) -> list[Nested]:
    """Each record rebuilt from the array walk alone: heads of every item, children of every
    list, level by level."""
    j = joined(records)
    starts, ends = j.offsets[:-1], j.offsets[1:]
    if (starts >= ends).any():
        raise Irregular("an empty record")
    top = heads(j.data, starts, ends)
    if not np.array_equal(top.end, ends):
        raise Irregular("trailing bytes")
    built: list[Nested] = [b""] * len(records)
    # each level: (where its items' payloads are, whether each is a list, where to put it)
    level = (top.start, top.end, top.is_list,
             [(built, index) for index in range(len(records))])
    while len(level[0]):
        start, end, is_list, places = level
        lists = np.flatnonzero(is_list)
        for i in np.flatnonzero(~is_list).tolist():
            into, key = places[i]
            into[key] = j.blob[int(start[i]):int(end[i])]
        for i in lists.tolist():
            into, key = places[i]
            into[key] = []
        inner = children(j.data, start[lists], end[lists])
        below = heads(j.data, inner.position, end[lists][inner.parent])
        assert np.array_equal(item_ends(j.data, inner.position, end[lists][inner.parent]),
                              below.end)
        slots = []
        for parent in inner.parent.tolist():
            into, key = places[int(lists[parent])]
            holder = into[key]
            assert isinstance(holder, list)
            holder.append(b"")
            slots.append((holder, len(holder) - 1))
        level = (below.start, below.end, below.is_list, slots)
    return built


@settings(max_examples=300, deadline=None)
@given(st.lists(items, min_size=1, max_size=5))
@example([bytes(70_000), [bytes(300), [b"\x01"] * 60]])  # lengths in 3 and 2 bytes
def test_the_walk_rebuilds_what_the_decoder_decodes(records: list[Any]) -> None:
    encoded = [rlp.encode(item) for item in records]
    assert walk(encoded) == [decode_nested(raw) for raw in encoded]


@settings(max_examples=400, deadline=None)
@given(st.lists(items, min_size=1, max_size=3), st.data())
def test_a_damaged_record_is_refused_where_the_decoder_refuses_it(records: list[Any],
                                                                  data: st.DataObject) -> None:
    encoded = [rlp.encode(item) for item in records]
    which = data.draw(st.integers(0, len(encoded) - 1))
    raw = bytearray(encoded[which])
    damage = data.draw(st.sampled_from(["byte", "cut", "extra"]))
    if damage == "byte":
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    elif damage == "cut":
        del raw[data.draw(st.integers(0, len(raw) - 1)):]
    else:
        raw += data.draw(st.binary(min_size=1, max_size=3))
    encoded[which] = bytes(raw)
    try:
        expected: list[Nested] | None = [decode_nested(r) for r in encoded]
    except ValueError:
        expected = None
    if expected is None:
        with pytest.raises(Irregular):
            walk(encoded)
    else:
        assert walk(encoded) == expected


def test_fields_takes_exactly_as_many_items_as_asked() -> None:
    j = joined([rlp.encode([b"a", b"bc", [b"d"]]), rlp.encode([b"", b"x" * 60, []])])
    top = heads(j.data, j.offsets[:-1], j.offsets[1:])
    first, second, third = fields(j.data, top.start, top.end, 3)
    assert [j.blob[a] for a in first.tolist()] == [ord("a"), 0x80]
    assert heads(j.data, second, top.end).end.tolist() == third.tolist()
    with pytest.raises(Irregular, match="more than 2"):
        fields(j.data, top.start, top.end, 2)
    with pytest.raises(Irregular, match="fewer than 4"):
        fields(j.data, top.start, top.end, 4)


def test_a_length_past_every_record_is_refused() -> None:
    """A length of 2^40 bytes or more (in 8 length bytes) is refused, not wrapped."""
    j = joined([b"\xbf" + b"\xff" * 8 + b"\x00"])
    with pytest.raises(Irregular):
        heads(j.data, j.offsets[:-1], j.offsets[1:])
    with pytest.raises(Irregular):
        item_ends(j.data, j.offsets[:-1], j.offsets[1:])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=12), min_size=1, max_size=20), st.sampled_from([8, 12, 16]))
@example([b"\x01", b"\x02\x03"], 8)  # strings at the very start: windows before the data
@example([b"\x01", b""], 32)  # data (with its padding) shorter than the width
@example([b"", b"\x05", bytes(range(1, 31))], 32)  # empty, then early, then a whole window
def test_right_aligned_pads_each_string_on_the_left(strings_: list[bytes], width: int) -> None:
    j = joined(strings_)
    start, end = j.offsets[:-1], j.offsets[1:]
    if any(len(s) > width for s in strings_):
        with pytest.raises(Irregular, match=f"more than {width} bytes"):
            right_aligned(j.data, start, end, width)
        return
    rows = right_aligned(j.data, start, end, width)
    assert rows.dtype.name == "uint8" and rows.shape == (len(strings_), width)
    assert [bytes(row) for row in rows] == [s.rjust(width, b"\x00") for s in strings_]


def test_gather_takes_whole_rows_and_nothing_from_no_rows() -> None:
    j = joined([bytes(range(40))])
    rows = gather(j.data, j.offsets[:1] + 3, 4)  # (numpy: the first offset plus 3)
    assert rows.tolist() == [[3, 4, 5, 6]]
    assert gather(j.data, j.offsets[:0], 64).shape == (0, 64)
