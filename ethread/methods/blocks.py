"""eth_getBlockByHash, eth_getBlockByNumber, and the uncle getters."""

from __future__ import annotations

from typing import Protocol

from ..backend import BlockSource
from ..models import Block, BlockRef, Hash32
from ..rlpcodec.headers import encode_header
from ..rlpcodec.items import rlp_list_length
from ..validation import check_hash, check_index
from .resolve import ChainHeaders, resolve_header


class ChainBlocks(ChainHeaders, BlockSource, Protocol):
    """Blocks, found by hash or by a block parameter."""


def get_block_by_hash(backend: BlockSource, block_hash: Hash32) -> Block | None:
    """The block, or None. A typed Block always holds its full transactions; the RPC's
    details flag only decides how the codec writes them."""
    return backend.block_by_hash(check_hash(block_hash, "block_hash"))


def get_block_by_number(backend: ChainBlocks, block: BlockRef) -> Block | None:
    """eth_getBlockByNumber: the block at a number or tag, or None."""
    header = resolve_header(backend, block)
    return backend.block_by_hash(header.hash) if header is not None else None


def _uncle_at(parent: Block | None, index: int) -> Block | None:
    if parent is None or not 0 <= index < len(parent.uncles):
        return None
    uncle = parent.uncles[index]
    # Answered as geth does: a block of the uncle's header with no body, sized as the RLP of
    # [header, [], []] (worked out when asked: uncles are seldom asked for).
    return Block(header=uncle, transactions=(), uncles=(), withdrawals=None,
                 size=rlp_list_length(len(encode_header(uncle)) + 2))


def get_uncle_by_block_hash_and_index(backend: BlockSource, block_hash: Hash32, index: int) -> Block | None:
    """eth_getUncleByBlockHashAndIndex: the uncle at ``index``, as a bodiless block, or None."""
    return _uncle_at(backend.block_by_hash(check_hash(block_hash, "block_hash")), check_index(index))


def get_uncle_by_block_number_and_index(backend: ChainBlocks, block: BlockRef, index: int) -> Block | None:
    """eth_getUncleByBlockNumberAndIndex: the uncle at ``index``, or None."""
    return _uncle_at(get_block_by_number(backend, block), check_index(index))
