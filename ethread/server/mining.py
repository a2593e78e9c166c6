"""Growing the demo chain while it is served, so that subscriptions have something to say."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ..models import Block


@runtime_checkable
class DemoMiner(Protocol):
    """A builder that knows what its next block should hold (the demo's log-emitting block)."""

    def next_block(self) -> Block:
        """Mine the next block and return it."""
        ...


def mine_one(miner: Any) -> Any:
    """One more block: the demo's log-emitting block when it has one, else an empty block.

    ``miner`` is what the demo builder returned (:class:`ethread.devchain.Demo`)
    or a bare :class:`ethread.devchain.DevChain`.
    """
    if isinstance(miner, DemoMiner):
        return miner.next_block()
    return miner.mine()
