"""The Era1 accumulator: SSZ ``hash_tree_root(List[HeaderRecord, 8192])``, a header record being
``(block_hash: Bytes32, total_difficulty: uint256)``; four bytes of it name the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from hashlib import sha256

from ..models import Hash32

EPOCH_SIZE = 8192
_DEPTH = 13  # 2 ** 13 == EPOCH_SIZE

_ZERO_HASHES = [b"\x00" * 32]
for _ in range(_DEPTH):
    _ZERO_HASHES.append(sha256(_ZERO_HASHES[-1] * 2).digest())


def header_record_root(block_hash: Hash32, total_difficulty: int) -> bytes:
    """The hash tree root of one header record (block hash, total difficulty)."""
    return sha256(block_hash + total_difficulty.to_bytes(32, "little")).digest()


def accumulator_root(records: Sequence[tuple[Hash32, int]]) -> Hash32:
    """Root of the (block hash, total difficulty) records of one epoch, in block order."""
    if len(records) > EPOCH_SIZE:
        raise ValueError(f"an epoch holds at most {EPOCH_SIZE} blocks, got {len(records)}")
    layer = [header_record_root(h, td) for h, td in records]
    for depth in range(_DEPTH):
        if len(layer) % 2:
            layer.append(_ZERO_HASHES[depth])
        layer = [sha256(layer[i] + layer[i + 1]).digest() for i in range(0, len(layer), 2)]
    root = layer[0] if layer else _ZERO_HASHES[_DEPTH]
    return sha256(root + len(records).to_bytes(32, "little")).digest()
