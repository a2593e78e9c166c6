"""A dev chain's pool as clients see it: the pending block and its state, txpool_* and the drops."""

from __future__ import annotations

from collections.abc import Sequence

import rlp

from ..models import Block, Hash32, Header
from ..rlpcodec.blocks import decode_block
from .core import DevChainError
from .inputs import as_bytes
from .mining import BlockMining
from .pending_state import PendingView
from .served_pool import ServedPool
from .txpool import Pooled


class PoolControls(BlockMining):
    """The pool and the pending block as JSON-RPC reads and changes them."""

    def pending_transaction(self, tx_hash: Hash32) -> Pooled | None:
        """A transaction the pool holds and no block has taken yet (pending or queued)."""
        return self.served_pool.pending_transaction(tx_hash)

    def pool_arrivals(self, cursor: int) -> tuple[list[Hash32], int]:
        """Hashes of transactions the pool took after ``cursor`` (pending filters)."""
        return self.pool.arrivals_since(cursor)

    def drop_transaction(self, tx_hash: Hash32 | str) -> bool:
        """anvil_dropTransaction (:meth:`~.txpool.TxPool.drop`); False if the pool does not hold it."""
        wanted = as_bytes(tx_hash, "tx_hash", 32)
        with self._lock:
            pooled = self.pool.get(wanted)
            if not self.pool.drop(wanted):
                return False
            if pooled is not None:
                self._nonces.pop(pooled.sender, None)
            self._deployments.pop(wanted, None)
            self._senders.pop(wanted, None)
            return True

    def drop_all_transactions(self) -> None:
        """anvil_dropAllTransactions: empty the pool."""
        with self._lock:
            self._forget_pending()

    @property
    def served_pool(self) -> ServedPool:
        """The pool as txpool_* read it and testing_buildBlockV1 builds from it."""
        if self._served_pool is None:
            self._served_pool = ServedPool(self.backend, pool=self.pool)  # type: ignore[arg-type]
        return self._served_pool

    def pending_block(self) -> Block:
        """The block :meth:`mine` would make now, not stored (geth's "pending" block); without the
        pool's transactions when they cannot make a block."""
        return self.pending_state().block

    def pending_state(self) -> PendingView:
        """The chain with :meth:`pending_block` as its head, read-only, for reads at "pending"."""
        with self._lock:
            head = self.head
            when = self._next_time(head.timestamp)
            taken = self._next_transactions()
            key = (head.hash, tuple(p.hash for p in taken), when)
            found = self._pending_blocks.get(key)
            if found is None:
                try:
                    found = self._build_pending(head, when, taken)
                except DevChainError:
                    found = self._build_pending(head, when, [])
                self._pending_blocks.put(key, found)
            return found

    def _build_pending(self, head: Header, when: int, taken: Sequence[Pooled]) -> PendingView:
        parent = self._evm_header(head.hash)
        rules = self.config.rules(head.number + 1, when)
        paid = () if rules.withdrawals else None
        senders = {p.hash: self._senders[p.hash] for p in taken if p.hash in self._senders}
        with self._recording():
            block, vm = self._execute(parent, when, self.coinbase, b"", [p.tx for p in taken], (),
                                      paid, None, senders, scratch=True)
        raw = rlp.encode(block)
        pending = decode_block(raw, rlp.decode(raw), [p.sender for p in taken])
        # The scratch layer holds the block's state; its header too, for eth_call's rules.
        scratch = vm.chaindb
        scratch.db[block.header.hash] = rlp.encode(block.header)  # (py-evm's header key)
        return PendingView(self.backend, pending, scratch)
