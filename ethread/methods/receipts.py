"""eth_getBlockReceipts."""

from __future__ import annotations

from typing import Protocol

from ..backend import ReceiptSource
from ..models import BlockRef, Receipt
from .resolve import ChainHeaders, resolve_header


class ChainReceipts(ChainHeaders, ReceiptSource, Protocol):
    """Receipts of a block named by a block parameter."""


def get_block_receipts(backend: ChainReceipts, block: BlockRef) -> tuple[Receipt, ...] | None:
    """Every receipt of the block in transaction order, or None when there is no such block."""
    header = resolve_header(backend, block)
    return backend.receipts(header.hash) if header is not None else None
