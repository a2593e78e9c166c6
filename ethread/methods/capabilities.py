"""eth_capabilities: which history and state the node can answer about, so that a router can
send a query to a node that holds it. For each kind of data (state, transaction lookups,
logs, receipts, blocks, state proofs): whether it is served, from which block, and its
pruning window, as geth reports them. ethread prunes nothing, so no kind has a window; a
history-only store (Era1 archives) serves no state and no proofs.
"""

from __future__ import annotations

from typing import Protocol

from ..backend import StateSource
from ..errors import StateUnavailable
from ..results import Availability, Capabilities
from .resolve import ChainHeaders


class ServedChain(ChainHeaders, StateSource, Protocol):
    """What eth_capabilities reads: the pointers, and whether the store keeps state."""


def get_capabilities(backend: ServedChain) -> Capabilities | None:
    """What ``backend`` serves, for the chain as it is now (None when it holds no block)."""
    head = backend.pointer("latest")
    head_hash = backend.canonical_hash(head) if head is not None else None
    if head is None or head_hash is None:
        return None
    earliest = backend.pointer("earliest") or 0
    history = Availability(disabled=False, oldest_block=earliest)
    state = history if _keeps_state(backend) else Availability(disabled=True, oldest_block=None)
    return Capabilities(head_number=head, head_hash=head_hash, state=state, tx=history,
                        logs=history, receipts=history, blocks=history, state_proofs=state)


def _keeps_state(backend: StateSource) -> bool:
    """Whether the store keeps state (a store of history only says so by refusing)."""
    try:
        backend.evm_database()
    except StateUnavailable:
        return False
    return True


__all__ = ["ServedChain", "get_capabilities"]
