"""Column kinds of the frames and how each becomes an Arrow array.

Numbers that fit 64 bits by rule (block numbers, gas, nonces, indexes) are ``uint64``.
Wei-sized numbers (values, gas prices and fee caps, base fees, difficulty, decoded ``uint256``)
are ``decimal128(38, 0)``: exact to 10^38 - 1, read by pandas and polars without loss (a float
rounds wei; ``decimal256`` polars does not accept, and it would not hold 2^256 - 1 either). A
column holding a larger number (a ``uint256`` near its maximum) is built as exact base-10
strings instead. Hashes and addresses are ``0x`` lowercase hex strings; other byte strings
are ``binary``; timestamps are ``timestamp[s, tz=UTC]``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

from .extra import numpy, pyarrow

WIDE_LIMIT = 10**38
"""The first integer a ``decimal128(38, 0)`` column cannot hold."""

Column = Callable[[Sequence[Any]], Any]
"""Builds an Arrow array from a column's Python values (None for null)."""


def _integers(values: Sequence[int | None], arrow_type: str) -> Any:
    """An Arrow integer array of ``arrow_type``, or :func:`wide` when a value does not fit."""
    pa = pyarrow()
    try:
        return pa.array(values, arrow_type)
    except (OverflowError, pa.ArrowInvalid):
        return wide(values)


def uint64(values: Sequence[int | None]) -> Any:
    """An Arrow ``uint64`` column (counts, gas, numbers); values too large for it become a wide column."""
    return _integers(values, "uint64")


def int64(values: Sequence[int | None]) -> Any:
    """An Arrow ``int64`` column; values too large for it become a wide column."""
    return _integers(values, "int64")


def wide(values: Sequence[int | None]) -> Any:
    """``decimal128(38, 0)``, or exact decimal strings when a value does not fit."""
    pa = pyarrow()
    if all(v is None or -WIDE_LIMIT < v < WIDE_LIMIT for v in values):
        return pa.array([None if v is None else Decimal(v) for v in values], pa.decimal128(38, 0))
    return pa.array([None if v is None else str(v) for v in values], pa.string())


def hex_string(values: Sequence[bytes | None]) -> Any:
    """An Arrow string column of ``0x`` hex (hashes, addresses); None stays null."""
    pa = pyarrow()
    return pa.array([None if v is None else "0x" + v.hex() for v in values], pa.string())


def hex_list(values: Sequence[Sequence[bytes] | None]) -> Any:
    """An Arrow column of lists of ``0x`` hex strings (blob versioned hashes)."""
    pa = pyarrow()
    return pa.array([None if v is None else ["0x" + b.hex() for b in v] for v in values],
                    pa.list_(pa.string()))


def binary(values: Sequence[bytes | None]) -> Any:
    """An Arrow ``binary`` column (input, data, blooms)."""
    pa = pyarrow()
    return pa.array(values, pa.binary())


def timestamp(values: Sequence[int | None]) -> Any:
    """An Arrow ``timestamp[s, UTC]`` column from Unix seconds."""
    pa = pyarrow()
    return pa.array(values, pa.timestamp("s", tz="UTC"))


def boolean(values: Sequence[bool | None]) -> Any:
    """An Arrow boolean column."""
    pa = pyarrow()
    return pa.array(values, pa.bool_())


def string(values: Sequence[str | None]) -> Any:
    """An Arrow string column."""
    pa = pyarrow()
    return pa.array(values, pa.string())


def table(columns: dict[str, tuple[Column, list[Any]]]) -> Any:
    """An Arrow table of the named columns, each built by its kind from its values."""
    pa = pyarrow()
    return pa.table({name: build(values) for name, (build, values) in columns.items()})


_NULLABLE_INTEGERS = {"uint8": "UInt8", "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
                      "int8": "Int8", "int16": "Int16", "int32": "Int32", "int64": "Int64"}
"""Arrow integer types and pandas' nullable dtype of each."""


