"""Write the frames of a block range as Parquet files, one per table.

``ethread export --format parquet`` calls :func:`export_parquet`: the range is read once per
chunk of blocks (every table of the chunk from one pass), and each chunk becomes a row group
of ``<folder>/<table>.parquet``, so memory stays bounded however long the range.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import EthreadError
from ..iteration import ReceiptRangeSource, check_range
from .extra import parquet
from .tables import TABLES, collect

CHUNK = 8192
"""Blocks per row group."""


def export_parquet(
    backend: ReceiptRangeSource,
    folder: str | Path,
    start: int,
    stop: int,
    *,
    tables: Iterable[str] = TABLES,
    progress: Callable[[int, int], None] | None = None,
) -> list[Path]:
    """Write ``<folder>/<table>.parquet`` for each of ``tables`` over ``range(start, stop)``;
    the paths written. ``progress`` is called with (blocks done, blocks in the range).

    Raises :class:`~ethread.errors.MissingBlocks` before writing anything when a block of the
    range is missing.
    """
    pq = parquet()
    names = list(dict.fromkeys(tables))
    check_range(backend, start, stop)
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    paths = {name: out / f"{name}.parquet" for name in names}
    writers: dict[str, Any] = {}
    try:
        for lo in range(start, max(stop, start + 1), CHUNK):
            hi = min(stop, lo + CHUNK)
            chunk = collect(backend, lo, hi, names, progress=False)
            for name, table in chunk.items():
                writer = writers.get(name)
                if writer is None:
                    writer = writers[name] = pq.ParquetWriter(paths[name], table.schema)
                elif not table.schema.equals(writer.schema):
                    raise EthreadError(_mismatch(name, writer.schema, table.schema, lo, hi))
                writer.write_table(table)
            if progress is not None:
                progress(hi - start, stop - start)
    finally:
        for writer in writers.values():
            writer.close()
    return [paths[name] for name in names]


def _mismatch(name: str, before: Any, now: Any, lo: int, hi: int) -> str:
    changed: Sequence[str] = [f.name for f in now if before.field(f.name).type != f.type]
    return (f"{name}: column(s) {', '.join(changed)} of blocks {lo}..{hi - 1} hold numbers wider "
            "than decimal128(38, 0), as exact text; export that range separately "
            "(--first/--last) or use ethread.frames from Python")
