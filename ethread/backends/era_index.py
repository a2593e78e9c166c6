"""The sidecar index of an Era1 folder, in SQLite: block by hash, transaction by hash, senders,
and blocks by log address and topic, built the first time a file is seen, then only read.

Worker processes (``workers=``) decode units of a few megabytes of archive and recover the
senders (the slow part); this process writes their results in file order, one transaction per
file, so a build killed at any moment leaves only whole files and the next one resumes. A
file's accumulator is recomputed from its headers and checked before it is indexed.

Each complete file is recorded with a fingerprint (size, modification time, and a hash of its
last :data:`TAIL_BYTES`). A file whose size or tail changed, or another file in its place, is
indexed again (the :class:`BuildReport` says why); a file merely touched keeps its entries.
A build holds a lock file (``<index>.lock``): of several builders one builds, the others wait.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import math
import multiprocessing
import os
import signal
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, NamedTuple

import rlp
from eth_utils import keccak

from ..era1.accumulator import accumulator_root
from ..era1.archive import ArchiveFile, open_archive
from ..era1.e2store import FormatError
from ..errors import StoreError
from ..models import Address, Hash32
from ..progress import Progress
from ..rlpcodec.items import DecodeError
from ..rlpcodec.receipts import decode_consensus_receipts
from ..rlpcodec.senders import recover_senders
from .logindex import encode_log_record

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: builders rely on the per-file check alone
    fcntl = None  # type: ignore[assignment]

SCHEMA = """
CREATE TABLE IF NOT EXISTS files(name TEXT PRIMARY KEY, start INTEGER, count INTEGER,
                                 size INTEGER, mtime_ns INTEGER, tail BLOB);
