"""The fast item reader a store's records are read with gives pyrlp's answer for any RLP,
and refuses what pyrlp refuses for being cut short or overlong."""

from __future__ import annotations

import rlp
from hypothesis import given, settings
from hypothesis import strategies as st

from ethread.rlpcodec.items import decode_nested, encode_nested

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
