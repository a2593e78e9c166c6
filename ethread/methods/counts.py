"""eth_getBlockTransactionCountByHash/ByNumber and eth_getUncleCountByBlockHash/ByNumber; each
answers None (JSON null) for a block not held, as geth does."""

from __future__ import annotations

from ..backend import BlockSource
from ..models import Block, BlockRef, Hash32
from ..validation import check_hash
from .blocks import ChainBlocks, get_block_by_number


def _transactions(block: Block | None) -> int | None:
    return None if block is None else len(block.transactions)


def _uncles(block: Block | None) -> int | None:
    return None if block is None else len(block.uncles)


def get_block_transaction_count_by_hash(backend: BlockSource, block_hash: Hash32) -> int | None:
    """eth_getBlockTransactionCountByHash: the block's transaction count, or None."""
    return _transactions(backend.block_by_hash(check_hash(block_hash, "block_hash")))


def get_block_transaction_count_by_number(backend: ChainBlocks, block: BlockRef) -> int | None:
    """eth_getBlockTransactionCountByNumber: the block's transaction count, or None."""
    return _transactions(get_block_by_number(backend, block))


def get_uncle_count_by_block_hash(backend: BlockSource, block_hash: Hash32) -> int | None:
    """eth_getUncleCountByBlockHash: the block's uncle count, or None."""
    return _uncles(backend.block_by_hash(check_hash(block_hash, "block_hash")))


def get_uncle_count_by_block_number(backend: ChainBlocks, block: BlockRef) -> int | None:
    """eth_getUncleCountByBlockNumber: the block's uncle count, or None."""
    return _uncles(get_block_by_number(backend, block))
