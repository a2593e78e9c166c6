"""The frames as Dask DataFrames: the same extraction on many machines.

    from ethread.frames import dask as fd
    txs = fd.dataframe(archive, "transactions")    # one partition per archive file
    fd.to_parquet(archive, "/data/parquet")        # <table>/<first>-<last>.parquet per partition

Each partition is one archive file of an Era backend (Era1 or ``ere``) or one block range of an
LMDB store, read on a worker by the bulk path (:mod:`ethread.frames.bulk`): the whole frame
equals the table ``ethread.frames`` builds for the range. Columns keep their Arrow types
(``pandas.ArrowDtype``). Needs the ``dask`` extra; every worker needs ethread and the same
archive folder or store path. Why Dask rather than Ray: docs/notebooks.md.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..extras import install_hint
from ..iteration import check_range
from .bulk import SPECS, tables_of_records
from .extra import MissingExtra
from .parallel import opener, parts, read_part

STORE_PARTITION = 8192
"""Blocks per partition of an LMDB store (an archive file holds as many)."""


def _dask() -> Any:
    try:
        import dask.dataframe as dd
    except ImportError as exc:
        raise MissingExtra("ethread.frames.dask needs dask, which is not installed: "
                           f"{install_hint('dask')}") from exc
    return dd


def _pandas(table: Any) -> Any:
    import pandas as pd  # type: ignore[import-untyped]

    return table.to_pandas(types_mapper=pd.ArrowDtype)


def _partition(open_backend: Callable[[], Any], name: str, block_range: tuple[int, int]) -> Any:
    """One partition: the table ``name`` of ``range(*block_range)``, as pandas."""
    return _pandas(read_part(open_backend, *block_range, [name])[name])


def partitions(backend: Any, start: int | None = None, stop: int | None = None,
               blocks_per_partition: int = STORE_PARTITION) -> list[tuple[int, int]]:
    """The block ranges of the partitions: each archive file's blocks in ``range(start, stop)``
    on an Era backend, ranges of ``blocks_per_partition`` on a store (default: all held)."""
    first = backend.pointer("earliest") if start is None else start
    last = backend.pointer("latest") + 1 if stop is None else stop
    if hasattr(backend, "file_ranges"):
        return parts(backend, first, last, 1)
    check_range(backend, first, last)
    return [(lo, min(last, lo + blocks_per_partition))
            for lo in range(first, last, blocks_per_partition)]


def dataframe(backend: Any, name: str, start: int | None = None, stop: int | None = None,
              *, blocks_per_partition: int = STORE_PARTITION) -> Any:
    """The table ``name`` (any of :data:`~ethread.frames.TABLES`) of ``backend`` as a Dask
    DataFrame, one partition per archive file (or per ``blocks_per_partition`` store blocks)."""
    dd = _dask()
    if name not in SPECS:
        raise ValueError(f"no table {name!r}; the tables are {', '.join(SPECS)}")
    ranges = partitions(backend, start, stop, blocks_per_partition)
    if not ranges:
        raise ValueError("no blocks in that range")
    meta = _pandas(tables_of_records([], [name], None)[name])
    read = functools.partial(_partition, opener(backend), name)
    return dd.from_map(read, ranges, meta=meta, divisions=None,
                       label=f"ethread-{name}", enforce_metadata=False)


def to_parquet(backend: Any, folder: str | Path, names: Iterable[str] = ("blocks",
               "transactions", "receipts", "logs"), start: int | None = None,
               stop: int | None = None, *, blocks_per_partition: int = STORE_PARTITION,
               compute: bool = True) -> list[Path]:
    """Write each table ``names`` as ``<folder>/<table>/<first>-<last>.parquet``, one file per
    partition (numbers zero-padded to nine digits, so names sort); the folders written."""
    ranges = partitions(backend, start, stop, blocks_per_partition)
    written = []
    for name in names:
        target = Path(folder) / name
        frame = dataframe(backend, name, start, stop, blocks_per_partition=blocks_per_partition)
        frame.to_parquet(target, name_function=_namer(ranges), write_index=False,
                         compute=compute)
        written.append(target)
    return written


def _namer(ranges: Sequence[tuple[int, int]]) -> Callable[[int], str]:
    def name(i: int) -> str:
        lo, hi = ranges[i]
        return f"{lo:09d}-{hi - 1:09d}.parquet"
    return name
