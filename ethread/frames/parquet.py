"""Write the frames of a block range as Parquet files, one per table (``ethread export --format
parquet``): each chunk of blocks is read in one pass and becomes a row group of
``<folder>/<table>.parquet``, so memory stays bounded. Several spans (:func:`held_spans`) are
written one after the other into the same files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import EthreadError
from ..iteration import ReceiptRangeSource, check_range, missing_blocks
from .extra import parquet
from .tables import TABLES, collect

CHUNK = 8192
"""Blocks per row group."""


def held_spans(backend: ReceiptRangeSource, start: int, stop: int) -> list[tuple[int, int]]:
    """The parts of ``range(start, stop)`` that ``backend`` holds, as ``(lo, hi)`` ranges."""
    spans: list[tuple[int, int]] = []
    at = start
    for first, last in missing_blocks(backend, start, stop):
        if first > at:
            spans.append((at, first))
        at = last + 1
    if at < stop:
        spans.append((at, stop))
    return spans


def export_parquet(
    backend: ReceiptRangeSource,
    folder: str | Path,
    start: int,
    stop: int,
    *,
    tables: Iterable[str] = TABLES,
    progress: Callable[[int, int], None] | None = None,
    spans: Sequence[tuple[int, int]] | None = None,
) -> list[Path]:
    """Write ``<folder>/<table>.parquet`` for each of ``tables`` over ``range(start, stop)``
    (or over each of ``spans``, e.g. :func:`held_spans`); the paths written. ``progress`` hears
    (blocks done, blocks in all). A missing block raises
    :class:`~ethread.errors.MissingBlocks` before anything is written."""
    pq = parquet()
    names = list(dict.fromkeys(tables))
    ranges = list(spans) if spans is not None else [(start, stop)]
    for lo, hi in ranges:
        check_range(backend, lo, hi)
    total = sum(hi - lo for lo, hi in ranges)
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    paths = {name: out / f"{name}.parquet" for name in names}
    writers: dict[str, Any] = {}
    done = 0
    try:
        for span_lo, span_hi in ranges or [(start, start)]:
            for lo in range(span_lo, max(span_hi, span_lo + 1), CHUNK):
                hi = min(span_hi, lo + CHUNK)
                chunk = collect(backend, lo, hi, names, progress=False)
                for name, table in chunk.items():
                    writer = writers.get(name)
                    if writer is None:
                        writer = writers[name] = pq.ParquetWriter(paths[name], table.schema)
                    elif not table.schema.equals(writer.schema):
                        raise EthreadError(_mismatch(name, writer.schema, table.schema, lo, hi))
                    writer.write_table(table)
                done += hi - lo
                if progress is not None:
                    progress(done, total)
    finally:
        for writer in writers.values():
            writer.close()
    return [paths[name] for name in names]


def _mismatch(name: str, before: Any, now: Any, lo: int, hi: int) -> str:
    changed: Sequence[str] = [f.name for f in now if before.field(f.name).type != f.type]
    return (f"{name}: column(s) {', '.join(changed)} of blocks {lo}..{hi - 1} hold numbers wider "
            "than decimal128(38, 0), as exact text; export that range separately "
            "(--first/--last) or use ethread.frames from Python")
