"""A served chain's transaction pool as :mod:`ethread.rpc.txpool` serves it."""

from __future__ import annotations

import threading

from ..backend import TransactionLocator
from ..errors import GenesisError
from ..forks import ChainConfig
from ..methods.call import ExecutableChain
from ..methods.resolve import require_header
from ..models import Address, Hash32
from .payload import BuildFailed, BuiltPayload, PayloadAttributes, build_payload
from .txpool import DEFAULT_LIMITS, BackendChain, Pooled, PoolLimits, TxPool


class ServedPool:
    """One pool over a served backend, for eth_sendRawTransaction, txpool_* and testing_buildBlockV1."""

    def __init__(self, backend: ExecutableChain, config: ChainConfig | None = None,
                 limits: PoolLimits = DEFAULT_LIMITS, *, pool: TxPool | None = None) -> None:
        """``pool``: one kept elsewhere (a dev chain's) to serve, instead of a new one."""
        config = config or (pool.chain.config if pool is not None else backend.chain_config())
        if config is None:
            raise GenesisError("a transaction pool needs the chain's config (genesis)")
        self.backend = backend
        self.pool = pool if pool is not None else TxPool(BackendChain(backend, config), limits)
        self._build_lock = threading.Lock()

    @property
    def config(self) -> ChainConfig:
        """The chain's config as its pool sees it now (a dev chain may change its id)."""
        return self.pool.chain.config

    def pending_transaction(self, tx_hash: Hash32) -> Pooled | None:
        """A transaction the pool holds that the chain has not included (pending or queued)."""
        pooled = self.pool.get(tx_hash)
        if pooled is None or (isinstance(self.backend, TransactionLocator)
                              and self.backend.transaction_location(tx_hash) is not None):
            return None
        return pooled

    def next_nonce(self, address: Address) -> int:
        """eth_getTransactionCount(address, "pending")."""
        return self.pool.next_nonce(address)

    def build_block(self, parent_hash: Hash32, attributes: PayloadAttributes,
                    transactions: list[bytes] | None, extra_data: bytes) -> BuiltPayload:
        """geth's testing_buildBlockV1: only on the current head; nothing is inserted."""
        head = require_header(self.backend, "latest")
        if head.hash != parent_hash:
            raise BuildFailed("parentHash is not current head")
        with self._build_lock:
            return build_payload(self.backend, self.config, head, attributes, transactions,
                                 extra_data, None if transactions is not None else self.pool)


__all__ = ["ServedPool"]
