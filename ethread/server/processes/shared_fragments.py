"""Answers the workers of one server share, so that each block is decoded by one of them
(docs/scaling.md, "Answers the workers share").

Each worker's :class:`~ethread.codec.serialize.FragmentCache` looks in an LMDB environment the
supervisor made before decoding, and puts there what it encoded (:class:`SharedFragmentStore`).
Names hold a block hash, so nothing goes stale. Bounded: a map of :data:`MAP_BYTES` that starts
over when full, no answer over :data:`MAX_SHARED_BYTES`. A cache only: a failing environment is
logged once and no longer used. Without the ``lmdb`` package nothing is shared.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

log = logging.getLogger("ethread.workers")

MAP_BYTES = 512 << 20
"""The shared environment's size: what the workers share before it starts over."""
MAX_SHARED_BYTES = 4 << 20
"""A larger answer stays in the worker that encoded it."""
_MAX_READERS = 1022


def make_directory() -> Path | None:
    """A new temporary directory for the workers' shared fragments, named after this process
    (None without the ``lmdb`` package); those left by killed supervisors are removed first."""
    try:
        import lmdb  # noqa: F401  # the extra that shares them
    except ImportError:
        return None
    _remove_orphans(Path(tempfile.gettempdir()))
    return Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-"))


_PREFIX = "ethread-shared-"


def _remove_orphans(folder: Path) -> None:
    for path in folder.glob(f"{_PREFIX}*-*"):
        pid = path.name[len(_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or not path.is_dir():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except OSError:
            pass  # a process of another user: running


class SharedFragmentStore:
    """An LMDB environment in ``path`` holding encoded JSON by name, for the processes that
    open it (each after any fork). :meth:`for_network` gives a network its own names."""

    def __init__(self, path: Path, map_bytes: int = MAP_BYTES) -> None:
        import lmdb

        self._errors: tuple[type[BaseException], ...] = (lmdb.Error,)
        self._full: type[BaseException] = lmdb.MapFullError
        self._env: Any = lmdb.open(str(path), map_size=map_bytes, subdir=True,
                                   max_readers=_MAX_READERS, max_dbs=0, sync=False,
                                   metasync=False, readahead=False, lock=True)
        self._env.reader_check()  # slots of a worker killed mid-read
        self._failed = False
        self._pending: dict[bytes, bytes] = {}
        """Put on the event loop's thread, written when its callback is done."""

    def for_network(self, name: str) -> NetworkFragments:
        """The names of network ``name``."""
        return NetworkFragments(self, hashlib.blake2b(name.encode(), digest_size=8).digest())

    def get(self, key: bytes) -> bytes | None:
        """The bytes under ``key``, or None (also once the environment has failed)."""
        if self._failed:
            return None
        try:
            with self._env.begin(buffers=False) as txn:
                value: bytes | None = txn.get(key)
        except self._errors as exc:
            self._fail(exc)
            return None
        return value

    def put(self, key: bytes, value: bytes) -> None:
        """Keep ``value`` under ``key``: on an event loop's thread, with the turn's other puts
        once the current callback is done (the answer is on its way); elsewhere at once."""
        if self._failed or len(value) > MAX_SHARED_BYTES:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._write({key: value})
            return
        if not self._pending:
            loop.call_soon(self._flush)
        self._pending[key] = value

    def _flush(self) -> None:
        pending, self._pending = self._pending, {}
        if not self._failed:
            self._write(pending)

    def _write(self, items: dict[bytes, bytes]) -> None:
        """``items`` in one write transaction; when the map is full, everything goes first."""
        env = self._env
        try:
            try:
                with env.begin(write=True) as txn:
                    for key, value in items.items():
                        txn.put(key, value)
            except self._full:
                # Emptied in a transaction of its own: its pages are free for a later one
                # (once no reader still holds them; until then these answers are not shared).
                with env.begin(write=True) as txn:
                    txn.drop(env.open_db(txn=txn), delete=False)
                with env.begin(write=True) as txn:
                    for key, value in items.items():
                        txn.put(key, value)
        except self._full:
            pass
        except self._errors as exc:
            self._fail(exc)

    def _fail(self, exc: BaseException) -> None:
        self._failed = True
        log.error("worker %d: the workers' shared answers failed (%s); each worker answers "
                  "from its own caches from now on", os.getpid(), exc)

    def close(self) -> None:
        """Write what is pending and close the environment (this process's handle)."""
        self._flush()
        self._env.close()


class NetworkFragments:
    """One network's names in a :class:`SharedFragmentStore`: the
    :class:`~ethread.codec.serialize.SharedFragments` its fragment cache is given."""

    __slots__ = ("_prefix", "_store")

    def __init__(self, store: SharedFragmentStore, prefix: bytes) -> None:
        self._store = store
        self._prefix = prefix

    def get(self, name: bytes) -> bytes | None:
        """The bytes another worker put under ``name``, or None."""
        return self._store.get(self._prefix + name)

    def put(self, name: bytes, encoded: bytes) -> None:
        """Give ``encoded`` to the other workers under ``name``."""
        self._store.put(self._prefix + name, encoded)
