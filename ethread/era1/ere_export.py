"""Write ``ere`` files from any backend: pre- and post-merge history alike.

One file per epoch of 8,192 blocks (the last possibly partial), named after the hash of its
last block with the ``noproofs`` profile (proofs need the beacon chain's historical roots,
which a backend does not hold). Epochs that start before the merge carry total difficulties
and an accumulator; later ones carry neither.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..backend import TotalDifficultySource
from ..errors import StoreError
from ..progress import Progress
from ..rlpcodec.blocks import body_rlp
from ..rlpcodec.headers import encode_header
from ..rlpcodec.receipts import encode_receipts
from .accumulator import EPOCH_SIZE
from .ere import EreWriter
from .export import canonical_header, export_bounds


def export_ere(
    backend: Any,
    folder: str | Path,
    *,
    network: str | None = None,
    first: int = 0,
    last: int | None = None,
    receipts: bool = True,
    progress: Progress | None = None,
) -> list[Path]:
    """Export blocks ``[first, last]`` of ``backend`` (``last`` defaults to its head) into
    ``folder`` as ``ere`` files; returns the files written. ``first`` must start an epoch.
    ``receipts=False`` writes the ``noreceipts`` profile."""
    name, last = export_bounds(backend, network, first, last, "ere")
    if last < first:
        raise StoreError(f"no blocks to export from block {first}")
    own_td = backend.total_difficulty if isinstance(backend, TotalDifficultySource) else None
    td: int | None = None
    first_header = canonical_header(backend, first)
    if first_header is not None and first_header.difficulty > 0 and own_td is None:
        if backend.canonical_hash(0) is None:
            raise StoreError("total difficulty needs the chain from genesis, which the backend "
                             "does not hold")
        td = sum(canonical_header(backend, n).difficulty for n in range(first))
    written: list[Path] = []
    total, done = last - first + 1, 0
    for start in range(first, last + 1, EPOCH_SIZE):
        end = min(start + EPOCH_SIZE, last + 1)
        if backend.canonical_hash(start) is None:
            continue  # a gap: export the epochs held
        writer = EreWriter(start)
        for number in range(start, end):
            block_hash = backend.canonical_hash(number)
            block = backend.block_by_hash(block_hash) if block_hash is not None else None
            held = backend.receipts(block_hash) if block_hash is not None and receipts else None
            if block is None or (receipts and held is None):
                raise StoreError(f"block {number} is missing from the backend")
            difficulty = block.header.difficulty
            block_td: int | None = None
            if difficulty > 0:
                block_td = own_td(number) if own_td is not None else None
                if block_td is None:
                    if td is None:
                        raise StoreError(f"the total difficulty of block {number} is unknown")
                    block_td = td + difficulty
                td = block_td
            writer.add(block.hash, encode_header(block.header), body_rlp(block),
                       encode_receipts(held) if held is not None else None,
                       difficulty, block_td)
            done += 1
            if progress is not None and done % 256 == 0:
                progress(done, total)
        written.append(writer.write(folder, name))
    if progress is not None:
        progress(done, total)
    return written
