"""What a fork fetched and checked, in memory or in an LMDB file later forks read again. Keys
start with the chain id and block number (8 bytes each):

- ``a`` + address: the account's RLP ``[nonce, balance, storage root, code hash]``, or empty
  for an account that does not exist;
- ``s`` + address + slot (32 bytes): the slot's value (32 bytes);
- ``c`` + code hash: the code (content-addressed: shared by every block of the chain).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

DEFAULT_MAP_SIZE = 8 * 1024**3
"""The most an LMDB fork cache may grow to (address space only, not disk)."""


class ForkCache(Protocol):
    """A byte store of verified fork data."""

    def get(self, key: bytes) -> bytes | None:
        """The value stored under ``key``, or None if none is."""
        ...

    def put_many(self, items: Mapping[bytes, bytes]) -> None:
        """Store every key and value of ``items``, in one write."""
        ...


class MemoryCache:
    """A dict: what one process fetched, forgotten at exit."""

    def __init__(self) -> None:
        self._items: dict[bytes, bytes] = {}
        self._lock = threading.Lock()

    def get(self, key: bytes) -> bytes | None:
        """The value stored under ``key``, or None if none is."""
        return self._items.get(key)

    def put_many(self, items: Mapping[bytes, bytes]) -> None:
        """Store every key and value of ``items``."""
        with self._lock:
            self._items.update(items)

    def __len__(self) -> int:
        return len(self._items)


class LMDBCache:
    """An LMDB environment in directory ``path``, which processes may share (the ``lmdb`` extra)."""

    def __init__(self, path: str | Path, map_size: int = DEFAULT_MAP_SIZE) -> None:
        try:
            import lmdb
        except ImportError as missing:
            raise ImportError("a fork cache on disk needs lmdb: pip install 'ethread[lmdb]'",
                              name="lmdb") from missing
        Path(path).mkdir(parents=True, exist_ok=True)
        self._env: Any = lmdb.open(str(path), map_size=map_size, subdir=True, max_dbs=0)

    def get(self, key: bytes) -> bytes | None:
        """The value stored under ``key`` (read in a transaction of its own), or None."""
        with self._env.begin(buffers=False) as txn:
            value = txn.get(key)
        return None if value is None else bytes(value)

    def put_many(self, items: Mapping[bytes, bytes]) -> None:
        """Store every key and value of ``items`` in one write transaction."""
        if not items:
            return
        with self._env.begin(write=True) as txn:
            for key, value in items.items():
                txn.put(key, value)

    def close(self) -> None:
        """Close the environment; the cache is not to be used after."""
        self._env.close()


def open_cache(path: str | Path | None) -> ForkCache:
    """An LMDB cache in ``path``, or one in memory for None."""
    return MemoryCache() if path is None else LMDBCache(path)


__all__ = ["DEFAULT_MAP_SIZE", "ForkCache", "LMDBCache", "MemoryCache", "open_cache"]
