"""LMDB as a record store, and the backend over it.

LMDB keeps the store in one memory-mapped file (``data.mdb``, ``lock.mdb`` beside it): many
processes read while one writes, each write transaction applied whole (a ``kill -9``
included). :meth:`LMDBStore.version` tells readers cheaply that something changed. The map
size (1 TiB by default, ``map_size=``) bounds the sparse file's growth; a writer that fills it
doubles it, a reader that finds the file grown adopts the new size. The key layout lives in
:mod:`ethread.backends.keyvalue`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import cast

from ..extras import install_hint

try:
    import lmdb
except ImportError as _missing:  # the lmdb extra is optional: say how to get it
    raise ImportError("ethread's LMDB backend needs lmdb, which is not installed: "
                      f"{install_hint('lmdb')}", name="lmdb") from _missing

from ..errors import StoreError, StoreUnreadable
from .keyvalue import KeyValueBackend
from .records import Batch, Engine, store_exists

DEFAULT_MAP_SIZE = 1 << 40
"""1 TiB of address space; the file itself holds only what is written."""
_MAX_READERS = 1022
"""Read transactions open at once across every process (threads of a server included)."""


class LMDBStore(Engine):
    """An LMDB environment in the directory ``path``; ``create``: a missing store may be made."""

    read_only = False
    shared = True
    """Other processes may write while this one reads (see :meth:`version`)."""

    def __init__(self, path: str | Path, *, create: bool = True,
                 map_size: int = DEFAULT_MAP_SIZE) -> None:
        self.path = Path(path)
        store_exists(self.path, "data.mdb", create=create)
        try:
            self._env = lmdb.open(str(self.path), map_size=map_size, subdir=True,
                                  create=create, max_readers=_MAX_READERS, max_dbs=0,
                                  metasync=False, readahead=False, lock=True)
        except lmdb.Error as exc:
            raise StoreError(f"cannot open the store at {self.path}: {exc}") from None
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._closed

    def _begin(self, write: bool = False) -> lmdb.Transaction:
        if self._closed:
            raise StoreError(f"the store at {self.path} is closed")
        try:
            return self._env.begin(write=write, buffers=False)
        except lmdb.MapResizedError:
            # Another process grew the map past ours: take the size the file now has.
            self._env.set_mapsize(0)
            return self._env.begin(write=write, buffers=False)

    def get(self, key: bytes) -> bytes | None:
        """The value at ``key``, or None."""
        try:
            with self._begin() as txn:
                value = cast("bytes | None", txn.get(key))
        except lmdb.Error as exc:
            raise self._unreadable(exc) from None
        return value

    def get_many(self, keys: tuple[bytes, ...]) -> list[bytes | None]:
        """The values at ``keys`` (None where absent), read in one transaction."""
        try:
            with self._begin() as txn:
                values = cast("list[bytes | None]", list(map(txn.get, keys)))
        except lmdb.Error as exc:
            raise self._unreadable(exc) from None
        return values

    def keys(self, start: bytes, stop: bytes) -> Iterator[bytes]:
        """The keys in ``[start, stop)``, in order, read in one transaction."""
        try:
            txn = self._begin()
        except lmdb.Error as exc:
            raise self._unreadable(exc) from None
        return self._scan(txn, start, stop)

    def _scan(self, txn: lmdb.Transaction, start: bytes, stop: bytes) -> Iterator[bytes]:
        try:
            cursor = txn.cursor()
            if not cursor.set_range(start):
                return
            for key in cursor.iternext(keys=True, values=False):
                if cast(bytes, key) >= stop:
                    return
                yield cast(bytes, key)
        except lmdb.Error as exc:
            raise self._unreadable(exc) from None
        finally:
            txn.abort()

    def items(self) -> Iterator[tuple[bytes, bytes]]:
        """Every record in key order, in one read transaction (LMDB keeps no checksums)."""
        try:
            txn = self._begin()
        except lmdb.Error as exc:
            raise self._unreadable(exc) from None
        try:
            for key, value in txn.cursor().iternext(keys=True, values=True):
                yield cast(bytes, key), cast(bytes, value)
        except lmdb.Error as exc:
            raise self._unreadable(exc) from None
        finally:
            txn.abort()

    def _unreadable(self, exc: Exception) -> StoreUnreadable:
        return self.unreadable(exc, str(exc).replace(str(self.path), "").strip(" :"))

    def write(self, batch: Batch) -> None:
        """Apply puts and deletes (None values) in one write transaction, growing a full map."""
        while True:
            try:
                with self._begin(write=True) as txn:
                    for key, value in batch.items():
                        if value is None:
                            txn.delete(key)
                        else:
                            txn.put(key, value)
                return
            except lmdb.MapFullError:
                self._env.set_mapsize(self._env.info()["map_size"] * 2)
            except lmdb.Error as exc:
                raise StoreError(f"the store at {self.path} failed a write: {exc}") from None

    def version(self) -> int:
        """LMDB's last committed transaction id: it moves whenever any process writes."""
        if self._closed:
            raise StoreError(f"the store at {self.path} is closed")
        last: int = self._env.info()["last_txnid"]
        return last

    def size(self) -> int:
        """Bytes the data takes (pages in use), not the sparse file's length."""
        info, stat = self._env.info(), self._env.stat()
        used: int = (info["last_pgno"] + 1) * stat["psize"]
        return used

    def close(self) -> None:
        """Close the environment (idempotent)."""
        if not self._closed:
            self._closed = True
            self._env.close()


class LMDBBackend(KeyValueBackend):
    """A chain with its state, stored in an LMDB directory at ``path``; other processes may
    serve it while this one imports (and this one sees their blocks)."""

    holds_history_in_memory = True
    """Memory-mapped, readers never wait (:class:`~ethread.backend.HistoryInMemory`)."""

    def __init__(self, path: str | Path, *, create: bool = True, cache_blocks: int = 4096,
                 map_size: int = DEFAULT_MAP_SIZE) -> None:
        self.path = Path(path)
        self.store: LMDBStore = LMDBStore(self.path, create=create, map_size=map_size)
        super().__init__(self.store, cache_blocks=cache_blocks)
