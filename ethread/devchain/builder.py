"""A chain built in code: for tests (a test chain for web3.py suites and the pytest plugin),
the project's own tests and the ``ethread serve`` demo.

Every block the dev chain makes is assembled and executed with py-evm on a VM at its parent
(which fills in state root, receipts root, bloom, gas used, withdrawals root, blob gas and
requests hash) and stored through :class:`ChainImporter`: its header is checked against its
parent, its receipts are read back from the execution and stored with the block. With
``revalidate=True`` (the demo chain and the project's tests use it) the block goes the whole
import path instead: RLP-encoded, handed as bytes to :meth:`ChainImporter.import_block`,
decoded, executed again and validated like any block of a real chain. Blocks before the
merge carry zero proof-of-work seals, which is why the importer runs with
``verify_seals=False``; everything else is checked.

This module joins :class:`DevChain` from its parts (listed in the package's docstring).
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

    Transactions sent in code wait in the chain's :attr:`pool` (:meth:`send`, :meth:`deploy`,
    :meth:`fund`) until :meth:`mine` puts them in the next block (by price, then nonce, while
    they fit in its gas). Nonces, fees and gas are filled in unless given. A transaction is
    checked when it is sent, before it takes a nonce
    (:class:`~ethread.errors.TransactionRejected`); a block that still cannot be built takes
    what it was given out of the pool and raises :class:`DevChainError`.

    Transactions arriving as a node receives them (:meth:`submit`, which JSON-RPC's
    eth_sendTransaction and eth_sendRawTransaction use) are mined at once, each in its own
    block, while :attr:`automine` is on (the default); otherwise they go into the same pool by
    geth's rules (replacement at 10% more, future nonces queued) and wait for :meth:`mine`.

    Tests control the chain with :meth:`snapshot` and :meth:`revert` (the backend loses the
    blocks above the snapshot), :meth:`set_balance`, :meth:`set_nonce`, :meth:`set_code`,
    :meth:`set_storage` (each mined as a block whose state carries the change),
    :meth:`increase_time`, :meth:`set_next_block_timestamp` and :meth:`impersonate`.
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
        """A dev chain continuing the chain served at ``url`` from its block ``block`` (its
        latest when None), as ``anvil --fork-url`` does: accounts, code and storage are
        fetched from the node as the chain first reads them, each checked against the block's
        state root with eth_getProof (see :mod:`.fork`), and kept in ``cache`` (an LMDB
        directory, or a :class:`~.fork.cache.ForkCache`; in memory when None). ``backend``
        must be empty: it holds the forked block (its header) and the blocks made on it, the
        first of which funds the dev accounts. ``options`` are :class:`DevChain`'s (the chain
        id is the node's; ``forks`` is the schedule of a chain ethread does not know by its
        id)."""
        store = cache if cache is None or isinstance(cache, str | Path) else None
        opened = open_cache(store) if store is not None or cache is None else cache
        remote = RemoteNode(url, limits or RemoteLimits())
        source = ForkSource.connect(remote, block, opened)  # type: ignore[arg-type]
        return cls(backend, fork=source, **options)
