"""Blocks of a range, in order, with gaps reported rather than skipped.

    for block in ethread.iter_blocks(backend, 0, 1000):   # blocks 0..999, as range() counts
        ...

Unlike single-block lookups, which answer None, :func:`check_range` raises
:class:`~ethread.errors.MissingBlocks` naming every missing span before any block is read, and
the iterators raise it should a block vanish while they run.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol, TypeGuard, runtime_checkable

from .backend import BlockSource, ChainPointers, HeaderSource, ReceiptSource
from .errors import MissingBlocks
from .models import Block, Receipt


@runtime_checkable
class GapSource(Protocol):
    """A backend whose held blocks may have holes (Era1 archives with a file missing)."""

    def missing_ranges(self, start: int, stop: int) -> list[tuple[int, int]]:
        """Inclusive ``(first, last)`` spans of ``range(start, stop)`` not held, in order."""


_GAPPY: dict[type, bool] = {}


def may_have_gaps(backend: object) -> TypeGuard[GapSource]:
    """Whether ``backend`` is a :class:`GapSource`, decided once per backend class."""
    kind = type(backend)
    known = _GAPPY.get(kind)
    if known is None:
        known = _GAPPY[kind] = isinstance(backend, GapSource)
    return known


class RangeSource(HeaderSource, BlockSource, ChainPointers, Protocol):
    """What walking a range of blocks reads from a backend."""


class ReceiptRangeSource(RangeSource, ReceiptSource, Protocol):
    """What walking a range of blocks with their receipts reads."""


def missing_blocks(backend: RangeSource, start: int, stop: int) -> list[tuple[int, int]]:
    """The inclusive ``(first, last)`` spans of ``range(start, stop)`` that ``backend`` lacks."""
    _check_bounds(start, stop)
    if start == stop:
        return []
    earliest = backend.pointer("earliest")
    latest = backend.pointer("latest")
    if earliest is None or latest is None:
        return [(start, stop - 1)]
    missing: list[tuple[int, int]] = []
    if start < earliest:
        missing.append((start, min(stop, earliest) - 1))
    lo, hi = max(start, earliest), min(stop, latest + 1)
    if lo < hi and may_have_gaps(backend):
        missing.extend(backend.missing_ranges(lo, hi))
    if stop > latest + 1:
        missing.append((max(start, latest + 1), stop - 1))
    return missing


def check_range(backend: RangeSource, start: int, stop: int) -> None:
    """Raise :class:`~ethread.errors.MissingBlocks` unless ``backend`` holds all the range."""
    missing = missing_blocks(backend, start, stop)
    if missing:
        raise MissingBlocks(missing, _held(backend))


def iter_blocks(backend: RangeSource, start: int, stop: int) -> Iterator[Block]:
    """The canonical blocks ``start, start + 1, ..., stop - 1`` in order; the range is checked
    now, not when iteration begins (:class:`~ethread.errors.MissingBlocks` naming a gap)."""
    check_range(backend, start, stop)
    return _blocks(backend, start, stop)


def iter_blocks_with_receipts(
    backend: ReceiptRangeSource, start: int, stop: int
) -> Iterator[tuple[Block, tuple[Receipt, ...]]]:
    """Like :func:`iter_blocks`, each block with its receipts (in transaction order)."""
    check_range(backend, start, stop)
    return _with_receipts(backend, start, stop)


def _blocks(backend: RangeSource, start: int, stop: int) -> Iterator[Block]:
    for number in range(start, stop):
        block_hash = backend.canonical_hash(number)
        block = backend.block_by_hash(block_hash) if block_hash is not None else None
        if block is None:
            raise MissingBlocks([(number, number)], _held(backend))
        yield block


def _with_receipts(
    backend: ReceiptRangeSource, start: int, stop: int
) -> Iterator[tuple[Block, tuple[Receipt, ...]]]:
    for block in _blocks(backend, start, stop):
        receipts = backend.receipts(block.hash)
        if receipts is None:
            raise MissingBlocks([(block.number, block.number)],
                                f"block {block.number} is held without its receipts")
        yield block, receipts


def _check_bounds(start: int, stop: int) -> None:
    for name, value in (("start", start), ("stop", stop)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be a block number (int), not {type(value).__name__}")
        if value < 0:
            raise ValueError(f"{name} must not be negative (got {value})")
    if stop < start:
        raise ValueError(f"stop ({stop}) is before start ({start}); the range is start..stop-1")


def _held(backend: RangeSource) -> str:
    earliest, latest = backend.pointer("earliest"), backend.pointer("latest")
    if latest is None:
        return "the backend holds no blocks"
    gaps = may_have_gaps(backend) and backend.missing_ranges(earliest or 0, latest + 1)
    held = f"the backend holds blocks {earliest}..{latest}"
    return held + (" with gaps between its archives" if gaps else "")
