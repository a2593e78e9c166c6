"""Forking a live chain: a dev chain that continues another node's chain from one of its
blocks (``DevChain.fork(url, block)``, ``ethread serve --fork-url URL``), as anvil's
``--fork-url`` does.

- :mod:`.remote`: JSON-RPC to the node, in batches, a bounded number in flight, with timeouts
  and retries;
- :mod:`.source`: the forked block's accounts, slots and code, fetched as they are first read
  and each checked against the block's state root with eth_getProof;
- :mod:`.cache`: what was fetched and checked, in memory or in an LMDB directory kept between
  runs, keyed by chain id and block;
- :mod:`.history`: the forked node's blocks, transactions, receipts and logs at and below
  the fork block, each checked to be in the fork's chain by parent hashes, and kept;
- :mod:`.overlay`: the chain's own writes over the forked state, and which of the two answers
  for each block;
- :mod:`.evm`: py-evm's account database and the chain config reading through the overlay.
"""

from .cache import ForkCache, LMDBCache, MemoryCache, open_cache
from .history import ForkHistory
from .overlay import ForkOverlay
from .remote import RemoteError, RemoteLimits, RemoteNode
from .source import ForkPoint, ForkSource

__all__ = ["ForkCache", "ForkHistory", "ForkOverlay", "ForkPoint", "ForkSource", "LMDBCache", "MemoryCache",
           "RemoteError", "RemoteLimits", "RemoteNode", "open_cache"]
