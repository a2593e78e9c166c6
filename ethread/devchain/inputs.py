"""Bytes or ``0x`` hex strings where the dev chain wants bytes; anything else is refused (a TypeError
saying what to pass, a ValueError for the wrong length), never sent on as text."""

from __future__ import annotations

from typing import Any

from ..models import Address


def as_bytes(value: Any, what: str, length: int | None = None) -> bytes:
    """``value`` as bytes: bytes-like as is, a ``0x``-prefixed hex string decoded."""
    if isinstance(value, bytes | bytearray | memoryview):
        out = bytes(value)
    elif isinstance(value, str):
        if not value.startswith(("0x", "0X")):
            raise TypeError(f"{what}: pass bytes or a 0x-prefixed hex string, not the text {value[:20]!r}")
        digits = value[2:]
        if len(digits) % 2:
            raise ValueError(f"{what}: {value[:20]!r}... has an odd number of hex digits")
        try:
            out = bytes.fromhex(digits)
        except ValueError:
            raise ValueError(f"{what}: {value[:20]!r}... is not hex") from None
    else:
        raise TypeError(f"{what}: pass bytes or a 0x-prefixed hex string, not {type(value).__name__}")
    if length is not None and len(out) != length:
        raise ValueError(f"{what}: expected {length} bytes, got {len(out)}")
    return out


def as_address(value: Any, what: str = "address") -> Address:
    """A 20-byte address from bytes, a hex string, or anything with an ``address`` attribute."""
    inner = getattr(value, "address", None)
    if inner is not None and not isinstance(value, bytes | str):
        value = inner
    return as_bytes(value, what, 20)


def as_int(value: Any, what: str) -> int:
    """A non-negative integer (not a bool, not a string)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what}: pass an int, not {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{what}: must not be negative")
    return value
