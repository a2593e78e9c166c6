""":class:`DevChain`, joined from its parts (listed in the package's docstring).

Every block the dev chain makes is executed with py-evm on a VM at its parent (which fills
in every root, gas used, blob gas and requests hash) and stored through
:class:`ChainImporter`, its header checked against its parent. With ``revalidate=True`` (the
demo chain and the project's tests) the block goes the whole import path instead, as bytes
to :meth:`ChainImporter.import_block`, executed again and validated like any block of a real
chain. Blocks before the merge carry zero proof-of-work seals (the importer runs with
``verify_seals=False``); everything else is checked.
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
from .genesis import GWEI, PRAGUE_FORKS, ForkSchedule
from .pool_controls import PoolControls
from .signing import Fees
from .snapshots import Snapshots
from .state_files import StateFiles

# The names besides DevChain are the package's (:mod:`ethread.devchain`), kept here for the
# tests and benchmarks that import them from this module.
__all__ = ["GWEI", "PRAGUE_FORKS", "DevChain", "Fees", "ForkSchedule"]


class DevChain(ForkedReads, PoolControls, ClientSigning, AnvilControls, Snapshots,
               StateFiles):
    """A chain grown block by block in code, on top of a writable backend.

    Transactions sent in code (:meth:`send`, :meth:`deploy`, :meth:`fund`; nonces, fees and
    gas filled in unless given) are checked before they take a nonce
    (:class:`~ethread.errors.TransactionRejected`) and wait in :attr:`pool` until :meth:`mine`
    puts them in the next block (by price, then nonce, while they fit in its gas); a block
    that still cannot be built drops what it was given and raises :class:`DevChainError`.
    What arrives as a node receives it (:meth:`submit`: eth_sendTransaction and
    eth_sendRawTransaction) is mined at once in a block of its own while :attr:`automine` is
    on; otherwise it goes into the same pool by geth's rules and waits for :meth:`mine`.
    Tests control the chain with :meth:`snapshot`/:meth:`revert`, the ``set_*`` edits (each
    a block of its own), the clock and :meth:`impersonate`.
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
        """A dev chain continuing the chain at ``url`` from its block ``block`` (the latest
        when None), as ``anvil --fork-url`` does: state is fetched as first read, checked
        against the block's state root (see :mod:`.fork`) and kept in ``cache`` (an LMDB
        directory or a :class:`~.fork.cache.ForkCache`; in memory when None). ``backend``
        must be empty: it gets the forked header and the blocks made on it, the first of
        which funds the dev accounts. ``options`` are :class:`DevChain`'s (the chain id is
        the node's; ``forks`` the schedule of a chain ethread does not know by its id)."""
        if cache is None or isinstance(cache, str | Path):
            cache = open_cache(cache)
        source = ForkSource.connect(RemoteNode(url, limits or RemoteLimits()), block, cache)
        return cls(backend, fork=source, **options)
