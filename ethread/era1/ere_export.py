"""Write ``ere`` files from any backend: pre- and post-merge history alike, one file per epoch
of 8,192 blocks (the last possibly partial), with the ``noproofs`` profile.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import StoreError
from ..progress import Progress
from ..rlpcodec.blocks import body_rlp
from ..rlpcodec.headers import encode_header
from ..rlpcodec.receipts import encode_receipts
from .ere import EreWriter
from .export import canonical_header, export_bounds, held_epochs


def export_ere(backend: Any, folder: str | Path, *, network: str | None = None, first: int = 0,
               last: int | None = None, receipts: bool = True,
               progress: Progress | None = None) -> list[Path]:
    """Export blocks ``[first, last]`` of ``backend`` (``last`` defaults to its head) into
    ``folder`` as ``ere`` files; returns the files written. ``first`` must start an epoch.
    ``receipts=False`` writes the ``noreceipts`` profile."""
    name, last = export_bounds(backend, network, first, last, "ere")
    if last < first:
        raise StoreError(f"no blocks to export from block {first}")
    first_header = canonical_header(backend, first)
    written: list[Path] = []
    for start, blocks in held_epochs(
            backend, first, last, receipts=receipts, progress=progress,
            td_from_genesis=first_header is not None and first_header.difficulty > 0):
        writer = EreWriter(start)
        for block, held, td in blocks:
            difficulty = block.header.difficulty
            writer.add(block.hash, encode_header(block.header), body_rlp(block),
                       encode_receipts(held) if held is not None else None,
                       difficulty, td if difficulty > 0 else None)
        written.append(writer.write(folder, name))
    return written