def with_pandas_types(table: Any) -> Any:
    """``table`` with schema metadata telling ``to_pandas()`` (and ``pandas.read_parquet``) to make
    every integer column a nullable ``UInt64``, not floats that round above 2^53 where a column
    holds a null. The table's data is untouched."""
    import json

    columns = [{"name": f.name, "field_name": f.name, "pandas_type": str(f.type),
                "numpy_type": _NULLABLE_INTEGERS[str(f.type)], "metadata": None}
               for f in table.schema if str(f.type) in _NULLABLE_INTEGERS]
    if not columns:
        return table
    metadata = {"index_columns": [], "column_indexes": [], "columns": columns,
                "creator": {"library": "ethread"}, "pandas_version": "2.0.0"}
    return table.replace_schema_metadata({**(table.schema.metadata or {}),
                                          b"pandas": json.dumps(metadata).encode()})


# -- whole columns from raw bytes, with numpy ---------------------------------------------------


def _validity(mask: Any) -> Any:
    """An Arrow validity bitmap from a boolean numpy array (True: present), or None for all."""
    np = numpy()
    if bool(mask.all()):
        return None
    return pyarrow().py_buffer(np.packbits(mask, bitorder="little"))


def hex_column(values: Sequence[bytes | None], width: int) -> Any:
    """``0x`` hex strings of byte strings that are all ``width`` bytes (or None: null), made for
    the whole column at once."""
    pa, np = pyarrow(), numpy()
    count = len(values)
    if count == 0:
        return pa.array([], pa.string())
    blank = bytes(width)
    present = np.fromiter((v is not None for v in values), bool, count)
    joined = b"".join([v if v is not None else blank for v in values])
    if len(joined) != count * width:
        return hex_string(values)  # a value of another width: the plain way
    return hex_rows(np.frombuffer(joined, np.uint8).reshape(count, width), present)


_PREFIX = int.from_bytes(b"0x", "little")


def _hex_pairs() -> Any:
    """The two hex digits of each byte value, as the uint16 whose little-endian bytes they are."""
    global _PAIRS
    if _PAIRS is None:
        np = numpy()
        _PAIRS = np.array([int.from_bytes(b"%02x" % value, "little") for value in range(256)],
                          np.dtype("<u2"))
    return _PAIRS


_PAIRS: Any = None


def hex_rows(raw: Any, present: Any = None) -> Any:
    """``0x`` hex strings of the rows of a (count, width) uint8 array; ``present`` (a boolean
    array) marks the rows that are not null (default: all)."""
    pa, np = pyarrow(), numpy()
    count, width = raw.shape
    out = np.empty((count, 1 + width), np.uint16)  # two hex digits in each
    out[:, 0] = _PREFIX
    out[:, 1:] = _hex_pairs()[raw]
    offsets = np.arange(0, (count + 1) * (2 + 2 * width), 2 + 2 * width, dtype=np.int32)
    validity = None if present is None else _validity(present)
    return pa.Array.from_buffers(pa.string(), count,
                                 [validity, pa.py_buffer(offsets),
                                  pa.py_buffer(out)])


def _padded(values: Sequence[bytes | None], width: int) -> tuple[Any, Any] | None:
    """Big-endian byte strings right-aligned in ``width`` bytes as a (count, width) uint8
    array, with the presence mask; None when one is wider."""
    np = numpy()
    count = len(values)
    if any(v is not None and len(v) > width for v in values):
        return None
    present = np.fromiter((v is not None for v in values), bool, count)
    joined = b"".join([v.rjust(width, b"\x00") if v is not None else bytes(width)
                       for v in values])
    return np.frombuffer(joined, np.uint8).reshape(count, width), present


def uint_column(values: Sequence[bytes | None]) -> Any:
    """A ``uint64`` column from big-endian byte strings as RLP holds numbers (None: null)."""
    padded = _padded(values, 8)
    if padded is None:
        return uint64([None if v is None else int.from_bytes(v, "big") for v in values])
    return uint64_rows(*padded)


