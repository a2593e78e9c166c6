"""LevelDB (through plyvel) as a record store, and the backend over it.

LevelDB lets one process hold a store at a time (its own lock); a second one gets a
:class:`~ethread.errors.StoreError`. The key layout and everything above it live in
:mod:`ethread.backends.keyvalue`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import plyvel

from ..errors import StoreError
from .keyvalue import KeyValueBackend
from .records import Batch


class LevelDBStore:
    """A LevelDB directory at ``path``; ``create`` says whether a missing one may be made."""

    read_only = False

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = Path(path)
        if not create and not (self.path / "CURRENT").exists():
            raise StoreError(f"no ethread store at {self.path}")
        try:
            self._db = plyvel.DB(str(self.path), create_if_missing=create)
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

    def describe(self) -> str:
        return f"the store at {self.path}"

    def get(self, key: bytes) -> bytes | None:
        try:
            value: bytes | None = self._db.get(key)
        except plyvel.Error as exc:
            raise StoreError(f"the store at {self.path} failed a read: {exc}") from None
        except RuntimeError:
            raise StoreError(f"the store at {self.path} is closed") from None
        return value

    def keys(self, start: bytes, stop: bytes) -> Iterator[bytes]:
        try:
            iterator = self._db.iterator(start=start, stop=stop, include_value=False)
        except RuntimeError:
            raise StoreError(f"the store at {self.path} is closed") from None
        return iter(iterator)

    def write(self, batch: Batch) -> None:
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

    def compact(self) -> None:
        """Rewrite the files so that their size says what the data takes."""
        self._db.compact_range()

    def close(self) -> None:
        if not self._db.closed:
            self._db.close()


class LevelDBBackend(KeyValueBackend):
    """A chain with its state, stored in a LevelDB directory at ``path``."""

    def __init__(self, path: str | Path, *, create: bool = True, cache_blocks: int = 4096) -> None:
        self.path = Path(path)
        self._leveldb = LevelDBStore(self.path, create=create)
        super().__init__(self._leveldb, cache_blocks=cache_blocks)

    def compact(self) -> None:
        self._leveldb.compact()

    def __enter__(self) -> LevelDBBackend:
        return self
