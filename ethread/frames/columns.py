"""Column kinds of the frames and how each becomes an Arrow array.

Numbers that fit 64 bits by rule (block numbers, gas, nonces, indexes) are ``uint64``.
Numbers that can be wei-sized (values, gas prices and fee caps, base fees, difficulty, decoded
``uint256`` event arguments) are ``decimal128(38, 0)``: exact integers up to 10^38 - 1 (about
2^126), more than 10^12 times all the ether that exists, which ``to_pandas()`` turns into
Python ``Decimal`` and polars into its own ``Decimal`` without loss. A float would round wei
(float64 is exact only to 2^53), and ``decimal256`` is neither accepted by polars nor wide
enough for 2^256 - 1 either. A column that does hold a larger number (only a ``uint256`` set
near its maximum does: an "unlimited" ERC-20 approval, a fee cap of 2^256 - 1 on a dev chain)
is built as exact base-10 strings instead, so nothing is ever rounded or cut.

Hashes and addresses are ``0x``-prefixed lowercase hex strings; arbitrary byte strings
(transaction input, log data, extra data, blooms) are ``binary``; timestamps are
``timestamp[s, tz=UTC]``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

from .extra import pyarrow

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
    """An Arrow ``uint64`` column (counts, gas, numbers); values too large for it become a wide
    column."""
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
