"""eth_getTransactionByHash and the by-block-and-index getters."""

from __future__ import annotations

from ..backend import Backend
from ..models import Block, BlockRef, Hash32, IncludedTransaction
from .blocks import get_block_by_number


def get_transaction_by_hash(backend: Backend, tx_hash: Hash32) -> IncludedTransaction | None:
    location = backend.transaction_location(tx_hash)
    if location is None:
        return None
    block = backend.block_by_hash(location[0])
    return block.transactions[location[1]] if block is not None else None


def _at(block: Block | None, index: int) -> IncludedTransaction | None:
    if block is None or not 0 <= index < len(block.transactions):
        return None
    return block.transactions[index]


def get_transaction_by_block_hash_and_index(
    backend: Backend, block_hash: Hash32, index: int
) -> IncludedTransaction | None:
    return _at(backend.block_by_hash(block_hash), index)


def get_transaction_by_block_number_and_index(
    backend: Backend, block: BlockRef, index: int
) -> IncludedTransaction | None:
    return _at(get_block_by_number(backend, block), index)
