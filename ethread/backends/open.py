"""Open a persistent backend from command-line style arguments (``--db`` or ``--era``).

Exactly one source must be named: a missing or ambiguous choice is an error, never a silent
fallback to another backend.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import StoreError

if TYPE_CHECKING:
    from ..forks import ChainConfig
    from .era import EraBackend
    from .leveldb import LevelDBBackend


def open_backend(
    db: str | Path | None = None,
    era: str | Path | None = None,
    *,
    config: ChainConfig | None = None,
    create: bool = False,
) -> LevelDBBackend | EraBackend:
    """A :class:`LevelDBBackend` over the store ``db``, or an :class:`EraBackend` over the
    Era1 folder ``era`` (with ``config`` when its network is not a known one).

    Raises :class:`~ethread.errors.StoreError` (never a traceback-worthy exception) when the
    store is missing, held by another process or damaged.
    """
    if (db is None) == (era is None):
        raise StoreError("name exactly one of a LevelDB store (--db) or an Era1 folder (--era)")
    if db is not None:
        try:
            from .leveldb import LevelDBBackend
        except ImportError as exc:
            raise StoreError(str(exc)) from None

        return LevelDBBackend(db, create=create)
    from .era import EraBackend

    assert era is not None
    return EraBackend(era, config=config)
