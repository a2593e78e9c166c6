"""Column builders of :mod:`ethread.frames.columns` that the array walks lean on, against the
plain Python they stand for."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ethread.frames.columns import binary_ranges, hex_rows


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200), st.data())
@example(b"", None)
@example(b"abc", None)  # a value whose 12-byte window runs past the data
def test_binary_ranges_are_the_slices(blob: bytes, data: st.DataObject | None) -> None:
    spans: list[tuple[int, int]] = []
    if data is not None:
        bounds = st.integers(0, len(blob))
        for lo, hi in data.draw(st.lists(st.tuples(bounds, bounds), max_size=30)):
            spans.append((min(lo, hi), max(lo, hi)))
    elif blob:
        spans = [(0, len(blob)), (len(blob) - 1, len(blob))]
    array = np.frombuffer(blob, np.uint8)
    start = np.array([lo for lo, _ in spans], np.int64)
    end = np.array([hi for _, hi in spans], np.int64)
    column = binary_ranges(array, start, end)
    assert column.type == pa.binary()
    assert column.to_pylist() == [blob[lo:hi] for lo, hi in spans]


def test_hex_rows_are_0x_hex_with_nulls() -> None:
    raw = np.array([[0, 1, 0xAB], [0xFF, 0x10, 0x0F]], np.uint8)
    assert hex_rows(raw).to_pylist() == ["0x0001ab", "0xff100f"]
    assert hex_rows(raw, np.array([False, True])).to_pylist() == [None, "0xff100f"]
