"""LevelDB (through plyvel) as a record store, and the backend over it (key layout:
:mod:`ethread.backends.keyvalue`).

One process holds a store at a time; a second gets a :class:`~ethread.errors.StoreError`.
Stores open with ``paranoid_checks`` and every read verifies checksums, so damaged files raise
:class:`~ethread.errors.StoreUnreadable` (naming no server path) rather than answer a missing
record. Only an absent or empty directory becomes a new store: one with files but no
``CURRENT`` is damaged, and LevelDB would "create" over it, deleting its tables.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..extras import install_hint

try:
    import plyvel
except ImportError as _missing:  # the leveldb extra is optional: say how to get it
    raise ImportError("ethread's LevelDB backend needs plyvel, which is not installed: "
                      f"{install_hint('leveldb')}", name="plyvel") from _missing

from ..errors import StoreError, StoreUnreadable
from .keyvalue import KeyValueBackend
from .records import Batch, Engine, store_exists

_PATHS = re.compile(r"/[^\s:,'\"]+")


class LevelDBStore(Engine):
    """A LevelDB directory at ``path``; ``create`` says whether a missing one may be made."""

    read_only = False
    shared = False

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = Path(path)
        exists = store_exists(self.path, "CURRENT", create=create)
        if not exists:
            try:
                self.path.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create a store at {self.path}: {exc.strerror}") from None
        try:
            self._db = plyvel.DB(str(self.path), create_if_missing=not exists,
                                 paranoid_checks=True)
        except plyvel.IOError as exc:
            text = str(exc)
            if "lock" in text.lower():
                raise StoreError(
                    f"the store at {self.path} is in use by another process "
                    "(LevelDB allows one process at a time)"
                ) from None
            raise StoreError(f"cannot open the store at {self.path}: {text}") from None
        except plyvel.Error as exc:
            raise StoreError(f"the store at {self.path} is damaged: {exc}") from None

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return bool(self._db.closed)

    def get(self, key: bytes) -> bytes | None:
        """The value at ``key``, or None; checksums are verified."""
        try:
            value: bytes | None = self._db.get(key, verify_checksums=True)
        except plyvel.Error as exc:
            raise self._unreadable(exc) from None
        except RuntimeError:
            raise StoreError(f"the store at {self.path} is closed") from None
        return value

    def keys(self, start: bytes, stop: bytes) -> Iterator[bytes]:
        """The keys in ``[start, stop)``, in order."""
        try:
            iterator = self._db.iterator(start=start, stop=stop, include_value=False,
                                         verify_checksums=True)
        except RuntimeError:
            raise StoreError(f"the store at {self.path} is closed") from None
        return self._checked(iterator)

    def items(self) -> Iterator[tuple[bytes, bytes]]:
        """Every record in key order, checksums verified (for ``ethread verify --db``)."""
        return self._checked(self._db.iterator(verify_checksums=True, fill_cache=False))

    def _checked(self, iterator: Iterator[Any]) -> Iterator[Any]:
        try:
            yield from iterator
        except plyvel.Error as exc:
            raise self._unreadable(exc) from None

    def _unreadable(self, exc: Exception) -> StoreUnreadable:
        said = exc.args[0] if exc.args else ""
        detail = said.decode("utf-8", "replace") if isinstance(said, bytes) else str(said)
        return self.unreadable(exc, _PATHS.sub("", detail.replace(str(self.path), "")).strip(" :"))

    def write(self, batch: Batch) -> None:
        """Apply a batch of puts and deletes (None values) atomically."""
        try:
            with self._db.write_batch(transaction=True) as writer:
                for key, value in batch.items():
                    if value is None:
                        writer.delete(key)
                    else:
                        writer.put(key, value)
        except plyvel.Error as exc:
            raise StoreError(f"the store at {self.path} failed a write: {exc}") from None
        except RuntimeError:
            raise StoreError(f"the store at {self.path} is closed") from None

    def version(self) -> int:
        """Always 0: a LevelDB store is opened by one process, so it never sees changes made elsewhere."""
        return 0  # one process at a time: this backend made every change it could see

    def compact(self) -> None:
        """Rewrite the files so that their size says what the data takes."""
        self._db.compact_range()

    def close(self) -> None:
        """Close the database and release its lock."""
        if not self._db.closed:
            self._db.close()


class LevelDBBackend(KeyValueBackend):
    """A chain with its state, stored in a LevelDB directory at ``path``."""

    def __init__(self, path: str | Path, *, create: bool = True, cache_blocks: int = 4096) -> None:
        self.path = Path(path)
        self._leveldb = LevelDBStore(self.path, create=create)
        super().__init__(self._leveldb, cache_blocks=cache_blocks)

    def compact(self) -> None:
        """Compact the LevelDB files (reclaims space after a large import)."""
        self._leveldb.compact()
