"""What a storage engine provides: byte keys to byte values, read, scanned and written in
atomic batches. Everything Ethereum lives above (:mod:`ethread.backends.keyvalue`); an engine
is one small class over its library (:class:`ethread.backends.leveldb.LevelDBStore`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Protocol

from ..errors import StoreError, StoreUnreadable

log = logging.getLogger("ethread.store")

Batch = Mapping[bytes, "bytes | None"]
"""Puts (a value) and deletes (None), applied together."""


class RecordStore(Protocol):
    """A sorted byte-key store. Failures raise :class:`~ethread.errors.StoreError`; a read that
    fails on damaged data raises :class:`~ethread.errors.StoreUnreadable` (naming no server
    path), remembered in :attr:`failure`. A ``read_only`` store's :meth:`write` raises StoreError.
    """

    read_only: bool
    failure: str | None
    """What the first failed read said (None while every read has succeeded)."""
    shared: bool
    """Whether other processes may write the store while this one has it open."""
    path: Path

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""

    def describe(self) -> str:
        """Names the store in messages: "the store at /data/chain"."""

    def get(self, key: bytes) -> bytes | None:
        """The value at ``key``, or None."""

    def items(self) -> Iterator[tuple[bytes, bytes]]:
        """Every record in key order, with the engine's checksums verified."""

    def keys(self, start: bytes, stop: bytes) -> Iterator[bytes]:
        """Keys in ``[start, stop)``, in ascending byte order."""

    def write(self, batch: Batch) -> None:
        """Apply every put and delete of ``batch``, all or none (a crash included)."""

    def version(self) -> int:
        """A number that changes whenever any process commits a write (or a constant, for one process)."""

    def close(self) -> None:
        """Release the store; closing twice is harmless."""


def store_exists(path: Path, marker: str, *, create: bool) -> bool:
    """Whether an engine's store is at ``path`` (its ``marker`` file is there). When not,
    ``create`` must allow one and ``path`` be missing or empty: a store is never made over files."""
    if (path / marker).exists():
        return True
    if not create:
        raise StoreError(f"no ethread store at {path}")
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise StoreError(
            f"{path} is not empty but holds no complete store (no {marker} file): refusing "
            "to create a new store over it; restore the store or give an empty directory")
    return False


class Engine:
    """What the engines' stores share: their name in messages, and the error a failed read answers."""

    path: Path
    failure: str | None = None

    def describe(self) -> str:
        """Names the store in messages ("the store at PATH")."""
        return f"the store at {self.path}"

    def unreadable(self, exc: Exception, detail: str) -> StoreUnreadable:
        """The error a failed read answers, with ``detail`` (no store path; ``exc`` is logged)."""
        log.error("the store at %s failed a read: %s", self.path, exc)
        message = f"the chain store cannot be read: {detail or type(exc).__name__}"
        if self.failure is None:
            self.failure = message
        return StoreUnreadable(message)
