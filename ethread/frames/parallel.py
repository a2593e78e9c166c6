"""Every core: a range shared among processes, its tables concatenated in order.

A range is cut at archive files on an Era backend (a file is cut in block ranges only when
there are fewer files than parts wanted), into equal block ranges on an LMDB store. Several
parts per worker are handed out as workers become free, so a slowed worker delays little.
Each part runs in a worker that opens the backend again from :func:`opener` and builds its
tables by the bulk path (:mod:`.bulk`); the parent concatenates them in block order, so the
result equals the one-process table row for row.

A worker hands its tables back as Arrow IPC files in shared memory (``/dev/shm``), which the
parent maps without copying and unlinks at once (pickling through a pipe cost the parent a
copy of every byte); a part that finds no shared memory or no room comes back pickled.

Workers are forks of a ``forkserver`` that imported the frames once (about two seconds at
first use). A script that asks for workers must guard its entry point
(``if __name__ == "__main__":``); without it the call raises :class:`WorkersFailed`. A range
too small to gain (:func:`worth_workers`) is read in the calling process.
"""

from __future__ import annotations

import functools
import itertools
import multiprocessing
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, NamedTuple

from ..backends.era import EraBackend
from ..backends.era_index import forkserver_context
from .extra import pyarrow


def _is(backend: Any, module: str, name: str) -> bool:
    """Whether ``backend`` is ``module.name``'s, without importing that module (and its engine,
    plyvel or lmdb, which an Era reader need not have)."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(backend, getattr(loaded, name))


def opener(backend: Any) -> Callable[[], Any]:
    """A picklable function that opens ``backend`` again in another process."""
    if isinstance(backend, EraBackend):
        return functools.partial(EraBackend, backend.folder, config=backend.chain_config(),
                                 index_path=backend.index_path)
    if _is(backend, "ethread.backends.lmdb", "LMDBBackend"):
        from ..backends.lmdb import LMDBBackend  # (imported already: backend is one)

        return functools.partial(LMDBBackend, backend.path, create=False)
    if _is(backend, "ethread.backends.leveldb", "LevelDBBackend"):
        raise ValueError("a LevelDB store is locked by the process that opened it: copy it to "
                         "LMDB for several workers (ethread copy --db SRC --to DST --engine "
                         "lmdb), or read it with workers=1")
    raise ValueError(f"workers > 1 reads Era1/ere archives or an LMDB store; "
                     f"{type(backend).__name__} is read in this process (workers=1)")


PARALLEL_FROM_BYTES = 64 * 2**20
"""Archive bytes a range must span for ``workers`` above 1 to use them: below it, starting the
forkserver and its workers costs more than they save (over a small range, two workers took
longer than one process; ``benchmarks/bench_frames.py`` measures both)."""

PARALLEL_FROM_BLOCKS = 16_384
"""The same for a store, whose bytes per block are not known in advance: blocks of the range."""


def worth_workers(backend: Any, start: int, stop: int) -> bool:
    """Whether ``range(start, stop)`` is big enough to share among processes: by archive
    bytes on an Era backend, else by blocks."""
    if isinstance(backend, EraBackend):
        spanned = 0.0
        for era in backend.files():
            lo, hi = max(start, era.start), min(stop, era.end)
            if lo < hi:
                spanned += era.size * (hi - lo) / max(1, era.end - era.start)
        return spanned >= PARALLEL_FROM_BYTES
    return stop - start >= PARALLEL_FROM_BLOCKS


class WorkersFailed(RuntimeError):
    """A worker process died before handing back its part (not an error of the chain data)."""


def _guard_hint() -> str:
    main = sys.modules.get("__main__")
    script = getattr(main, "__file__", None)
    if script:
        return (f"ethread's workers import the script that started them ({script}), as "
                "every multiprocessing worker does: its code that asks for workers must run "
                "only under `if __name__ == \"__main__\":` (see "
                "https://docs.python.org/3/library/multiprocessing.html#the-spawn-and-forkserver"
                "-start-methods), or pass workers=1")
    return "it was killed (out of memory?); pass fewer workers, or workers=1"


def _refuse_while_bootstrapping() -> None:
    """Refuse workers asked for in a worker importing its parent's unguarded main module."""
    process = multiprocessing.current_process()
    if multiprocessing.parent_process() is not None and getattr(process, "_inheriting", False):
        raise WorkersFailed("ethread.frames was asked for workers while a worker process was "
                            "starting: " + _guard_hint())


PARTS_PER_WORKER = 8
"""Parts a range is cut into per worker: with several each, a worker that is slowed down (or
a part that holds more transactions) leaves the others at most one small part to wait for."""

SHARED_MEMORY = Path("/dev/shm")
"""Where a worker writes its tables for the parent to map (a tmpfs on Linux)."""

