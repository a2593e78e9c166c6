"""Every core: a range shared among processes, its tables concatenated in order.

A range is cut where the work divides naturally: at archive files on an Era backend (a part
never crosses a file; a file is cut in block ranges only when there are fewer files than
parts wanted), and into equal block ranges on an LMDB store (which any number of processes
may read at once). Each part runs in a
worker process that opens the same backend again from :func:`opener` and builds its tables by
the bulk path (:mod:`.bulk`); the parent concatenates the parts in block order, so the result
equals the one-process table row for row.

Workers are forks of a ``forkserver`` process that imported the frames once (a clean
interpreter: no inherited store handles, threads or locks, and no import paid per worker);
the first use starts that server, about two seconds. As with any ``multiprocessing`` code, a
script that asks for workers must guard its entry point (``if __name__ == "__main__":``):
the workers import the main module.
"""

from __future__ import annotations

import functools
import itertools
import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from ..backends.era import EraBackend
from ..backends.leveldb import LevelDBBackend
from ..backends.lmdb import LMDBBackend
from .extra import pyarrow


def opener(backend: Any) -> Callable[[], Any]:
    """A picklable function that opens ``backend`` again in another process."""
    if isinstance(backend, EraBackend):
        return functools.partial(EraBackend, backend.folder, config=backend.chain_config(),
                                 index_path=backend.index_path)
    if isinstance(backend, LMDBBackend):
        return functools.partial(LMDBBackend, backend.path, create=False)
    if isinstance(backend, LevelDBBackend):
        raise ValueError("a LevelDB store is locked by the process that opened it: copy it to "
                         "LMDB for several workers (ethread copy --db SRC --to DST --engine "
                         "lmdb), or read it with workers=1")
    raise ValueError(f"workers > 1 reads Era1/ere archives or an LMDB store; "
                     f"{type(backend).__name__} is read in this process (workers=1)")


def parts(backend: Any, start: int, stop: int, workers: int) -> list[tuple[int, int]]:
    """``range(start, stop)`` cut into ``(lo, hi)`` parts, in order, about two per worker (so
    that a slow part does not hold up the rest). On an Era backend no part crosses an archive
    file: each file's blocks make one part, or several when there are fewer files than parts
    wanted (a process then maps the same file and reads its own blocks of it)."""
    wanted = max(1, 2 * workers)
    if isinstance(backend, EraBackend):
        files = backend.file_ranges(start, stop)
        total = sum(hi - lo for lo, hi in files)
        cut: list[tuple[int, int]] = []
        for lo, hi in files:
            pieces = max(1, round(wanted * (hi - lo) / total)) if workers > 1 else 1
            cut.extend(_even(lo, hi, pieces))
        return cut
    return _even(start, stop, wanted)


def _even(start: int, stop: int, count: int) -> list[tuple[int, int]]:
    count = max(1, min(stop - start, count))
    edges = [start + (stop - start) * i // count for i in range(count + 1)]
    return [(lo, hi) for lo, hi in itertools.pairwise(edges) if lo < hi]


def _part(open_backend: Callable[[], Any], lo: int, hi: int, names: Sequence[str]
          ) -> dict[str, Any]:
    from .bulk import tables_of_records

    backend = open_backend()
    try:
        needs_receipts = "receipts" in names or "logs" in names
        return tables_of_records(backend.raw_blocks(lo, hi, receipts=needs_receipts), names,
                                 backend.chain_config())
    finally:
        backend.close()


def concat(tables: Sequence[Any]) -> Any:
    """Tables of consecutive parts as one. A column that one part had to build as exact
    decimal strings (a number past ``decimal128``) is turned into strings in every part."""
    pa = pyarrow()
    if not tables:
        raise ValueError("no tables to concatenate")
    first = tables[0].schema
    if all(t.schema.equals(first) for t in tables[1:]):
        return pa.concat_tables(tables)
    widened = {name for name in first.names
               if any(t.schema.field(name).type != first.field(name).type for t in tables)}
    fixed = []
    for t in tables:
        for name in widened:
            at = t.schema.get_field_index(name)
            if t.schema.field(name).type != pa.string():
                t = t.set_column(at, name, t.column(name).cast(pa.string()))
        fixed.append(t)
    return pa.concat_tables(fixed)


def _context() -> Any:
    """``forkserver`` with the frames' modules imported once in the server: each worker then
    starts as a fork of a clean process that has them (milliseconds, where ``spawn`` imports
    ethread, py-evm and pyarrow again, about 2 s of CPU a worker); ``spawn`` where there is no
    forkserver."""
    try:
        context = multiprocessing.get_context("forkserver")
    except ValueError:  # pragma: no cover - no forkserver on this platform
        return multiprocessing.get_context("spawn")
    context.set_forkserver_preload(["ethread.frames.bulk", "ethread.frames.parallel"])
    return context


def collect_parallel(backend: Any, start: int, stop: int, names: Sequence[str], workers: int,
                     bar: Any = None) -> dict[str, Any]:
    """Tables ``names`` of ``range(start, stop)`` built by ``workers`` processes."""
    open_backend = opener(backend)
    pieces = parts(backend, start, stop, workers)
    context = _context()
    with ProcessPoolExecutor(max_workers=min(workers, len(pieces)), mp_context=context) as pool:
        futures = [pool.submit(_part, open_backend, lo, hi, list(names)) for lo, hi in pieces]
        results = []
        for (lo, hi), future in zip(pieces, futures, strict=True):
            results.append(future.result())
            if bar is not None:
                bar.update(hi - lo)
    return {name: concat([r[name] for r in results]) for name in names}
