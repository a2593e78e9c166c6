"""Forking a live chain: a dev chain that continues another node's chain from one of its
blocks (``DevChain.fork(url, block)``, ``ethread serve --fork-url URL``), as anvil's
``--fork-url`` does.

- :mod:`.remote`: JSON-RPC to the node, batched, bounded, with a deadline and retries;
- :mod:`.source`: the forked block's state, fetched when first read, checked by eth_getProof;
- :mod:`.cache`: what was fetched and checked, in memory or in LMDB between runs;
- :mod:`.history`: the node's blocks, receipts and logs at and below the fork block, checked;
- :mod:`.overlay`: the chain's own writes over the forked state, and which answers when;
- :mod:`.evm`: py-evm's account database and the chain config reading through the overlay.
"""

from .cache import ForkCache, LMDBCache, MemoryCache, open_cache
from .history import ForkHistory
from .overlay import ForkOverlay
from .remote import RemoteError, RemoteLimits, RemoteNode
from .source import ForkPoint, ForkSource

__all__ = ["ForkCache", "ForkHistory", "ForkOverlay", "ForkPoint", "ForkSource", "LMDBCache", "MemoryCache",
           "RemoteError", "RemoteLimits", "RemoteNode", "open_cache"]