SHARED_RESERVE = 256 * 2**20
"""Bytes of shared memory a worker leaves free for others: a part whose tables would eat into
them is sent back pickled instead."""


def parts(backend: Any, start: int, stop: int, workers: int) -> list[tuple[int, int]]:
    """``range(start, stop)`` cut into ``(lo, hi)`` parts, in order: one per archive file with
    a single worker, else about :data:`PARTS_PER_WORKER` per worker. On an Era backend no part
    crosses an archive file."""
    wanted = PARTS_PER_WORKER * workers if workers > 1 else 1
    if isinstance(backend, EraBackend):
        files = backend.file_ranges(start, stop)
        total = sum(hi - lo for lo, hi in files)
        cut: list[tuple[int, int]] = []
        for lo, hi in files:
            cut.extend(_even(lo, hi, max(1, round(wanted * (hi - lo) / total))))
        return cut
    return _even(start, stop, wanted)


def _even(start: int, stop: int, count: int) -> list[tuple[int, int]]:
    count = max(1, min(stop - start, count))
    edges = [start + (stop - start) * i // count for i in range(count + 1)]
    return [(lo, hi) for lo, hi in itertools.pairwise(edges) if lo < hi]


class _Mapped(NamedTuple):
    """A table a worker wrote to an Arrow IPC file for the parent to map."""

    path: str


def read_part(open_backend: Callable[[], Any], lo: int, hi: int, names: Sequence[str],
          shared: str | None = None) -> dict[str, Any]:
    """The tables ``names`` of ``range(lo, hi)``, each written to the folder ``shared`` when
    it has room (a :class:`_Mapped`), else the table itself."""
    from .bulk import tables_of_records

    backend = open_backend()
    try:
        needs_receipts = "receipts" in names or "logs" in names
        tables = tables_of_records(backend.raw_blocks(lo, hi, receipts=needs_receipts), names,
                                   backend.chain_config())
    finally:
        backend.close()
    if shared is None:
        return tables
    return {name: _hand_back(table, Path(shared) / f"{lo}-{hi}-{name}.arrow")
            for name, table in tables.items()}


def _hand_back(table: Any, path: Path) -> Any:
    """``table`` written to ``path`` as an Arrow IPC file when its folder has room for it."""
    pa = pyarrow()
    if shutil.disk_usage(path.parent).free - table.nbytes < SHARED_RESERVE:
        return table
    try:
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
    except OSError:  # full after all (another process took the room): send it
        path.unlink(missing_ok=True)
        return table
    return _Mapped(str(path))


def _received(value: Any) -> Any:
    """A worker's table: mapped from its file (unlinked at once), or as it came."""
    if not isinstance(value, _Mapped):
        return value
    pa = pyarrow()
    table = pa.ipc.open_file(pa.memory_map(value.path)).read_all()
    os.unlink(value.path)
    return table


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


PRELOAD = ["ethread.frames.bulk", "ethread.frames.parallel", "numpy", "pyarrow", "pyarrow.ipc",
           "pandas"]
"""What the forkserver imports once for every worker: the frames, and what they import only
when first used (numpy, pyarrow; and pandas, which pyarrow imports, when installed, the first
time it makes an array from a list); a module that is not installed is skipped. Without them,
each worker's first part spent most of its time importing, in every call with workers."""


def _shared_folder() -> str | None:
    """A fresh folder in shared memory for the workers' tables, or None where there is none."""
    if not (SHARED_MEMORY.is_dir() and os.access(SHARED_MEMORY, os.W_OK)):
        return None
    return tempfile.mkdtemp(prefix="ethread-frames-", dir=SHARED_MEMORY)


def collect_parallel(backend: Any, start: int, stop: int, names: Sequence[str], workers: int,
                     bar: Any = None) -> dict[str, Any]:
    """Tables ``names`` of ``range(start, stop)`` built by ``workers`` processes."""
    _refuse_while_bootstrapping()
    open_backend = opener(backend)
    pieces = parts(backend, start, stop, workers)
    context = forkserver_context(PRELOAD)
    shared = _shared_folder()
    pool = ProcessPoolExecutor(max_workers=min(workers, len(pieces)), mp_context=context)
    try:
        futures = [pool.submit(read_part, open_backend, lo, hi, list(names), shared)
                   for lo, hi in pieces]
        results = []
        for (lo, hi), future in zip(pieces, futures, strict=True):
            try:
                done = future.result()
            except BrokenProcessPool:
                raise WorkersFailed("a worker process ended before handing back its part: "
                                    + _guard_hint()) from None
            results.append({name: _received(value) for name, value in done.items()})
            if bar is not None:
                bar.update(hi - lo)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        if shared is not None:
            shutil.rmtree(shared, ignore_errors=True)
    return {name: concat([r[name] for r in results]) for name in names}
