"""era1/e2store.py: the record container under Era1 and ere files. A real Sepolia Era1 file
walks record by record from its version record to its block index, ending exactly at the
file's end; records written here read back; a damaged header is refused naming the file and
the byte offset."""

from __future__ import annotations

import struct
from collections import Counter
from pathlib import Path

import pytest

from ethread.era1.e2store import (
    BLOCK_INDEX,
    COMPRESSED_HEADER,
    HEADER_SIZE,
    VERSION,
    FormatError,
    MappedFile,
    encode_record,
    map_file,
    read_record,
)
from tests.support.paths import conformance_dir


def test_a_real_era1_file_walks_from_its_version_to_its_block_index() -> None:
    era1 = conformance_dir() / "era1" / "sepolia-00000-643a00f7.era1"
    data = era1.read_bytes()
    kinds: Counter[bytes] = Counter()
    offset, last = 0, None
    while offset < len(data):
        last = read_record(data, offset, str(era1))
        kinds[last.type] += 1
        offset = last.end
    assert offset == len(data)
    assert read_record(data, 0, str(era1), VERSION).length == 0
    assert last is not None and last.type == BLOCK_INDEX
    # an epoch: 8,192 blocks, each with a header record
    assert kinds[COMPRESSED_HEADER] == 8192
    # the block index: its first block, one offset a block, and the count (8 bytes each)
    assert last.length == 8 * (8192 + 2)


def test_records_written_read_back() -> None:
    buf = encode_record(VERSION, b"") + encode_record(COMPRESSED_HEADER, b"\x01\x02\x03")
    first = read_record(buf, 0, "mem", VERSION)
    second = read_record(buf, first.end, "mem", COMPRESSED_HEADER)
    assert (first.length, second.offset, second.data_offset) == (0, HEADER_SIZE, 2 * HEADER_SIZE)
    assert buf[second.data_offset:second.end] == b"\x01\x02\x03" and second.end == len(buf)


@pytest.mark.parametrize(("buf", "offset", "message"), [
    (b"e2\x00\x00", 0, r"at byte 0: truncated: no record header \(file is 4 bytes\)"),
    (struct.pack("<2sIH", b"e2", 0, 1), 0, "reserved field"),
    (struct.pack("<2sIH", b"e2", 10, 0) + b"abc", 0,
     r"truncated: record of 10 bytes runs past the end of the file \(11 bytes\)"),
    (encode_record(VERSION, b"") + encode_record(BLOCK_INDEX, b""), 8,
     "at byte 8: corrupted: expected a compressed header record, found type 0x6632"),
    (encode_record(VERSION, b""), -1, "truncated"),
])
def test_a_damaged_record_is_refused_naming_the_file_and_offset(buf: bytes, offset: int,
                                                                 message: str) -> None:
    with pytest.raises(FormatError, match=message) as info:
        read_record(buf, offset, "damaged.era1",
                    COMPRESSED_HEADER if b"f2" in buf else None)
    assert str(info.value).startswith("damaged.era1: ")


def test_a_file_too_short_or_missing_is_refused(tmp_path: Path) -> None:
    short = tmp_path / "short.era1"
    short.write_bytes(b"e2")
    with pytest.raises(FormatError, match="truncated: 2 bytes is too short for an Era1 file"):
        map_file(str(short), 16, "an Era1 file")
    with pytest.raises(FormatError, match="cannot open: No such file or directory"):
        map_file(str(tmp_path / "absent.era1"), 16, "an Era1 file")


def test_a_mapped_file_must_start_with_its_version_record(tmp_path: Path) -> None:
    good = tmp_path / "good.e2s"
    good.write_bytes(encode_record(VERSION, b"") + encode_record(BLOCK_INDEX, bytes(24)))
    mapped = MappedFile(good, 8, "an e2store file")
    assert mapped.size == 8 + 8 + 24
    mapped.close()
    bad = tmp_path / "bad.e2s"
    bad.write_bytes(encode_record(BLOCK_INDEX, bytes(24)))
    with pytest.raises(FormatError, match="expected a version record, found type 0x6632"):
        MappedFile(bad, 8, "an e2store file")
