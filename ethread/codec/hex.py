"""Hex quantities and data, strictly, the way geth reads them: parsers raise
:class:`~ethread.errors.InvalidParams` in geth's words.
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidParams, go_json_type

_HEX = frozenset("0123456789abcdefABCDEF")


def parse_quantity(value: Any, what: str = "quantity", *, bits: int = 256) -> int:
    """A ``0x``-prefixed hex number without leading zeros."""
    if not isinstance(value, str):
        raise InvalidParams(f"{what}: expected a hex string")
    if len(value) < 3 or value[:2] not in ("0x", "0X"):
        if value in ("0x", "0X"):
            raise InvalidParams('hex string "0x"')  # (hexutil's ErrEmptyNumber)
        if value == "":
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
    try:
        raw = bytes.fromhex(digits)
    except ValueError:
        raise InvalidParams("invalid hex string") from None
    if 2 * len(raw) != len(digits):  # (fromhex skips whitespace between bytes; geth does not)
        raise InvalidParams("invalid hex string")
    if length is not None and len(raw) != length:
        raise InvalidParams(f"hex string has length {len(digits)}, want {2 * length} for {what}")
    return raw


def parse_hash(value: Any, what: str = "common.Hash") -> bytes:
    """A 32-byte hash from ``0x`` hex; InvalidParams (-32602) otherwise."""
    return parse_data(value, what, length=32)


def parse_address(value: Any, what: str = "common.Address") -> bytes:
    """A 20-byte address from ``0x`` hex; InvalidParams (-32602) otherwise."""
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


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
               "\v": "\\v"}


def go_quote(text: str) -> str:
    """A string as Go's ``%q`` writes it (printable text: double quotes, escaped)."""
    out = ['"']
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char in _GO_ESCAPES:
            out.append(_GO_ESCAPES[char])
        elif char.isprintable():
            out.append(char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) < 0x10000:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    out.append('"')
    return "".join(out)


def _unmarshal_error(detail: str, typename: str) -> InvalidParams:
    return InvalidParams(f"json: cannot unmarshal {detail} into Go value of type {typename}")


def wrong_type(value: Any, typename: str) -> InvalidParams:
    """geth's refusal of a JSON value of another type than the Go type ``typename`` reads."""
    return _unmarshal_error(go_json_type(value), typename)


def _hex_digits(value: Any, typename: str) -> str:
    """The digits of a top-level hex argument, refused as geth's JSON decoder refuses one."""
    if not isinstance(value, str):
        raise _unmarshal_error("non-string", typename)
    if value[:2] not in ("0x", "0X"):
        raise _unmarshal_error("hex string without 0x prefix", typename)
    if len(value) % 2:
        raise _unmarshal_error("hex string of odd length", typename)
    return value[2:]


def parse_fixed_param(value: Any, length: int, typename: str) -> bytes:
    """A top-level hash or address argument in geth's JSON decoder's words (a bad length unwrapped)."""
    if value == "":
        raise InvalidParams(f"hex string has length 0, want {2 * length} for {typename}")
    digits = _hex_digits(value, typename)
    if len(digits) != 2 * length:
        raise InvalidParams(f"hex string has length {len(digits)}, want {2 * length} for {typename}")
    if not _HEX.issuperset(digits):
        raise _unmarshal_error("invalid hex string", typename)
    return bytes.fromhex(digits)


def parse_hash_param(value: Any) -> bytes:
    """A hash parameter, with the error text geth gives a malformed one."""
    return parse_fixed_param(value, 32, "common.Hash")


def parse_address_param(value: Any) -> bytes:
    """An address parameter, with the error text geth gives a malformed one."""
    return parse_fixed_param(value, 20, "common.Address")


def parse_bytes_param(value: Any, typename: str = "hexutil.Bytes") -> bytes:
    """A top-level ``hexutil.Bytes`` argument: any even number of hex digits, ``""`` for none."""
    if value == "":
        return b""
    digits = _hex_digits(value, typename)
    if not _HEX.issuperset(digits):
        raise _unmarshal_error("invalid hex string", typename)
    return bytes.fromhex(digits)


def parse_string_param(value: Any) -> str:
    """A string parameter, refusing any other JSON type as geth does."""
    if not isinstance(value, str):
        raise wrong_type(value, "string")
    return value


def decode_storage_key(text: str) -> bytes:
    """A storage slot as geth reads one for eth_getStorageAt and eth_getProof: ``0x`` optional,
    an odd digit count padded, at most 32 bytes, the length given kept. The error names the
    key, without an argument position, as geth does."""
    digits = text[2:] if text[:2] in ("0x", "0X") else text
    if len(digits) % 2:
        digits = "0" + digits
    if len(digits) > 64:
        raise InvalidParams(f"storage key too long (want at most 32 bytes): {go_quote(text)}")
    if not _HEX.issuperset(digits):
        raise InvalidParams(f"invalid hex in storage key: {go_quote(text)}")
    return bytes.fromhex(digits)
