"""eth_getBlockByHash, eth_getBlockByNumber, and the uncle getters."""

from __future__ import annotations

from typing import Protocol

from ..backend import BlockSource
from ..models import Block, BlockRef, Hash32, Header
from ..rlpcodec.headers import encode_header
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
    # Answered as geth does: a block of the uncle's header with no body.
    return Block(header=uncle, transactions=(), uncles=(), withdrawals=None, size=_bodiless_size(uncle))


def _bodiless_size(header: Header) -> int:
    """RLP length of ``[header, [], []]``: the header's encoding, two empty lists, and the
    list's own prefix (worked out each time: ethread's encoder takes tens of microseconds, and
    uncles are seldom asked for)."""
    payload = len(encode_header(header)) + 2
    return payload + (1 if payload < 56 else 1 + (payload.bit_length() + 7) // 8)


def get_uncle_by_block_hash_and_index(backend: BlockSource, block_hash: Hash32, index: int) -> Block | None:
    """eth_getUncleByBlockHashAndIndex: the uncle at ``index`` of the block with this hash, as a
    block without body, or None."""
    return _uncle_at(backend.block_by_hash(check_hash(block_hash, "block_hash")), check_index(index))


def get_uncle_by_block_number_and_index(backend: ChainBlocks, block: BlockRef, index: int) -> Block | None:
    """eth_getUncleByBlockNumberAndIndex: the uncle at ``index`` of the block at a number or tag,
    or None."""
    return _uncle_at(get_block_by_number(backend, block), check_index(index))