def uint64_rows(raw: Any, present: Any = None) -> Any:
    """A ``uint64`` column from a (count, 8) uint8 array of big-endian numbers; ``present``
    marks the rows that are not null (default: all)."""
    pa = pyarrow()
    numbers = raw.copy().view(">u8").reshape(-1).astype("<u8")
    validity = None if present is None else _validity(present)
    return pa.Array.from_buffers(pa.uint64(), len(raw), [validity, pa.py_buffer(numbers)])


_DECIMAL_LIMIT = (10**38 - 1).to_bytes(16, "big")


def decimal_column(values: Sequence[bytes | None]) -> Any:
    """A ``decimal128(38, 0)`` column from big-endian byte strings (None: null), built as the
    16-byte little-endian integers Arrow stores; exact decimal strings (as
    :func:`~ethread.frames.columns.wide`) when a value does not fit."""
    padded = _padded(values, 16)
    if padded is None or any(v is not None and len(v) == 16 and v > _DECIMAL_LIMIT
                             for v in values):
        return wide([None if v is None else int.from_bytes(v, "big") for v in values])
    return decimal_rows(*padded)


def fits_decimal(raw: Any) -> bool:
    """Whether every row of a (count, 16) uint8 array of big-endian numbers is below 10^38."""
    np = numpy()
    limit = np.frombuffer(_DECIMAL_LIMIT, np.uint8)
    high = raw[:, :8].copy().view(">u8").reshape(-1)
    low = raw[:, 8:].copy().view(">u8").reshape(-1)
    limit_high, limit_low = (int(x) for x in limit.view(">u8"))
    return not bool(((high > limit_high) | ((high == limit_high) & (low > limit_low))).any())


def decimal_rows(raw: Any, present: Any = None) -> Any:
    """A ``decimal128(38, 0)`` column from a (count, 16) uint8 array of big-endian numbers below
    10^38 (see :func:`fits_decimal`), stored as the 16-byte little-endian integers Arrow
    keeps; ``present`` marks the rows that are not null (default: all)."""
    pa = pyarrow()
    little = raw[:, ::-1].copy()
    validity = None if present is None else _validity(present)
    return pa.Array.from_buffers(pa.decimal128(38, 0), len(raw),
                                 [validity, pa.py_buffer(little)])


def binary_ranges(data: Any, start: Any, end: Any) -> Any:
    """An Arrow ``binary`` column of ``data[start[i]:end[i]]`` (a uint8 array and two int64
    arrays), built as Arrow binary views of ``data`` that Arrow's cast copies in C++."""
    np, pa = numpy(), pyarrow()
    count = len(start)
    if not count:
        return pa.array([], pa.binary())
    if int(start.max()) + 12 > len(data):  # the inline window must not run off
        data = np.concatenate([data, np.zeros(12, np.uint8)])
    if len(data) >= 1 << 31:
        raise ValueError("more bytes than binary views can point into")
    length = end - start
    views = np.zeros((count, 4), np.int32)
    views[:, 0] = length
    window = np.ndarray((len(data) - 11,), "V12", data, strides=(1,))[start].view(
        np.uint8).reshape(count, 12)  # the 12 bytes at each start, each taken whole
    as_bytes = views.view(np.uint8).reshape(count, 16)
    short = length <= 12  # kept inline, zero after the value
    as_bytes[short, 4:] = np.where(np.arange(12) < length[short, None], window[short], 0)
    long = ~short  # a prefix of four bytes, then buffer 0 and the offset into it
    as_bytes[long, 4:8] = window[long, :4]
    views[long, 3] = start[long]
    viewed = pa.Array.from_buffers(pa.binary_view(), count, [
        None, pa.py_buffer(views), pa.py_buffer(data)])
    return viewed.cast(pa.binary())
