"""Forking a live chain from one of its blocks (``DevChain.fork(url, block)``, ``ethread serve
--fork-url URL``), as anvil's ``--fork-url`` does: :mod:`.remote` speaks to the node,
:mod:`.source` and :mod:`.history` read its state and chain (checked), :mod:`.cache` keeps them,
:mod:`.overlay` lays the chain's own writes over them and :mod:`.evm` has py-evm read through it.
"""

from .cache import ForkCache, LMDBCache, MemoryCache, open_cache
from .history import ForkHistory
from .overlay import ForkOverlay
from .remote import RemoteError, RemoteLimits, RemoteNode
from .source import ForkPoint, ForkSource

__all__ = ["ForkCache", "ForkHistory", "ForkOverlay", "ForkPoint", "ForkSource", "LMDBCache", "MemoryCache",
           "RemoteError", "RemoteLimits", "RemoteNode", "open_cache"]
