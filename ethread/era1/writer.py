"""Write one Era1 file: the inverse of :class:`~ethread.era1.file.Era1File`, records in the order
other clients write them, so that the same history gives the same bytes.
"""

from __future__ import annotations

import struct
from pathlib import Path

from ..models import Hash32
from . import e2store
from .accumulator import EPOCH_SIZE, accumulator_root
from .e2store import encode_record, write_file
from .file import era1_filename
from .snappy import compress


class Era1Writer:
    """Collects the consecutive blocks of one epoch from ``start``, then writes the file."""

    def __init__(self, start: int) -> None:
        self.start = start
        self._parts: list[bytes] = [encode_record(e2store.VERSION, b"")]
        self._position = e2store.HEADER_SIZE
        self._offsets: list[int] = []
        self._records: list[tuple[Hash32, int]] = []

    @property
    def count(self) -> int:
        """Blocks added so far."""
        return len(self._offsets)

    def add(self, block_hash: Hash32, header_rlp: bytes, body_rlp: bytes, receipts_rlp: bytes,
            total_difficulty: int) -> None:
        """Append one block's records and total difficulty; at most 8,192 blocks a file."""
        if self.count >= EPOCH_SIZE:
            raise ValueError(f"an Era1 file holds at most {EPOCH_SIZE} blocks")
        self._offsets.append(self._position)
        self._records.append((block_hash, total_difficulty))
        for kind, data in (
            (e2store.COMPRESSED_HEADER, compress(header_rlp)),
            (e2store.COMPRESSED_BODY, compress(body_rlp)),
            (e2store.COMPRESSED_RECEIPTS, compress(receipts_rlp)),
            (e2store.TOTAL_DIFFICULTY, total_difficulty.to_bytes(32, "little")),
        ):
            record = encode_record(kind, data)
            self._parts.append(record)
            self._position += len(record)

    def finish(self) -> tuple[bytes, Hash32]:
        """The file's bytes and its accumulator root."""
        if not self._offsets:
            raise ValueError("an Era1 file holds at least one block")
        root = accumulator_root(self._records)
        parts = [*self._parts, encode_record(e2store.ACCUMULATOR, root)]
        index_at = self._position + e2store.HEADER_SIZE + 32
        index = struct.pack("<Q", self.start) + b"".join(
            struct.pack("<q", offset - index_at) for offset in self._offsets
        ) + struct.pack("<Q", self.count)
        parts.append(encode_record(e2store.BLOCK_INDEX, index))
        return b"".join(parts), root

    def write(self, folder: str | Path, network: str) -> Path:
        """Write the file into ``folder`` under its canonical name, atomically."""
        data, root = self.finish()
        return write_file(folder, era1_filename(network, self.start // EPOCH_SIZE, root), data)
