"""evm_snapshot and evm_revert on a dev chain."""

from __future__ import annotations

from .core import ChainCore, SavedChain


class Snapshots(ChainCore):
    """Snapshots of the chain (head, pool, clock) and going back to them."""

    def snapshot(self) -> int:
        """Remember the chain (head, pending transactions, clock); an id for :meth:`revert`."""
        with self._lock:
            self._snapshot_ids += 1
            self._snapshots[self._snapshot_ids] = SavedChain(
                head=self.head.number, pool=self.pool.save(),
                nonces=tuple(self._nonces.items()), deployments=tuple(self._deployments.items()),
                senders=tuple(self._senders.items()),
                withdrawal_index=self._withdrawal_index, time_offset=self._time_offset,
                next_timestamp=self._next_timestamp,
            )
            return self._snapshot_ids

    def revert(self, snapshot_id: int) -> bool:
        """Go back to a snapshot, using it and every later one up (as anvil); False for an unknown id."""
        with self._lock:
            saved = self._snapshots.get(snapshot_id)
            if saved is None:
                return False
            self._rewind(saved.head, "snapshots need")
            for later in [i for i in self._snapshots if i >= snapshot_id]:
                del self._snapshots[later]
            self.pool.restore(saved.pool)
            self._nonces = dict(saved.nonces)
            self._senders = dict(saved.senders)
            self._deployments = dict(saved.deployments)
            self._withdrawal_index = saved.withdrawal_index
            self._time_offset = saved.time_offset
            self._next_timestamp = saved.next_timestamp
            return True

    @property
    def snapshots(self) -> dict[int, int]:
        """The live snapshot ids, each with the block number it returns to."""
        return {snapshot_id: saved.head for snapshot_id, saved in self._snapshots.items()}
