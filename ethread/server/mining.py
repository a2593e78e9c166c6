"""Growing the demo chain while it is served, so that subscriptions have something to say."""

from __future__ import annotations

from typing import Any


def mine_one(miner: Any) -> Any:
    """One more block: the demo's log-emitting block when it has one, else an empty block.

    ``miner`` is what the demo builder returned (:class:`ethread.devchain.Demo`)
    or a bare :class:`ethread.devchain.DevChain`.
    """
    next_block = getattr(miner, "next_block", None)
    if callable(next_block):
        return next_block()
    return miner.mine()
