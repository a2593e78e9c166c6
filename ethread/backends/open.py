"""Open a persistent backend from command-line style arguments (``--db`` or ``--era``).

Exactly one source must be named: a missing or ambiguous choice is an error, never a silent
fallback to another backend. A store's engine is read from the files the engine itself
leaves in the directory (LevelDB's ``CURRENT``, LMDB's ``data.mdb``), never guessed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..errors import StoreError

if TYPE_CHECKING:
    from ..forks import ChainConfig
    from .era import EraBackend
    from .keyvalue import KeyValueBackend

Engine = Literal["leveldb", "lmdb"]
ENGINES: tuple[Engine, ...] = ("leveldb", "lmdb")
_MARKERS: dict[Engine, str] = {"leveldb": "CURRENT", "lmdb": "data.mdb"}


def store_engine(path: str | Path) -> Engine | None:
    """The engine of the store at ``path``, or None when the directory holds no store; StoreError
    when it carries the marks of both engines."""
    found = [engine for engine, marker in _MARKERS.items() if (Path(path) / marker).exists()]
    if len(found) > 1:
        raise StoreError(f"{path} holds files of both a LevelDB and an LMDB store: "
                         "it is not one ethread store")
    return found[0] if found else None


def open_store(path: str | Path, *, engine: Engine | None = None,
               create: bool = False) -> KeyValueBackend:
    """The key-value backend over the store at ``path``, in the engine it was written with;
    ``engine`` names the engine of a store to create (default LevelDB), and must match an
    existing one's."""
    held = store_engine(path)
    if held is None:
        if not create:
            raise StoreError(f"no ethread store at {path}")
        held = engine or "leveldb"
    elif engine is not None and engine != held:
        raise StoreError(f"the store at {path} is a {held} store, not {engine}")
    try:
        if held == "lmdb":
            from .lmdb import LMDBBackend

            return LMDBBackend(path, create=create)
        from .leveldb import LevelDBBackend
    except ImportError as exc:  # the engine's extra is not installed: the message says which
        raise StoreError(str(exc)) from None
    return LevelDBBackend(path, create=create)


def open_backend(
    db: str | Path | None = None,
    era: str | Path | None = None,
    *,
    config: ChainConfig | None = None,
    create: bool = False,
) -> KeyValueBackend | EraBackend:
    """The key-value backend over the store ``db``, or an :class:`EraBackend` over the Era1
    folder ``era`` (with ``config`` when its network is not a known one). Raises
    :class:`~ethread.errors.StoreError` when the store is missing, held elsewhere or damaged."""
    if (db is None) == (era is None):
        raise StoreError("name exactly one of a store (--db) or an Era1 folder (--era)")
    if db is not None:
        return open_store(db, create=create)
    from .era import EraBackend

    assert era is not None
    return EraBackend(era, config=config)
