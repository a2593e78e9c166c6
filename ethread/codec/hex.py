"""Hex quantities and data, strictly, the way geth reads them.

Parsers raise :class:`~ethread.errors.InvalidParams` with geth's wording of the reason; the
dispatcher prefixes it with the argument's position (``invalid argument 0: ...``).
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidParams

_HEX = frozenset("0123456789abcdefABCDEF")


def quantity(value: int) -> str:
    return hex(value)


def data(value: bytes) -> str:
    return "0x" + value.hex()


def parse_quantity(value: Any, what: str = "quantity", *, bits: int = 256) -> int:
    """A ``0x``-prefixed hex number without leading zeros."""
    if not isinstance(value, str):
        raise InvalidParams(f"{what}: expected a hex string")
    if len(value) < 3 or value[:2] not in ("0x", "0X"):
        if value in ("0x", "0X"):
            raise InvalidParams("empty hex string")
        raise InvalidParams("hex string without 0x prefix")
    digits = value[2:]
    if len(digits) > 1 and digits[0] == "0":
        raise InvalidParams("hex number with leading zero digits")
    if not _HEX.issuperset(digits):
        raise InvalidParams("invalid hex string")
    number = int(digits, 16)
    if number.bit_length() > bits:
        raise InvalidParams(f"hex number > {bits} bits")
    return number


def parse_data(value: Any, what: str = "data", *, length: int | None = None) -> bytes:
    """``0x``-prefixed hex bytes of an even number of digits (``length`` bytes if given)."""
    if not isinstance(value, str):
        raise InvalidParams(f"{what}: expected a hex string")
    if value[:2] not in ("0x", "0X"):
        raise InvalidParams("hex string without 0x prefix")
    digits = value[2:]
    if len(digits) % 2:
        raise InvalidParams("hex string of odd length")
    if not _HEX.issuperset(digits):
        raise InvalidParams("invalid hex string")
    raw = bytes.fromhex(digits)
    if length is not None and len(raw) != length:
        raise InvalidParams(f"hex string has length {len(digits)}, want {2 * length} for {what}")
    return raw


def parse_hash(value: Any, what: str = "common.Hash") -> bytes:
    return parse_data(value, what, length=32)


def parse_address(value: Any, what: str = "common.Address") -> bytes:
    return parse_data(value, what, length=20)


def parse_storage_key(value: Any, what: str = "storage key") -> bytes:
    """A storage slot: hex of at most 32 bytes; odd lengths allowed as geth allows them."""
    if not isinstance(value, str) or value[:2] not in ("0x", "0X"):
        raise InvalidParams("hex string without 0x prefix")
    digits = value[2:]
    if len(digits) > 64:
        raise InvalidParams("hex string too long, want at most 32 bytes")
    if not _HEX.issuperset(digits):
        raise InvalidParams("invalid hex string")
    if len(digits) % 2:
        digits = "0" + digits
    return bytes.fromhex(digits)
