"""eth_getTransactionByHash and the by-block-and-index getters."""

from __future__ import annotations

from typing import Protocol

from ..backend import BlockSource, TransactionLocator
from ..models import Block, BlockRef, Hash32, IncludedTransaction
from ..validation import check_hash, check_index
from .blocks import ChainBlocks, get_block_by_number


class LocatedTransactions(TransactionLocator, BlockSource, Protocol):
    """Transactions found by hash: their place, then their block."""


def get_transaction_by_hash(backend: LocatedTransactions, tx_hash: Hash32) -> IncludedTransaction | None:
    """eth_getTransactionByHash: a canonical transaction with its block and sender, or None."""
    location = backend.transaction_location(check_hash(tx_hash, "tx_hash"))
    if location is None:
        return None
    block = backend.block_by_hash(location[0])
    return block.transactions[location[1]] if block is not None else None


def _at(block: Block | None, index: int) -> IncludedTransaction | None:
    if block is None or not 0 <= index < len(block.transactions):
        return None
    return block.transactions[index]


def get_transaction_by_block_hash_and_index(
    backend: BlockSource, block_hash: Hash32, index: int
) -> IncludedTransaction | None:
    """eth_getTransactionByBlockHashAndIndex: the transaction at ``index``, or None."""
    return _at(backend.block_by_hash(check_hash(block_hash, "block_hash")), check_index(index))


def get_transaction_by_block_number_and_index(
    backend: ChainBlocks, block: BlockRef, index: int
) -> IncludedTransaction | None:
    """eth_getTransactionByBlockNumberAndIndex: the transaction at ``index``, or None."""
    return _at(get_block_by_number(backend, block), check_index(index))
