"""Growing the demo chain while it is served, so that subscriptions have something to say."""

from __future__ import annotations

from typing import Any


def mine_one(miner: Any) -> Any:
    """One more block: the demo's log-emitting block when ``miner`` is the demo builder
    (:class:`ethread.devchain.Demo`, whose ``next_block`` knows it), else an empty block of a
    bare :class:`ethread.devchain.DevChain`."""
    next_block = getattr(miner, "next_block", None)
    return next_block() if next_block is not None else miner.mine()
