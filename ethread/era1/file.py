"""Read one Era1 file through its block index, memory-mapped.

Layout: ``version | (header, body, receipts, total difficulty)* | accumulator | block index``.
The block index (last record) holds the first block number, one offset per block (relative to
the index record) and the count. File names are
``<network>-<epoch, 5 digits>-<first 4 bytes of the accumulator root>.era1``.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..models import Hash32
from . import e2store
from .accumulator import EPOCH_SIZE
from .e2store import FormatError, MappedFile, Record, read_record

_U64 = struct.Struct("<Q")
_I64 = struct.Struct("<q")
_NAME = re.compile(r"^(?P<network>[A-Za-z0-9_.-]+)-(?P<epoch>\d{5,})-(?P<root>[0-9a-f]{8})\.era1$")


@dataclass(frozen=True, slots=True)
class Era1Name:
    """The parts of an Era1 file name, ``<network>-<epoch>-<root prefix>.era1``."""

    network: str
    epoch: int
    root_prefix: str
    """Hex of the accumulator root's first four bytes."""

    @classmethod
    def parse(cls, name: str) -> Era1Name | None:
        """The parts of an Era1 file name, or None if ``name`` is not one."""
        match = _NAME.match(name)
        if match is None:
            return None
        return cls(match["network"], int(match["epoch"]), match["root"])

    def __str__(self) -> str:
        return f"{self.network}-{self.epoch:05d}-{self.root_prefix}.era1"


def era1_filename(network: str, epoch: int, root: Hash32) -> str:
    """The standard name of an epoch's Era1 file (network, epoch, accumulator root prefix)."""
    return str(Era1Name(network, epoch, root[:4].hex()))


class Era1File(MappedFile):
    """One open Era1 file; damage raises :class:`~ethread.era1.e2store.FormatError`."""

    kind: Literal["era1"] = "era1"

    def __init__(self, path: str | Path) -> None:
        super().__init__(path, e2store.HEADER_SIZE * 3 + 32 + 24, "an Era1 file")
        self._buf = self._map
        size = self.size
        self.count = _U64.unpack_from(self._buf, size - 8)[0]
        if not 1 <= self.count <= EPOCH_SIZE:
            raise FormatError(self._where, size - 8, f"truncated or corrupted: the block index "
                              f"count reads {self.count}")
        index_length = 16 + 8 * self.count
        index_at = size - e2store.HEADER_SIZE - index_length
        index = read_record(self._buf, index_at, self._where, e2store.BLOCK_INDEX)
        if index.length != index_length:
            raise FormatError(self._where, index_at, "corrupted: block index length does not "
                              "match its count")
        self.start = _U64.unpack_from(self._buf, index.data_offset)[0]
        self._offsets = [
            index_at + _I64.unpack_from(self._buf, index.data_offset + 8 + 8 * i)[0]
            for i in range(self.count)
        ]
        self._accumulator_at = index_at - e2store.HEADER_SIZE - 32
        read_record(self._buf, self._accumulator_at, self._where, e2store.ACCUMULATOR)

    # ----------------------------------------------------------------------------------------

    def accumulator(self) -> Hash32:
        """The file's accumulator root: the hash tree root of its blocks' header records."""
        at = self._accumulator_at + e2store.HEADER_SIZE
        return bytes(self._buf[at:at + 32])

    def offset(self, number: int) -> int:
        """Where block ``number``'s records start (for error messages)."""
        if not self.start <= number < self.end:
            raise KeyError(number)
        return int(self._offsets[number - self.start])

    def _tuple(self, number: int) -> tuple[Record, Record, Record, Record]:
        if not self.start <= number < self.end:
            raise KeyError(number)
        offset = self._offsets[number - self.start]
        header = read_record(self._buf, offset, self._where, e2store.COMPRESSED_HEADER)
        body = read_record(self._buf, header.end, self._where, e2store.COMPRESSED_BODY)
        receipts = read_record(self._buf, body.end, self._where, e2store.COMPRESSED_RECEIPTS)
        td = read_record(self._buf, receipts.end, self._where, e2store.TOTAL_DIFFICULTY)
        return header, body, receipts, td

    def header_rlp(self, number: int) -> bytes:
        """The RLP header of block ``number``, decompressed."""
        return self._inflate(self._tuple(number)[0])

    def body_rlp(self, number: int) -> bytes:
        """The RLP block body of block ``number``, decompressed."""
        return self._inflate(self._tuple(number)[1])

    def receipts_rlp(self, number: int) -> bytes:
        """The RLP receipts of block ``number``, decompressed."""
        return self._inflate(self._tuple(number)[2])

    def total_difficulty(self, number: int) -> int:
        """The total difficulty of the chain up to and including block ``number``."""
        record = self._tuple(number)[3]
        if record.length != 32:
            raise FormatError(self._where, record.offset, "corrupted: total difficulty is not "
                              "32 bytes")
        return int.from_bytes(bytes(self._buf[record.data_offset:record.end]), "little")

    def raw_tuple(self, number: int) -> tuple[bytes, bytes, bytes, int]:
        """(header RLP, body RLP, receipts RLP, total difficulty) of one block."""
        header, body, receipts, td = self._tuple(number)
        if td.length != 32:
            raise FormatError(self._where, td.offset, "corrupted: total difficulty is not "
                              "32 bytes")
        return (self._inflate(header), self._inflate(body), self._inflate(receipts),
                int.from_bytes(self._buf[td.data_offset:td.end], "little"))
