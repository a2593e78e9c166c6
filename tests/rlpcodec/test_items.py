"""The fast RLP decoder stores read their records with (:mod:`ethread.rlpcodec.items`) decodes as
pyrlp does (any nested item, and the encoder writes pyrlp's bytes), finds each item's bytes
exactly, and answers a damaged or cut record with ValueError (a store then says it holds a
damaged record), never a wrong value."""

from __future__ import annotations

import random

import pytest
import rlp
from hypothesis import given, settings
from hypothesis import strategies as st

from ethread.rlpcodec.items import (
    count_items,
    decode_list,
    decode_nested,
    encode_nested,
    item_spans,
    payload_span,
    shallow_items,
)


def _random_item(rng: random.Random, depth: int = 0) -> object:
    if depth < 3 and rng.random() < 0.5:
        width = rng.choice((0, 1, 2, 5, 60)) if depth == 0 else rng.choice((0, 1, 3))
        return [_random_item(rng, depth + 1) for _ in range(width)]
    size = rng.choice((0, 1, 1, 2, 20, 32, 55, 56, 57, 300, 70_000 if depth == 0 else 100))
    return bytes(rng.getrandbits(8) for _ in range(size))


def test_nested_items_decode_as_pyrlp_decodes_them() -> None:
    rng = random.Random(12)
    for _ in range(400):
        item = _random_item(rng)
        raw = rlp.encode(item)
        assert decode_nested(raw) == rlp.decode(raw)


def test_the_spans_of_a_list_are_its_items_encodings() -> None:
    rng = random.Random(7)
    for _ in range(200):
        items = [_random_item(rng, 1) for _ in range(rng.choice((0, 1, 4, 30)))]
        raw = rlp.encode([b"head", items])  # the list sits inside another, as a body's do
        outer_start, outer_end = payload_span(raw)
        assert (outer_start, outer_end)[1] == len(raw)
        start, end = payload_span(raw, outer_start + 5)  # after the 4-byte string b"head"
        assert [raw[a:b] for a, b in item_spans(raw, start, end)] == [rlp.encode(i) for i in items]
        assert count_items(raw, start, end) == len(items)
        shallow = shallow_items(raw, start, end)
        # a string as its bytes, a list as the span of its payload (its items' encodings)
        assert [raw[s[0]:s[1]] if isinstance(s, tuple) else s for s in shallow] == [
            b"".join(rlp.encode(x) for x in i) if isinstance(i, list) else i for i in items]
        assert [isinstance(s, tuple) for s in shallow] == [isinstance(i, list) for i in items]
        assert decode_list(raw)[1] == rlp.decode(raw)[1]


def test_a_long_list_and_a_long_string_find_their_ends() -> None:
    raw = rlp.encode([b"x" * 70_000, [b"y" * 60] * 3])
    start, end = payload_span(raw)
    assert [raw[a:b] for a, b in item_spans(raw, start, end)] == [
        rlp.encode(b"x" * 70_000), rlp.encode([b"y" * 60] * 3)]
    assert count_items(raw, start, end) == 2


def test_counting_reads_every_width_of_length() -> None:
    """Each prefix kind: a single byte, a short and a long string (lengths of one, two and three
    bytes), a short and a long list (as legacy and typed transactions sit in a body)."""
    items = [b"\x01", b"", b"ab", b"s" * 56, b"s" * 300, b"s" * 70_000, [], [b"a"], [b"l" * 60],
             [b"l" * 300], [[b"n" * 70_000]]]
    raw = rlp.encode(items)
    assert count_items(raw, *payload_span(raw)) == len(items)
    with pytest.raises(ValueError):
        count_items(raw, payload_span(raw)[0], len(raw) - 1)  # the last item cut short


@pytest.mark.parametrize("bad", [
    b"",                                   # nothing
    rlp.encode([b"abc", b"def"])[:-1],     # cut short
    rlp.encode([b"abc"]) + b"\x00",        # trailing bytes
    b"\xc3\x85abc",                        # a string running past its list
    b"\xf9\xff\xff" + b"\x80" * 10,        # a length far past the record
])
def test_a_damaged_record_is_a_value_error(bad: bytes) -> None:
    with pytest.raises(ValueError):
        decode_nested(bad)


def test_a_list_is_required_where_one_belongs() -> None:
    with pytest.raises(ValueError):
        decode_list(rlp.encode(b"a string"))
    with pytest.raises(ValueError):
        payload_span(rlp.encode(b"a string"))
    with pytest.raises(ValueError):
        item_spans(b"\x85ab", 0, 3)
    with pytest.raises(ValueError):
        count_items(b"\x85ab", 0, 3)
    with pytest.raises(ValueError):
        shallow_items(b"\x85ab", 0, 3)


items = st.recursive(st.binary(max_size=70),
                     lambda inner: st.lists(inner, max_size=6), max_leaves=40)


@settings(max_examples=400, deadline=None)
@given(items)
def test_the_fast_reader_and_the_encoder_agree_with_pyrlp(item: object) -> None:
    raw = rlp.encode(item)
    assert encode_nested(item) == raw
    assert decode_nested(raw) == rlp.decode(raw)


@settings(max_examples=200, deadline=None)
@given(items, st.data())
def test_a_record_cut_short_is_refused(item: object, data: st.DataObject) -> None:
    raw = rlp.encode(item)
    cut = data.draw(st.integers(0, len(raw) - 1))
    try:
        decode_nested(raw[:cut])
    except ValueError:
        return
    raise AssertionError(f"{raw[:cut].hex()} decoded though cut short")
