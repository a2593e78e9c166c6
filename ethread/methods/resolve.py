"""Turn a block parameter (number, tag or hash) into a stored block, tags from the backend's
pointers (``pending`` is ``latest`` without a pool). Lookups that miss answer None;
:func:`require_header` raises.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..backend import ChainPointers, HeaderSource
from ..errors import ArgumentTypeError, HeaderNotFound
from ..models import BlockHashRef, BlockRef, Header
from ..validation import check_number_or_tag


def check_block_ref(value: Any, what: str = "block") -> BlockRef:
    """Refuse what is not a block number, a tag or a :class:`~ethread.models.BlockHashRef`
    (every method checks its block parameter here, through :func:`resolve_header`)."""
    if isinstance(value, BlockHashRef):
        return value
    if isinstance(value, bytes | bytearray):
        raise ArgumentTypeError(f"{what}: wrap a block hash as BlockHashRef(hash=...)")
    return check_number_or_tag(value, what)  # type: ignore[return-value]


class ChainHeaders(HeaderSource, ChainPointers, Protocol):
    """What resolving a block parameter reads: headers and the chain's pointers."""


def resolve_number(backend: ChainPointers, ref: int | str) -> int | None:
    """The block number a number or tag stands for (None on an empty store)."""
    if isinstance(ref, int):
        return ref
    if ref == "pending":
        ref = "latest"
    return backend.pointer(ref)  # type: ignore[arg-type]


def resolve_header(backend: ChainHeaders, ref: BlockRef) -> Header | None:
    """The header a block reference names, or None."""
    ref = check_block_ref(ref)
    if isinstance(ref, BlockHashRef):
        header = backend.header_by_hash(ref.hash)
        if header is None:
            return None
        if ref.require_canonical and backend.canonical_hash(header.number) != header.hash:
            return None
        return header
    number = resolve_number(backend, ref)
    return None if number is None else header_at(backend, number)


def header_at(backend: HeaderSource, number: int) -> Header | None:
    """The canonical header at ``number``, or None."""
    block_hash = backend.canonical_hash(number)
    return backend.header_by_hash(block_hash) if block_hash is not None else None


def resolve_hash(backend: ChainHeaders, ref: BlockRef) -> bytes | None:
    """The hash of the block a reference names, or None, without reading its header."""
    ref = check_block_ref(ref)
    if isinstance(ref, BlockHashRef):
        header = resolve_header(backend, ref)
        return None if header is None else header.hash
    number = resolve_number(backend, ref)
    return None if number is None else backend.canonical_hash(number)


def require_header(backend: ChainHeaders, ref: BlockRef) -> Header:
    """The header a block reference names; :class:`~ethread.errors.HeaderNotFound` if not held."""
    header = resolve_header(backend, ref)
    if header is None:
        if isinstance(ref, BlockHashRef):
            raise HeaderNotFound("header for hash not found")
        raise HeaderNotFound("header not found")
    return header

