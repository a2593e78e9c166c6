"""The e2store container: a flat sequence of typed records, each an 8-byte header (type: 2 bytes,
length: u32 little-endian, reserved: u16 zero) followed by ``length`` bytes of data.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from ..errors import StoreError
from .snappy import SnappyError, decompress

HEADER = struct.Struct("<2sIH")
HEADER_SIZE = HEADER.size

VERSION = b"e2"
COMPRESSED_HEADER = b"\x03\x00"
COMPRESSED_BODY = b"\x04\x00"
COMPRESSED_RECEIPTS = b"\x05\x00"
TOTAL_DIFFICULTY = b"\x06\x00"
ACCUMULATOR = b"\x07\x00"
BLOCK_INDEX = b"f2"
SLIM_RECEIPTS = b"\x0a\x00"  # ere only
PROOF = b"\x0b\x00"  # ere only
DYNAMIC_INDEX = b"g2"  # ere's block index

TYPE_NAMES = {
    VERSION: "version",
    COMPRESSED_HEADER: "compressed header",
    COMPRESSED_BODY: "compressed body",
    COMPRESSED_RECEIPTS: "compressed receipts",
    TOTAL_DIFFICULTY: "total difficulty",
    ACCUMULATOR: "accumulator",
    BLOCK_INDEX: "block index",
    SLIM_RECEIPTS: "slim receipts",
    PROOF: "proof",
    DYNAMIC_INDEX: "dynamic block index",
}


class FormatError(StoreError):
    """An archive file that is truncated or malformed; the message names file and byte offset."""

    def __init__(self, path: str, offset: int, detail: str) -> None:
        super().__init__(f"{path}: at byte {offset}: {detail}")
        self.path = path
        self.offset = offset
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Record:
    """One e2store record: its type, where its header starts and its data's length."""

    type: bytes
    offset: int
    """Where the record's header starts."""
    length: int

    @property
    def data_offset(self) -> int:
        """Where the record's data starts, past its 8-byte header."""
        return self.offset + HEADER_SIZE

    @property
    def end(self) -> int:
        """Where the record ends (the next record's offset)."""
        return self.offset + HEADER_SIZE + self.length


def read_record(buf: bytes | mmap.mmap, offset: int, path: str,
                expected: bytes | None = None) -> Record:
    """The record whose header starts at ``offset``, checked to lie inside the buffer."""
    size = len(buf)
    if offset < 0 or offset + HEADER_SIZE > size:
        raise FormatError(path, offset, f"truncated: no record header (file is {size} bytes)")
    kind, length, reserved = HEADER.unpack_from(buf, offset)
    if reserved != 0:
        raise FormatError(path, offset, "corrupted: record header has a nonzero reserved field")
    record = Record(kind, offset, length)
    if record.end > size:
        raise FormatError(path, offset, f"truncated: record of {length} bytes runs past the end "
                          f"of the file ({size} bytes)")
    if expected is not None and kind != expected:
        raise FormatError(path, offset, f"corrupted: expected a {TYPE_NAMES[expected]} record, "
                          f"found type 0x{kind.hex()}")
    return record


def map_file(path: str, least: int, what: str) -> mmap.mmap:
    """The file at ``path`` memory-mapped read-only; :class:`FormatError` when it cannot be
    opened or is shorter than ``least`` bytes (too short for ``what``)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise FormatError(path, 0, f"cannot open: {exc.strerror}") from None
    try:
        size = os.fstat(fd).st_size
        if size < least:
            raise FormatError(path, 0, f"truncated: {size} bytes is too short for {what}")
        return mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)


class MappedFile:
    """An e2store file mapped read-only (``path``, ``size``), starting with its version record;
    a subclass reads its block index into ``start`` and ``count``."""

    start: int
    count: int

    def __init__(self, path: str | Path, least: int, what: str) -> None:
        self.path = Path(path)
        self._where = str(self.path)
        # Slicing the map copies bytes out, so no view pins it and close() always works.
        self._map = map_file(self._where, least, what)
        self.size = len(self._map)
        read_record(self._map, 0, self._where, VERSION)

    def close(self) -> None:
        """Unmap the file."""
        self._map.close()

    @property
    def end(self) -> int:
        """One past the last block number held."""
        return self.start + self.count

    def _inflate(self, record: Record) -> bytes:
        try:
            return decompress(self._map[record.data_offset:record.end])
        except SnappyError as exc:
            raise FormatError(self._where, record.offset,
                              f"corrupted {TYPE_NAMES[record.type]} record: {exc}") from None


def encode_record(kind: bytes, data: bytes) -> bytes:
    """An e2store record: the 8-byte header (type, length, reserved) followed by ``data``."""
    return HEADER.pack(kind, len(data), 0) + data


def write_file(folder: str | Path, name: str, data: bytes) -> Path:
    """Write an archive file into ``folder`` (made if missing) atomically."""
    path = Path(folder) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(name + ".partial")
    partial.write_bytes(data)
    os.replace(partial, path)
    return path
