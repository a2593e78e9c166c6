""":class:`DevChain`, joined from its parts (listed in the package's docstring).

Every block is executed with py-evm on a VM at its parent and stored through
:class:`ChainImporter`, its header checked against its parent; with ``revalidate=True`` it goes
the whole import path (:meth:`ChainImporter.import_block`). Only proof-of-work seals (zero here)
are not checked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..backend import WritableBackend
from .anvil_controls import AnvilControls
from .client_signing import ClientSigning
from .fork.cache import ForkCache, open_cache
from .fork.remote import RemoteLimits, RemoteNode
from .fork.source import ForkSource
from .forked import ForkedReads
from .pool_controls import PoolControls
from .snapshots import Snapshots
from .state_files import StateFiles

__all__ = ["DevChain"]


class DevChain(ForkedReads, PoolControls, ClientSigning, AnvilControls, Snapshots, StateFiles):
    """A chain grown block by block in code, on top of a writable backend.

    Transactions sent in code (:meth:`send`, :meth:`deploy`, :meth:`fund`) are checked before
    they take a nonce and wait in :attr:`pool` until :meth:`mine`; what arrives as a node
    receives it (:meth:`submit`) is mined at once while :attr:`automine` is on. Tests control
    the chain with :meth:`snapshot`/:meth:`revert`, the ``set_*`` edits, the clock and
    :meth:`impersonate`.
    """

    @classmethod
    def fork(
        cls,
        url: str,
        block: int | None = None,
        *,
        backend: WritableBackend,
        cache: str | Path | ForkCache | None = None,
        limits: RemoteLimits | None = None,
        **options: Any,
    ) -> DevChain:
        """A dev chain continuing the chain at ``url`` from block ``block`` (the latest when None),
        as ``anvil --fork-url`` does (see :mod:`.fork`). ``cache``: an LMDB directory or a
        :class:`~.fork.cache.ForkCache` (None: in memory); ``backend`` must be empty; ``forks``
        in ``options``: the schedule of a chain ethread does not know by its id."""
        if cache is None or isinstance(cache, str | Path):
            cache = open_cache(cache)
        source = ForkSource.connect(RemoteNode(url, limits or RemoteLimits()), block, cache)
        return cls(backend, fork=source, **options)
