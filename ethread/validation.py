"""Checks on what Python callers hand the typed API, made where a value enters
(:mod:`ethread.methods`' functions, the request models' constructors): a wrong type or value
raises :class:`~ethread.errors.ArgumentTypeError` or :class:`~ethread.errors.ArgumentValueError`
(both ``InvalidParams``, and a ``TypeError`` or ``ValueError``), naming what to pass. The
JSON-RPC codec parses hex into these types first.
"""

from __future__ import annotations

from typing import Any

from .errors import ArgumentTypeError, ArgumentValueError

BLOCK_TAGS = ("latest", "earliest", "pending", "safe", "finalized")
"""The block tags the API takes (:data:`ethread.models.TAGS` is this tuple)."""
_TAG_LIST = ", ".join(BLOCK_TAGS)
MAX_BLOCK_NUMBER = (1 << 63) - 1


def _kind(value: Any) -> str:
    return type(value).__name__


def check_bytes(value: Any, what: str, length: int) -> bytes:
    """Exactly ``length`` bytes (bytes, bytearray or memoryview), else an error saying what to pass."""
    if type(value) is bytes:
        if len(value) != length:
            raise ArgumentValueError(f"{what}: expected {length} bytes, got {len(value)}")
        return value
    if isinstance(value, str):
        raise ArgumentTypeError(
            f"{what}: pass {length} bytes, not the string {value[:24]!r}; convert hex once "
            f"with bytes.fromhex(s[2:]) (or eth_utils.to_bytes(hexstr=s))")
    if isinstance(value, bytes | bytearray | memoryview):
        return check_bytes(bytes(value), what, length)
    raise ArgumentTypeError(f"{what}: pass {length} bytes, not {_kind(value)}")


def check_hash(value: Any, what: str = "hash") -> bytes:
    """A 32-byte hash argument, or a clear error naming ``what``."""
    return check_bytes(value, what, 32)


def check_address(value: Any, what: str = "address") -> bytes:
    """A 20-byte address argument, or a clear error naming ``what``."""
    return check_bytes(value, what, 20)


def check_data(value: Any, what: str = "data") -> bytes:
    """Bytes of any length; a hex string or another type gets an error saying what to pass."""
    if type(value) is bytes:
        return value
    if isinstance(value, str):
        raise ArgumentTypeError(f"{what}: pass bytes, not the string {value[:24]!r}")
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    raise ArgumentTypeError(f"{what}: pass bytes, not {_kind(value)}")


def check_int(value: Any, what: str, *, bits: int = 256) -> int:
    """A non-negative int of at most ``bits`` bits (bool and strings refused)."""
    if type(value) is not int:
        if isinstance(value, str):
            raise ArgumentTypeError(f"{what}: pass an int, not the string {value[:24]!r}")
        if isinstance(value, bool) or not isinstance(value, int):
            raise ArgumentTypeError(f"{what}: pass an int, not {_kind(value)}")
    if value < 0:
        raise ArgumentValueError(f"{what}: must not be negative, got {value}")
    if value >= 1 << bits:
        raise ArgumentValueError(f"{what}: must fit in {bits} bits")
    return int(value)


def check_optional_int(value: Any, what: str, *, bits: int = 256) -> int | None:
    """None, or what :func:`check_int` accepts."""
    return None if value is None else check_int(value, what, bits=bits)


def check_number_or_tag(value: Any, what: str = "block") -> int | str:
    """A block number (int) or one of the tags."""
    if type(value) is int:
        if value < 0:
            raise ArgumentValueError(f"{what}: a block number must not be negative, got {value}")
        if value > MAX_BLOCK_NUMBER:
            raise ArgumentValueError(f"{what}: block number larger than int64")
        return value
    if isinstance(value, str):
        if value in BLOCK_TAGS:
            return value
        stripped = value.strip().lower()
        if stripped.startswith("0x") or stripped.isdigit():
            raise ArgumentTypeError(
                f"{what}: pass the block number as an int, not the string {value!r} "
                f"(tags: {_TAG_LIST})")
        raise ArgumentValueError(f"{what}: unknown block tag {value!r}; tags are {_TAG_LIST}")
    raise ArgumentTypeError(f"{what}: pass an int block number or a tag ({_TAG_LIST}), "
                            f"not {_kind(value)}")


def check_index(value: Any, what: str = "index") -> int:
    """A non-negative index of at most 64 bits."""
    return check_int(value, what, bits=64)


def check_tuple(value: Any, what: str, item: str) -> tuple[Any, ...]:
    """A tuple (a list is taken and made one); a bare value or a string is refused."""
    if isinstance(value, tuple):
        return value
    if isinstance(value, list):
        return tuple(value)
    raise ArgumentTypeError(f"{what}: pass a tuple of {item}, not a bare {_kind(value)}")


def check_topics(value: Any) -> tuple[tuple[bytes, ...] | None, ...]:
    """Topic positions: each None (any topic) or a non-empty tuple of 32-byte topics (any of them)."""
    positions = check_tuple(value, "topics", "topic positions (None or a tuple of 32-byte topics)")
    out: list[tuple[bytes, ...] | None] = []
    for position, wanted in enumerate(positions):
        if wanted is None:
            out.append(None)
            continue
        if isinstance(wanted, bytes | bytearray | str):
            raise ArgumentTypeError(
                f"topics[{position}]: pass a tuple of 32-byte topics (or None for any), not a "
                f"bare {_kind(wanted)}; (topic,) matches exactly that topic")
        alternatives = check_tuple(wanted, f"topics[{position}]", "32-byte topics")
        if not alternatives:
            raise ArgumentValueError(f"topics[{position}]: an empty tuple matches nothing; "
                                     "pass None to match any topic")
        out.append(tuple(check_hash(t, f"topics[{position}]") for t in alternatives))
    return tuple(out)


def check_addresses(value: Any) -> tuple[bytes, ...]:
    """A tuple of 20-byte addresses, refusing a bare address (say ``(address,)``)."""
    if isinstance(value, bytes | bytearray | str):
        raise ArgumentTypeError("addresses: pass a tuple of 20-byte addresses, not a bare "
                                f"{_kind(value)}; (address,) for one")
    items = check_tuple(value, "addresses", "20-byte addresses")
    return tuple(check_address(a, "addresses") for a in items)


def check_instance(value: Any, cls: type, what: str) -> None:
    """Refuse anything but an instance of the model ``cls``, naming ``what``."""
    if not isinstance(value, cls):
        raise ArgumentTypeError(f"{what}: pass an ethread.models.{cls.__name__}, not {_kind(value)}")
