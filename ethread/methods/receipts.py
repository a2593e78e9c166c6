"""eth_getBlockReceipts and eth_getTransactionReceipt."""

from __future__ import annotations

from typing import Protocol

from ..backend import ReceiptSource, TransactionLocator
from ..models import BlockRef, Hash32, Receipt
from ..validation import check_hash
from .resolve import ChainHeaders, resolve_hash


class ChainReceipts(ChainHeaders, ReceiptSource, Protocol):
    """Receipts of a block named by a block parameter."""


def get_block_receipts(backend: ChainReceipts, block: BlockRef) -> tuple[Receipt, ...] | None:
    """Every receipt of the block in transaction order, or None when there is no such block."""
    block_hash = resolve_hash(backend, block)
    return backend.receipts(block_hash) if block_hash is not None else None


class LocatedReceipts(TransactionLocator, ReceiptSource, Protocol):
    """Receipts found by transaction hash: its place, then its block's receipts."""


def get_transaction_receipt(backend: LocatedReceipts, tx_hash: Hash32) -> Receipt | None:
    """The receipt of a canonical transaction, or None for a hash the chain does not hold
    (``root`` before Byzantium, ``status`` after; blob gas fields for blob transactions)."""
    location = backend.transaction_location(check_hash(tx_hash, "tx_hash"))
    if location is None:
        return None
    block_hash, index = location
    receipts = backend.receipts(block_hash)
    if receipts is None or not 0 <= index < len(receipts):
        return None
    return receipts[index]
