"""How the fields of a decoded RLP record are read: strictly, for bytes from outside, or on
trust, for a store's own records.

Each kind of record has one decoder; the :class:`Rules` it is given say how much each field is
checked. :data:`STRICT` (a chain file, a raw transaction, an archive being indexed): canonical
integers, 20-byte addresses, 32-byte hashes, and the error messages eth_sendRawTransaction and
import answer with. :data:`TRUSTED` (records ethread wrote and checked at import): only the
shape, so that a damaged record raises instead of answering a wrong value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..models import Address, Hash32
from .items import DecodeError


@dataclass(frozen=True, slots=True)
class Rules:
    """The readers a record decoder applies to its fields."""

    record: Callable[[Any, int, str, Sequence[int]], list[Any]]
    """``(item, count, wrong, lists_at)``: ``item`` as a list of ``count`` fields (else
    DecodeError ``wrong``, which may name ``{got}``), strings but at ``lists_at``."""
    sequence: Callable[[Any], list[Any]]
    """An item that must be a list."""
    uint: Callable[[Any], int]
    """A big-endian integer."""
    string: Callable[[Any], bytes]
    """A string of any length."""
    exact: Callable[[Any, int], bytes]
    """A string of the given length."""
    to: Callable[[Any], Address | None]
    """A recipient: 20 bytes, or empty for a contract creation (None)."""
    hashes: Callable[[Any], tuple[Hash32, ...]]
    """A list of 32-byte hashes."""


# -- Strict: bytes from outside --------------------------------------------------------------------


def _strict_list(raw: Any) -> list[Any]:
    if not isinstance(raw, list):
        raise DecodeError("expected an RLP list")
    return raw


def _strict_record(raw: Any, count: int, wrong: str, lists_at: Sequence[int]) -> list[Any]:
    fields = _strict_list(raw)
    if len(fields) != count:
        raise DecodeError(wrong.format(got=len(fields)))
    return fields  # each field's reader checks it is a string


def _strict_uint(raw: Any) -> int:
    if not isinstance(raw, bytes):
        raise DecodeError("expected an RLP string for an integer, got a list")
    if raw[:1] == b"\x00":
        raise DecodeError("integer with leading zero bytes")
    return int.from_bytes(raw, "big")


def _strict_string(raw: Any) -> bytes:
    if not isinstance(raw, bytes):
        raise DecodeError("expected an RLP string, got a list")
    return raw


def _strict_exact(raw: Any, length: int) -> bytes:
    data = _strict_string(raw)
    if len(data) != length:
        raise DecodeError(f"expected {length} bytes, got {len(data)}")
    return data


def _strict_to(raw: Any) -> Address | None:
    data = _strict_string(raw)
    if not data:
        return None
    if len(data) != 20:
        raise DecodeError("recipient must be 20 bytes or empty")
    return data


def _strict_hashes(raw: Any) -> tuple[Hash32, ...]:
    return tuple(_strict_exact(h, 32) for h in _strict_list(raw))


STRICT = Rules(record=_strict_record, sequence=_strict_list, uint=_strict_uint,
               string=_strict_string, exact=_strict_exact, to=_strict_to, hashes=_strict_hashes)
"""Every field checked: for bytes from outside (a chain file, a raw transaction, an archive)."""


# -- Trusted: a store's own records ----------------------------------------------------------------


def _trusted_list(raw: Any) -> list[Any]:
    if type(raw) is not list:
        raise DecodeError("expected an RLP list")
    return raw


def _trusted_record(raw: Any, count: int, wrong: str, lists_at: Sequence[int]) -> list[Any]:
    if type(raw) is not list:
        raise DecodeError("expected an RLP list")
    if len(raw) != count:
        raise DecodeError(wrong.format(got=len(raw)))
    start = 0
    for at in lists_at:  # the strings between the lists (each list's reader checks it)
        if list in map(type, raw[start:at]):
            break
        start = at + 1
    else:
        if list not in map(type, raw[start:] if start else raw):
            return raw
    raise DecodeError("a record's field that must be a string is a list")


def _same(raw: Any) -> Any:
    return raw


def _same_exact(raw: Any, length: int) -> Any:
    return raw


def _or_none(raw: Any) -> Any:
    return raw or None


def _trusted_hashes(raw: Any) -> tuple[Hash32, ...]:
    return tuple(_trusted_list(raw))


TRUSTED = Rules(record=_trusted_record, sequence=_trusted_list, uint=int.from_bytes,
                string=_same, exact=_same_exact, to=_or_none, hashes=_trusted_hashes)
"""The shape checked, the values taken as they are: for records ethread wrote itself."""
