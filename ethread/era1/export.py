"""Write Era1 files from any backend.

Era1 covers proof-of-work history: export stops at the merge. Files hold whole epochs of 8,192
blocks (the last possibly partial), named ``<network>-<epoch>-<accumulator root prefix>.era1``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeAlias

from ..backend import TotalDifficultySource
from ..errors import StoreError
from ..forks import network_name
from ..models import Block, Receipt
from ..progress import Progress
from ..rlpcodec.blocks import body_rlp
from ..rlpcodec.headers import encode_header
from ..rlpcodec.receipts import encode_receipts
from .accumulator import EPOCH_SIZE
from .writer import Era1Writer

EpochBlock: TypeAlias = tuple[Block, tuple[Receipt, ...] | None, int | None]
"""A block of an export, its receipts and its total difficulty."""


def _last_pre_merge(backend: Any, first: int, head: int) -> int:
    """The last proof-of-work block in ``[first, head]``."""
    last = first - 1
    for number in range(first, head + 1):
        header = canonical_header(backend, number)
        if header is None:
            continue
        if header.difficulty == 0 and number > 0:
            break
        last = number
    return last


def canonical_header(backend: Any, number: int) -> Any:
    """The header of ``backend``'s canonical block ``number``, or None."""
    block_hash = backend.canonical_hash(number)
    return backend.header_by_hash(block_hash) if block_hash is not None else None


def export_bounds(backend: Any, network: str | None, first: int, last: int | None,
                  format_name: str) -> tuple[str, int]:
    """The file names' network and the last block of an export of ``[first, last]``
    (``last`` at most the head); StoreError for a first block off an epoch's start, a chain
    of no known network without a name, or an empty backend."""
    if first % EPOCH_SIZE:
        raise StoreError(f"{format_name} files start at multiples of {EPOCH_SIZE}; {first} does not")
    name = network or network_name(backend.chain_config())
    if not name:
        raise StoreError("the chain is not a known network: give a network name for the files")
    head = backend.pointer("latest")
    if head is None:
        raise StoreError("the backend holds no blocks")
    return name, head if last is None else min(last, head)


def held_epochs(backend: Any, first: int, last: int, *, receipts: bool, td_from_genesis: bool,
                progress: Progress | None) -> Iterator[tuple[int, Iterator[EpochBlock]]]:
    """The epochs of ``[first, last]`` the backend holds, each as its first block and its blocks
    with receipts (None unless ``receipts``) and total difficulty: the backend's own, else summed
    from genesis with ``td_from_genesis``, else None (StoreError where proof of work needs it);
    flat past the merge; a gap's epochs are skipped."""
    own_td = backend.total_difficulty if isinstance(backend, TotalDifficultySource) else None
    td: int | None = None
    if own_td is None and td_from_genesis:
        if backend.canonical_hash(0) is None:
            raise StoreError("total difficulty needs the chain from genesis, which the backend "
                             "does not hold")
        td = sum(canonical_header(backend, n).difficulty for n in range(first))
    total, done = last - first + 1, 0

    def blocks(start: int, end: int) -> Iterator[EpochBlock]:
        nonlocal td, done
        for number in range(start, end):
            block_hash = backend.canonical_hash(number)
            block = backend.block_by_hash(block_hash) if block_hash is not None else None
            held = backend.receipts(block_hash) if block_hash is not None and receipts else None
            if block is None or (receipts and held is None):
                raise StoreError(f"block {number} is missing from the backend")
            difficulty = block.header.difficulty
            block_td = own_td(number) if own_td is not None else None
            if block_td is None and (difficulty > 0 or td is not None):
                if td is None:
                    raise StoreError(f"the total difficulty of block {number} is unknown")
                block_td = td + difficulty
            td = block_td
            yield block, held, block_td
            done += 1
            if progress is not None and done % 256 == 0:
                progress(done, total)

    for start in range(first, last + 1, EPOCH_SIZE):
        if backend.canonical_hash(start) is not None:  # a gap: export the epochs held
            yield start, blocks(start, min(start + EPOCH_SIZE, last + 1))
    if progress is not None:
        progress(done, total)


def export_era1(backend: Any, folder: str | Path, *, network: str | None = None, first: int = 0,
                last: int | None = None, progress: Progress | None = None,
                proof_of_work_only: bool = True) -> list[Path]:
    """Export the pre-merge blocks ``[first, last]`` of ``backend`` into ``folder``; returns the
    files written. ``first`` must start an epoch (a multiple of 8,192).
    ``proof_of_work_only=False`` exports past the merge too (other clients reject such files)."""
    name, last = export_bounds(backend, network, first, last, "Era1")
    if proof_of_work_only:
        last = _last_pre_merge(backend, first, last)
    if last < first:
        raise StoreError(f"no proof-of-work blocks to export from block {first}")
    written: list[Path] = []
    for start, blocks in held_epochs(backend, first, last, receipts=True, td_from_genesis=True,
                                     progress=progress):
        writer = Era1Writer(start)
        for block, receipts, td in blocks:
            assert receipts is not None
            if td is None:
                raise StoreError(f"the total difficulty of block {block.number} is missing")
            writer.add(block.hash, encode_header(block.header), body_rlp(block),
                       encode_receipts(receipts), td)
        written.append(writer.write(folder, name))
    return written
