"""eth_getBlockReceipts."""

from __future__ import annotations

from ..backend import Backend
from ..models import BlockRef, Receipt
from .resolve import resolve_header


def get_block_receipts(backend: Backend, block: BlockRef) -> tuple[Receipt, ...] | None:
    """Every receipt of the block in transaction order, or None when there is no such block."""
    header = resolve_header(backend, block)
    return backend.receipts(header.hash) if header is not None else None
