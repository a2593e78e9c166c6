"""debug_getRaw*: a header, a block, a block's receipts and a transaction in their consensus
(RLP) encodings. A block number not held answers None; a hash not held is an error for the
header and the block (geth's words) and no receipts for the receipts.
"""

from __future__ import annotations

from typing import Protocol

import rlp

from ..backend import BlockSource, ReceiptSource, TransactionLocator
from ..errors import ServerError
from ..models import Block, BlockHashRef, BlockRef, Hash32
from ..rlpcodec.blocks import block_item
from ..rlpcodec.headers import encode_header
from ..rlpcodec.receipts import encode_receipt
from ..rlpcodec.transactions import encode_transaction
from .resolve import ChainHeaders, resolve_hash
from .transactions import get_transaction_by_hash


class RawChain(ChainHeaders, BlockSource, ReceiptSource, TransactionLocator, Protocol):
    """Blocks by hash or block parameter, their receipts, and transactions by hash."""


class RawNotFound(ServerError):
    """A block named by hash is not held (geth prints the hash as a byte array)."""


def _hash_words(block_hash: Hash32) -> str:
    return "[" + " ".join(str(b) for b in block_hash) + "]"


def _block_hash(backend: RawChain, ref: BlockRef) -> Hash32 | None:
    return ref.hash if isinstance(ref, BlockHashRef) else resolve_hash(backend, ref)


def _block_named(backend: RawChain, ref: BlockRef, what: str) -> Block | None:
    block_hash = _block_hash(backend, ref)
    block = None if block_hash is None else backend.block_by_hash(block_hash)
    if block is None and isinstance(ref, BlockHashRef):
        raise RawNotFound(f"{what} #{_hash_words(ref.hash)} not found")
    return block


def get_raw_header(backend: RawChain, ref: BlockRef) -> bytes | None:
    """debug_getRawHeader: the RLP encoding of the header at a number, tag or hash, or None."""
    block = _block_named(backend, ref, "header")
    return None if block is None else encode_header(block.header)


def get_raw_block(backend: RawChain, ref: BlockRef) -> bytes | None:
    """debug_getRawBlock: the RLP encoding of the block at a number, tag or hash, or None."""
    block = _block_named(backend, ref, "block")
    if block is None:
        return None
    item = block_item(block.header, [t.transaction for t in block.transactions], block.uncles,
                      block.withdrawals)
    return bytes(rlp.encode(item))


def get_raw_receipts(backend: RawChain, ref: BlockRef) -> tuple[bytes, ...] | None:
    """Each receipt as ``MarshalBinary`` writes it (a typed one: its type byte and payload)."""
    block_hash = _block_hash(backend, ref)
    if block_hash is None:
        return None
    receipts = backend.receipts(block_hash) or ()
    return tuple(
        encode_receipt(r.type, r.root if r.root is not None else (r.status or 0),
                       r.cumulative_gas_used, r.logs_bloom, r.logs)
        for r in receipts
    )


def get_raw_transaction(backend: RawChain, tx_hash: Hash32) -> bytes | None:
    """debug_getRawTransaction: the transaction's canonical encoding, or None."""
    found = get_transaction_by_hash(backend, tx_hash)
    return None if found is None else encode_transaction(found.transaction)
