"""The chain as it would be after its pending block, for a dev chain's reads at "pending" (as
geth's): a backend with the block as its ``latest``, its state on a scratch layer over the store."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..backend import Backend, LogQuery, Pointer
from ..models import Block, Hash32, Header, Log, Receipt

if TYPE_CHECKING:
    from eth.abc import ChainDatabaseAPI

    from ..forks import ChainConfig


class PendingView:
    """``backend`` with ``block`` as its head and ``chaindb`` (the block's scratch layer) as state."""

    def __init__(self, backend: Backend, block: Block, chaindb: ChainDatabaseAPI) -> None:
        self.backend = backend
        self.block = block
        self._chaindb = chaindb

    def header_by_hash(self, block_hash: Hash32) -> Header | None:
        """The pending block's header for its hash, else the backend's."""
        return self.block.header if block_hash == self.block.hash else self.backend.header_by_hash(block_hash)

    def canonical_hash(self, number: int) -> Hash32 | None:
        """The pending block's hash at its number, else the backend's."""
        return self.block.hash if number == self.block.number else self.backend.canonical_hash(number)

    def block_by_hash(self, block_hash: Hash32) -> Block | None:
        """The pending block for its hash, else the backend's."""
        return self.block if block_hash == self.block.hash else self.backend.block_by_hash(block_hash)

    def transaction_location(self, tx_hash: Hash32) -> tuple[Hash32, int] | None:
        """The backend's: the pending block's transactions are in no stored block yet."""
        return self.backend.transaction_location(tx_hash)

    def receipts(self, block_hash: Hash32) -> tuple[Receipt, ...] | None:
        """The backend's (the pending block has no stored receipts)."""
        return self.backend.receipts(block_hash)

    def logs(self, query: LogQuery) -> list[Log]:
        """The backend's logs."""
        return self.backend.logs(query)

    def pointer(self, name: Pointer) -> int | None:
        """The pending block's number for ``latest``; the backend's other pointers."""
        return self.block.number if name == "latest" else self.backend.pointer(name)

    def evm_database(self) -> ChainDatabaseAPI:
        """The store holding the pending block's state (its scratch writes over the backend's)."""
        return self._chaindb

    def chain_config(self) -> ChainConfig | None:
        """The backend's chain config."""
        return self.backend.chain_config()

    def generation(self) -> int:
        """The backend's generation."""
        return self.backend.generation()


__all__ = ["PendingView"]