CREATE TABLE IF NOT EXISTS blocks(number INTEGER PRIMARY KEY, hash BLOB NOT NULL,
                                  senders BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS blocks_by_hash ON blocks(hash);
CREATE TABLE IF NOT EXISTS txs(hash BLOB PRIMARY KEY, number INTEGER, position INTEGER)
    WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS log_address(address BLOB, number INTEGER,
                                       PRIMARY KEY(address, number)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS log_topic(position INTEGER, topic BLOB, number INTEGER,
                                     PRIMARY KEY(position, topic, number)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS log_blocks(number INTEGER PRIMARY KEY, logs BLOB);
"""

TAIL_BYTES = 512 * 1024
"""How much of a file's end its fingerprint hashes: the block index (up to 320 KiB for an
``ere`` file), the accumulator, and the last blocks' records."""

UNIT_BYTES = 4 * 1024 * 1024
"""About how much archive one unit of work covers, so that workers share even a folder of one file."""

POOL_BYTES = 32 * 1024 * 1024
"""Below this much archive to index, the default is this process alone (starting workers
takes about a second)."""


def default_workers() -> int:
    """The CPUs this process may run on (its affinity where the system tells)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - no affinity on this platform
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What the index records of a complete file, to notice when it changes."""

    size: int
    mtime_ns: int
    tail: bytes
    """sha256 of the file's last :data:`TAIL_BYTES` bytes."""


def tail_digest(path: Path, size: int) -> bytes:
    """sha256 of the last :data:`TAIL_BYTES` bytes of the file (all of it when shorter)."""
    with open(path, "rb") as handle:
        handle.seek(max(0, size - TAIL_BYTES))
        return hashlib.sha256(handle.read(TAIL_BYTES)).digest()


@dataclass(frozen=True, slots=True)
class BuildReport:
    """What one :meth:`HistoryIndex.build` did."""

    indexed: tuple[str, ...]
    """Files indexed by this build, in block order (the changed ones included)."""
    changed: tuple[tuple[str, str], ...]
    """(file name, why) of the files indexed again because they changed."""
    unchanged: int
    """Files found complete and unchanged, left as they were."""
    blocks: int
    """Blocks indexed by this build."""
    transactions: int
    """Transactions indexed by this build."""
    workers: int
    """Processes that did the work on the blocks (1: this process alone)."""
    seconds: float
    """How long the build took, the wait for another builder included."""
    cpu_seconds: float = 0.0
    """CPU time the work on the blocks took, in all the workers (the writer's not counted)."""


class _Block(NamedTuple):
    """What a worker found in one block, ready for the writer."""

    number: int
    hash: Hash32
    senders: bytes
    tx_hashes: list[Hash32]
    addresses: list[Address]
    topics: list[tuple[int, bytes]]
    logs: bytes | None
    accumulated: int | None
    """The total difficulty when the block counts in the file's accumulator, else None."""


class _Unit(NamedTuple):
    """One unit of work: blocks ``[lo, hi)`` of one file (``last``: it ends the file)."""

    path: str
    lo: int
    hi: int
    last: bool


class _Failure(NamedTuple):
    """A :class:`FormatError` raised in a worker, carried back as plain values (the exception
    does not survive pickling: its constructor takes three arguments)."""

    path: str
    offset: int
    detail: str


class _Done(NamedTuple):
    blocks: list[_Block]
    tail: bytes | None
    """The file's tail digest, from the unit that ends it."""
    cpu: float
    """CPU seconds the unit took in its process."""


_open_file: ArchiveFile | None = None


def _archive(path: str) -> ArchiveFile:
    """The archive at ``path``, kept open while consecutive units read it."""
    global _open_file
    if _open_file is None or str(_open_file.path) != path:
        _close_archive()
        _open_file = open_archive(path)
    return _open_file


def _close_archive() -> None:
    global _open_file
    if _open_file is not None:
        _open_file.close()
        _open_file = None


def _index_unit(unit: _Unit) -> _Done | _Failure:
    """Decode, hash and recover the senders of one unit's blocks."""
    began = time.process_time()
    try:
        era = _archive(unit.path)
        tail = tail_digest(era.path, era.size) if unit.last else None
        blocks = [_index_block(era, number) for number in range(unit.lo, unit.hi)]
        return _Done(blocks, tail, time.process_time() - began)
    except FormatError as exc:
        return _Failure(exc.path, exc.offset, exc.detail)
    except OSError as exc:
        return _Failure(unit.path, 0, f"cannot read: {exc.strerror or exc}")


def _index_block(era: ArchiveFile, number: int) -> _Block:
    header, body, receipts, td = era.raw_tuple(number)
    block_hash = keccak(header)
    try:
        fields = rlp.decode(header)
        # Era1's accumulator covers every block; ere's only the proof-of-work ones.
        counted = td is not None and (era.kind == "era1" or bool(fields[7]))
        senders = recover_senders(body)
        tx_items = rlp.decode(body)[0]
        consensus = decode_consensus_receipts(receipts) if receipts is not None else []
    except (DecodeError, rlp.DecodingError, IndexError) as exc:
        raise FormatError(str(era.path), era.offset(number), f"block {number}: {exc}") from None
    tx_hashes = [keccak(rlp.encode(item)) if isinstance(item, list) else keccak(item)
                 for item in tx_items]
    addresses: set[Address] = set()
    topics: set[tuple[int, bytes]] = set()
    entries = []
    for position, receipt in enumerate(consensus):
        raw_logs = [(log.address, [t.to_bytes(32, "big") for t in log.topics], log.data)
                    for log in receipt.logs]
        entries.append((position, tx_hashes[position], raw_logs))
        for address, log_topics, _ in raw_logs:
            addresses.add(address)
            topics.update(enumerate(log_topics))
    logs = None
    if addresses:
        timestamp = int.from_bytes(fields[11], "big")
        logs = encode_log_record(block_hash, timestamp, entries)
    return _Block(number, block_hash, b"".join(senders), tx_hashes, sorted(addresses),
                  sorted(topics), logs, td if counted else None)


def _worker_start(builder: Connection) -> None:
    """In each worker: leave Ctrl-C to the builder, and exit once the builder is gone (``builder``:
    the read end of a pipe whose write end only it holds; the forkserver parent outlives it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        with contextlib.suppress(EOFError, OSError):
            builder.poll(None)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="ethread-index-builder").start()


def forkserver_context(preload: list[str]) -> Any:
    """``forkserver`` with the modules ``preload`` imported once in the server (no inherited
    store handle, thread or lock, no import per worker); ``spawn`` where there is none."""
    try:
        context = multiprocessing.get_context("forkserver")
    except ValueError:  # pragma: no cover - no forkserver on this platform
        return multiprocessing.get_context("spawn")
    context.set_forkserver_preload(preload)
    return context


def _units(era: ArchiveFile, unit_bytes: int) -> list[_Unit]:
    pieces = max(1, min(era.count, math.ceil(era.size / unit_bytes)))
    edges = [era.start + era.count * i // pieces for i in range(pieces + 1)]
    path = str(era.path)
    return [_Unit(path, lo, hi, hi == era.end) for lo, hi in itertools.pairwise(edges)
            if lo < hi]


class HistoryIndex:
    """Hash, transaction, sender and log lookups over the files of one Era1 folder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, timeout=600, isolation_level=None,
                                       check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            # WAL without a sync at each commit: a power cut may lose the last files' commits
            # (they are indexed again), never leave half of one.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
            self._add_fingerprint_columns()
        except (OSError, sqlite3.Error) as exc:
            raise FormatError(str(path), 0, f"cannot open the Era1 index: {exc}") from None
        self._lock = threading.Lock()

    def _add_fingerprint_columns(self) -> None:
        """Add the fingerprint columns to an index written before them."""
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(files)")}
        for name, kind in (("size", "INTEGER"), ("mtime_ns", "INTEGER"), ("tail", "BLOB")):
            if name not in columns:
                self._db.execute(f"ALTER TABLE files ADD COLUMN {name} {kind}")

    def close(self) -> None:
        """Close the index's SQLite database."""
        self._db.close()

    def _one(self, sql: str, *args: object) -> tuple[Any, ...] | None:
        with self._lock:
            row: tuple[Any, ...] | None = self._db.execute(sql, args).fetchone()
            return row

    # -- building --------------------------------------------------------------------------

    def complete_files(self) -> dict[str, tuple[int, int, Fingerprint | None]]:
        """The files recorded as complete: name -> (first block, block count, fingerprint;
        None for a file indexed before fingerprints were kept)."""
        with self._lock:
            rows = self._db.execute("SELECT name, start, count, size, mtime_ns, tail FROM "
                                    "files").fetchall()
        return {name: (start, count, Fingerprint(size, mtime_ns, bytes(tail))
                       if size is not None else None)
                for name, start, count, size, mtime_ns, tail in rows}

    def stale(self, files: Sequence[ArchiveFile]) -> list[tuple[ArchiveFile, str | None]]:
        """The files of ``files`` the index does not hold as they are now, in order, each with
        why (None for a file never indexed). Reads a file's tail only when its time changed
        and its size did not; records a touched or unfingerprinted file's fingerprint."""
        done = self.complete_files()
        todo: list[tuple[ArchiveFile, str | None]] = []
        for era in files:
            name = era.path.name
            stat = os.stat(era.path)
            entry = done.get(name)
            if entry is None:
                overlap = [other for other, (start, count, _) in done.items()
                           if start < era.end and era.start < start + count]
                todo.append((era, f"replaces {', '.join(sorted(overlap))}" if overlap else None))
                continue
            start, count, known = entry
            if (start, count) != (era.start, era.count):
                todo.append((era, f"now holds blocks {era.start}..{era.end - 1}, indexed as "
                                  f"{start}..{start + count - 1}"))
            elif known is None:
                self._record_fingerprint(name, Fingerprint(
                    stat.st_size, stat.st_mtime_ns, tail_digest(era.path, stat.st_size)))
            elif known.size != stat.st_size:
                todo.append((era, f"its size changed from {known.size} to {stat.st_size} "
                                  "bytes"))
            elif known.mtime_ns != stat.st_mtime_ns:
                if tail_digest(era.path, stat.st_size) != known.tail:
                    todo.append((era, "its content changed (the hash of its block index and "
                                      "last blocks differs)"))
                else:
                    self._record_fingerprint(name, Fingerprint(known.size, stat.st_mtime_ns,
                                                               known.tail))
        return todo

    def _record_fingerprint(self, name: str, print_: Fingerprint) -> None:
        """Keep an unchanged file's new fingerprint; an index that cannot be written (on
        read-only media) hashes the file's tail again at the next open instead."""
        with self._lock, contextlib.suppress(sqlite3.OperationalError):
            self._db.execute("UPDATE files SET size = ?, mtime_ns = ?, tail = ? WHERE name = ?",
                             (print_.size, print_.mtime_ns, print_.tail, name))

    @contextlib.contextmanager
    def _build_lock(self) -> Iterator[None]:
        """Held while building: a second builder waits here. The lock dies with its process."""
        if fcntl is None:  # pragma: no cover
            yield
            return
        lock_path = Path(f"{self.path}.lock")
        try:
            handle = open(lock_path, "a+b")  # noqa: SIM115 - closed by the with below
        except OSError as exc:
            raise StoreError(f"cannot open the Era1 index's lock file {lock_path}: "
                             f"{exc.strerror}") from None
        with handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def build(self, files: Sequence[ArchiveFile], *, workers: int | None = None,
              progress: Progress | None = None, unit_bytes: int = UNIT_BYTES) -> BuildReport:
        """Index every file of ``files`` (in block order) that the index does not hold as it is
        now; return what was done.

        ``workers`` processes (default :func:`default_workers`, or 1 below :data:`POOL_BYTES`
        of archive; 1 works in this process) decode the blocks; ``progress`` hears of the
        blocks done. A damaged file raises :class:`~ethread.era1.e2store.FormatError`; the
        files before it stay indexed. Workers import the main module: a script that opens an
        unindexed folder must guard its entry point (``if __name__ == "__main__":``), or pass
        ``workers=1``.
        """
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        if unit_bytes < 1:
            raise ValueError(f"unit_bytes must be at least 1, not {unit_bytes}")
        began = time.monotonic()
        if not self.stale(files):  # the common case: no lock, no wait
            return BuildReport((), (), len(files), 0, 0, 1, time.monotonic() - began)
        if getattr(multiprocessing.current_process(), "_inheriting", False):
            # A worker importing an unguarded main script that opens this folder: it would
            # wait for the lock its parent holds while the parent waits for it.
            raise StoreError(f"the Era1 index {self.path} is being built by the process that "
                             "started this one: guard the script's entry point with "
                             "if __name__ == \"__main__\":")
        with self._build_lock():
            todo = self.stale(files)  # again: another builder may have done some
            units = [unit for era, _ in todo for unit in _units(era, unit_bytes)]
            if workers is None:
                big = sum(era.size for era, _ in todo) >= POOL_BYTES
                workers = default_workers() if big else 1
            count = max(1, min(workers, len(units)))
            total = sum(era.count for era, _ in todo)
            written, cpu = self._write(todo, units, count, total, progress)
        return BuildReport(
            indexed=tuple(era.path.name for era, _ in todo),
            changed=tuple((era.path.name, why) for era, why in todo if why is not None),
            unchanged=len(files) - len(todo), blocks=total, transactions=written,
            workers=count, seconds=time.monotonic() - began, cpu_seconds=cpu)

    def _results(self, units: list[_Unit], workers: int) -> Iterator[_Done | _Failure]:
        """The units' results in order, from this process or a pool with few units in flight."""
        if workers == 1:
            try:
                yield from map(_index_unit, units)
            finally:
                _close_archive()
            return
        context = forkserver_context(["ethread.backends.era_index"])
        alive, held = context.Pipe(duplex=False)
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=context,
                                   initializer=_worker_start, initargs=(alive,))
        pending: deque[Future[_Done | _Failure]] = deque()
        queued = iter(units)
        try:
            for unit in queued:
                pending.append(pool.submit(_index_unit, unit))
                if len(pending) >= 3 * workers:
                    break
            while pending:
                try:
                    result = pending.popleft().result()
                except BrokenProcessPool:
                    raise StoreError(
                        f"a worker process building the Era1 index {self.path} died (killed, "
                        "out of memory, or a script that opens the folder without "
                        "if __name__ == \"__main__\": see its error above); the files done "
                        "are kept: run again to resume, or with one worker") from None
                for unit in queued:
                    pending.append(pool.submit(_index_unit, unit))
                    break
                yield result
        finally:
            # Stopped early (an error, Ctrl-C, the writer done with a failure): drop the rest.
            # A running unit is a few megabytes of work; the workers then exit.
            for future in pending:
                future.cancel()
            pool.shutdown(wait=True, cancel_futures=True)
            alive.close()
            held.close()

    def _write(self, todo: list[tuple[ArchiveFile, str | None]], units: list[_Unit],
               workers: int, total: int, progress: Progress | None) -> tuple[int, float]:
        """Write the results of ``units`` file by file; (transactions written, worker CPU seconds)."""
        by_path = {str(era.path): era for era, _ in todo}
        results = self._results(units, workers)
        done = transactions = 0
        cpu = 0.0
        try:
            era: ArchiveFile | None = None
            blocks: list[_Block] = []
            for unit, result in zip(units, results, strict=True):
                if isinstance(result, _Failure):
                    raise FormatError(result.path, result.offset, result.detail)
                if era is None:
                    era = by_path[unit.path]
                blocks.extend(result.blocks)
                cpu += result.cpu
                done += unit.hi - unit.lo
                if unit.last:
                    assert result.tail is not None
                    transactions += self._index_file(era, blocks, result.tail)
                    era, blocks = None, []
                if progress is not None:
                    progress(done, total)
        finally:
            results.close()  # type: ignore[attr-defined]
        return transactions, cpu

    def _index_file(self, era: ArchiveFile, blocks: list[_Block], tail: bytes) -> int:
        """Check the file's accumulator, then write it in one transaction; its transaction count."""
        stored = era.accumulator()
        records = [(b.hash, b.accumulated) for b in blocks if b.accumulated is not None]
        if stored is not None and accumulator_root(records) != stored:
            raise FormatError(str(era.path), era.size - 1,
                              "corrupted: the accumulator recomputed from the headers and total "
                              "difficulties differs from the one the file stores")
        stat = os.stat(era.path)
        lo, hi = era.start, era.end - 1
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                overlapping = db.execute("SELECT name FROM files WHERE start <= ? AND "
                                         "start + count > ?", (hi, lo)).fetchall()
                if overlapping:  # a changed or replaced file: its old entries go first
                    db.execute("DELETE FROM files WHERE start <= ? AND start + count > ?",
                               (hi, lo))
                    for table in ("blocks", "txs", "log_address", "log_topic", "log_blocks"):
                        db.execute(f"DELETE FROM {table} WHERE number BETWEEN ? AND ?", (lo, hi))
                transactions = 0
                for block in blocks:
                    number = block.number
                    db.execute("INSERT OR REPLACE INTO blocks VALUES (?, ?, ?)",
                               (number, block.hash, block.senders))
                    db.executemany("INSERT OR REPLACE INTO txs VALUES (?, ?, ?)",
                                   [(h, number, i) for i, h in enumerate(block.tx_hashes)])
                    transactions += len(block.tx_hashes)
                    if block.logs is not None:
                        db.executemany("INSERT OR IGNORE INTO log_address VALUES (?, ?)",
                                       [(a, number) for a in block.addresses])
                        db.executemany("INSERT OR IGNORE INTO log_topic VALUES (?, ?, ?)",
                                       [(p, t, number) for p, t in block.topics])
                        db.execute("INSERT OR IGNORE INTO log_blocks VALUES (?, ?)",
                                   (number, block.logs))
                db.execute("INSERT INTO files VALUES (?, ?, ?, ?, ?, ?)",
                           (era.path.name, era.start, era.count, stat.st_size,
                            stat.st_mtime_ns, tail))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return transactions

    # -- reading ---------------------------------------------------------------------------

    def number_of(self, block_hash: Hash32) -> int | None:
        """The number of the block with this hash, or None if it is not indexed."""
        row = self._one("SELECT number FROM blocks WHERE hash = ?", block_hash)
        return int(row[0]) if row is not None else None

    def hash_at(self, number: int) -> Hash32 | None:
        """The hash of block ``number``, or None if no indexed file holds it."""
        row = self._one("SELECT hash FROM blocks WHERE number = ?", number)
        return bytes(row[0]) if row is not None else None

    def senders(self, number: int) -> list[Address] | None:
        """The senders of block ``number``'s transactions in order, or None."""
        row = self._one("SELECT senders FROM blocks WHERE number = ?", number)
        if row is None:
            return None
        blob = bytes(row[0])
        return [blob[i:i + 20] for i in range(0, len(blob), 20)]

    def senders_between(self, lo: int, hi: int) -> dict[int, bytes]:
        """The senders of every indexed block in ``[lo, hi]``, 20 bytes each concatenated, by number."""
        with self._lock:
            rows = self._db.execute("SELECT number, senders FROM blocks WHERE number BETWEEN ? "
                                    "AND ?", (lo, hi)).fetchall()
        return {int(number): bytes(senders) for number, senders in rows}

    def transaction(self, tx_hash: Hash32) -> tuple[int, int] | None:
        """(block number, index in block) of the transaction with this hash, or None."""
        row = self._one("SELECT number, position FROM txs WHERE hash = ?", tx_hash)
        return (int(row[0]), int(row[1])) if row is not None else None

    def _numbers(self, sql: str, *args: object) -> Iterator[int]:
        with self._lock:
            rows = self._db.execute(sql, args).fetchall()
        return (int(r[0]) for r in rows)

    def blocks_with_address(self, address: Address, lo: int, hi: int) -> Iterator[int]:
        """Numbers of the blocks in ``[lo, hi]`` holding a log emitted by ``address``."""
        return self._numbers("SELECT number FROM log_address WHERE address = ? AND number "
                             "BETWEEN ? AND ? ORDER BY number", address, lo, hi)

    def blocks_with_topic(self, position: int, topic: Hash32, lo: int, hi: int) -> Iterator[int]:
        """Numbers of the blocks in ``[lo, hi]`` holding a log with ``topic`` at ``position``."""
        return self._numbers("SELECT number FROM log_topic WHERE position = ? AND topic = ? AND "
                             "number BETWEEN ? AND ? ORDER BY number", position, topic, lo, hi)

    def blocks_with_logs(self, lo: int, hi: int) -> Iterator[int]:
        """Numbers of the blocks in ``[lo, hi]`` holding any log, ascending."""
        return self._numbers("SELECT number FROM log_blocks WHERE number BETWEEN ? AND ? "
                             "ORDER BY number", lo, hi)

    def block_logs(self, number: int) -> bytes | None:
        """The block's compact log record, or None."""
        row = self._one("SELECT logs FROM log_blocks WHERE number = ?", number)
        return None if row is None or row[0] is None else bytes(row[0])
