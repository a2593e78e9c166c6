"""A stored chain read back block by block, for tests that check what a chain holds."""

from __future__ import annotations

from collections.abc import Iterator

import rlp

from ethread.backend import Backend
from ethread.models import Block, Receipt
from ethread.rlpcodec.blocks import block_item


def blocks_of(backend: Backend) -> Iterator[Block]:
    """Every block of the chain, genesis to head."""
    for number in range((backend.pointer("latest") or 0) + 1):
        block_hash = backend.canonical_hash(number)
        assert block_hash is not None
        block = backend.block_by_hash(block_hash)
        assert block is not None
        yield block


def receipts_of(backend: Backend, block: Block) -> tuple[Receipt, ...]:
    """The block's receipts, which the store must hold."""
    receipts = backend.receipts(block.hash)
    assert receipts is not None
    return receipts


def raw_block(block: Block) -> bytes:
    """The block's RLP as an importer reads it."""
    txs = [t.transaction for t in block.transactions]
    encoded: bytes = rlp.encode(block_item(block.header, txs, block.uncles, block.withdrawals))
    return encoded
