"""era1/file.py: the real Sepolia Era1 files read through their block index, checked by what
a chain must satisfy (each header's parent is the hash of the one before, the body matches
the header's transactions root and uncles hash, the receipts its receipts root, total
difficulty adds each header's difficulty, the name's prefix is the accumulator root's) with
pyrlp and py-trie as the oracles; file names; and files built here byte by byte from the
e2store layout, whole or damaged, each damage met by FormatError naming file and offset."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

import cramjam
import pytest
import rlp
from eth_hash.auto import keccak
from hypothesis import given
from hypothesis import strategies as st
from trie import HexaryTrie

from ethread.era1.e2store import FormatError
from ethread.era1.file import Era1File, Era1Name, era1_filename
from tests.support.paths import conformance_dir

SEPOLIA_GENESIS = bytes.fromhex("25a5cc106eea7138acab33231d7160d69cb777ee0c2c553fcddf5138993e6dd9")
"""Sepolia's genesis hash, as every client's chain configuration has it."""
EMPTY_TRIE = bytes.fromhex("56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421")


@pytest.fixture(scope="module")
def epoch0() -> Iterator[Era1File]:
    era = Era1File(conformance_dir() / "era1" / "sepolia-00000-643a00f7.era1")
    yield era
    era.close()


@pytest.fixture(scope="module")
def epoch21() -> Iterator[Era1File]:
    era = Era1File(conformance_dir() / "era1" / "sepolia-00021-b8814b14.era1")
    yield era
    era.close()


def _uint(raw: bytes) -> int:
    return int.from_bytes(raw, "big")


def _trie_root(items: list[bytes]) -> bytes:
    trie = HexaryTrie({})
    for index, item in enumerate(items):
        trie[rlp.encode(index)] = item
    return trie.root_hash


def test_the_first_epoch_starts_with_sepolias_genesis(epoch0: Era1File) -> None:
    assert (epoch0.start, epoch0.count, epoch0.end) == (0, 8192, 8192)
    assert epoch0.kind == "era1"
    assert epoch0.size == (conformance_dir() / "era1" / "sepolia-00000-643a00f7.era1").stat().st_size
    genesis = rlp.decode(epoch0.header_rlp(0))
    assert keccak(epoch0.header_rlp(0)) == SEPOLIA_GENESIS
    assert epoch0.total_difficulty(0) == _uint(genesis[7])  # the genesis's own difficulty
    assert epoch0.accumulator()[:4].hex() == "643a00f7"  # what the file's name says


def test_every_block_of_an_epoch_chains_to_the_one_before(epoch21: Era1File) -> None:
    assert (epoch21.start, epoch21.count) == (21 * 8192, 8192)
    assert epoch21.accumulator()[:4].hex() == "b8814b14"
    previous_hash = None
    previous_td = None
    transactions = 0
    for number in range(epoch21.start, epoch21.end):
        header_rlp, body_rlp, receipts_rlp, td = epoch21.raw_tuple(number)
        if number % 512 == 0:  # the one-record readers answer what raw_tuple does
            assert (header_rlp, body_rlp, receipts_rlp, td) == (
                epoch21.header_rlp(number), epoch21.body_rlp(number),
                epoch21.receipts_rlp(number), epoch21.total_difficulty(number))
        header = rlp.decode(header_rlp)
        assert _uint(header[8]) == number
        if previous_hash is not None:
            assert header[0] == previous_hash
            assert td == previous_td + _uint(header[7])
        previous_hash, previous_td = keccak(header_rlp), td
        txs, uncles = rlp.decode(body_rlp)
        assert header[1] == keccak(rlp.encode(uncles))
        if txs:
            transactions += len(txs)
            encoded = [rlp.encode(tx) if isinstance(tx, list) else tx for tx in txs]
            assert header[4] == _trie_root(encoded)
            receipts = rlp.decode(receipts_rlp)
            assert header[5] == _trie_root(
                [rlp.encode(r) if isinstance(r, list) else r for r in receipts])
        else:
            assert header[4] == EMPTY_TRIE == header[5]
    assert transactions == 93  # as the conformance data's README counts them


def test_offsets_increase_with_the_block_number(epoch21: Era1File) -> None:
    offsets = [epoch21.offset(n) for n in range(epoch21.start, epoch21.end)]
    assert offsets == sorted(set(offsets))
    assert offsets[0] == 8  # right after the version record


@pytest.mark.parametrize("delta", [-1, 8192, 10**6])
def test_a_block_outside_the_file_is_a_key_error(epoch21: Era1File, delta: int) -> None:
    number = epoch21.start + delta
    for call in (epoch21.offset, epoch21.header_rlp, epoch21.body_rlp, epoch21.receipts_rlp,
                 epoch21.total_difficulty, epoch21.raw_tuple):
        with pytest.raises(KeyError):
            call(number)


# names

@given(st.from_regex(r"[A-Za-z0-9_.]{1,12}", fullmatch=True), st.integers(0, 10**7),
       st.binary(min_size=32, max_size=32))
def test_a_file_name_round_trips(network: str, epoch: int, root: bytes) -> None:
    name = era1_filename(network, epoch, root)
    assert name == f"{network}-{epoch:05d}-{root[:4].hex()}.era1"
    assert Era1Name.parse(name) == Era1Name(network, epoch, root[:4].hex())


@pytest.mark.parametrize("name", [
    "sepolia-0000-643a00f7.era1",  # four-digit epoch
    "sepolia-00000-643a00f.era1",  # seven hex digits
    "sepolia-00000-643A00F7.era1",  # upper-case hex
    "sepolia-00000-643a00f7.era",
    "sepolia-00000-643a00f7.era1.partial",
    "sepolia 1-00000-643a00f7.era1",
    "-00000-643a00f7.era1",
])
def test_a_name_of_another_form_is_none(name: str) -> None:
    assert Era1Name.parse(name) is None


def test_the_real_files_names_parse() -> None:
    assert Era1Name.parse("sepolia-00021-b8814b14.era1") == Era1Name("sepolia", 21, "b8814b14")
    assert str(Era1Name("mainnet", 3, "00ff00ff")) == "mainnet-00003-00ff00ff.era1"


# files built here from the layout (not by ethread's writer)

def _record(kind: bytes, data: bytes, reserved: int = 0) -> bytes:
    return kind + struct.pack("<IH", len(data), reserved) + data


def _snappy(data: bytes) -> bytes:
    return bytes(cramjam.snappy.compress(data))


def _era1_bytes(start: int, blocks: list[tuple[bytes, bytes, bytes, bytes]],
                count: int | None = None, index_extra: bytes = b"") -> bytes:
    """An Era1 file: ``blocks`` are (header, body, receipts, total difficulty) records' data."""
    out = bytearray(_record(b"e2", b""))
    offsets = []
    for header, body, receipts, td in blocks:
        offsets.append(len(out))
        out += _record(b"\x03\x00", header) + _record(b"\x04\x00", body)
        out += _record(b"\x05\x00", receipts) + _record(b"\x06\x00", td)
    out += _record(b"\x07\x00", b"\xaa" * 32)
    index_at = len(out)
    n = len(blocks) if count is None else count
    index = struct.pack("<Q", start) + b"".join(struct.pack("<q", o - index_at) for o in offsets)
    out += _record(b"f2", index + index_extra + struct.pack("<Q", n))
    return bytes(out)


def _block(tag: int, td: int) -> tuple[bytes, bytes, bytes, bytes]:
    return (_snappy(b"header%d" % tag), _snappy(b"body%d" % tag), _snappy(b"receipts%d" % tag),
            td.to_bytes(32, "little"))


def _write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "test-00000-aaaaaaaa.era1"
    path.write_bytes(data)
    return path


def test_a_file_built_from_the_layout_reads_back(tmp_path: Path) -> None:
    path = _write(tmp_path, _era1_bytes(100, [_block(i, 1000 + i) for i in range(3)]))
    era = Era1File(path)
    try:
        assert (era.start, era.count, era.end, era.size) == (100, 3, 103, path.stat().st_size)
        assert era.accumulator() == b"\xaa" * 32
        for i in range(3):
            assert era.raw_tuple(100 + i) == (b"header%d" % i, b"body%d" % i, b"receipts%d" % i,
                                              1000 + i)
    finally:
        era.close()


def _refusal(path: Path, number: int | None = None) -> FormatError:
    with pytest.raises(FormatError) as caught:
        era = Era1File(path)
        if number is not None:
            era.raw_tuple(number)
    assert caught.value.path == str(path)
    assert str(caught.value) == f"{path}: at byte {caught.value.offset}: {caught.value.detail}"
    return caught.value


def test_a_missing_file_cannot_be_opened(tmp_path: Path) -> None:
    error = _refusal(tmp_path / "nothing-00000-aaaaaaaa.era1")
    assert error.offset == 0 and error.detail.startswith("cannot open: ")


def test_a_file_too_short_for_an_era1_file_is_truncated(tmp_path: Path) -> None:
    error = _refusal(_write(tmp_path, _record(b"e2", b"") * 3))
    assert error.detail == "truncated: 24 bytes is too short for an Era1 file"


@pytest.mark.parametrize("count", [0, 8193])
def test_an_index_count_out_of_range_is_refused(tmp_path: Path, count: int) -> None:
    data = _era1_bytes(0, [_block(0, 1)], count=count)
    error = _refusal(_write(tmp_path, data))
    assert (error.offset, error.detail) == (
        len(data) - 8, f"truncated or corrupted: the block index count reads {count}")


def test_an_index_whose_length_disagrees_with_its_count_is_refused(tmp_path: Path) -> None:
    data = bytearray(_era1_bytes(0, [_block(0, 1), _block(1, 2)]))
    index_at = len(data) - 8 - 32
    data[index_at + 2:index_at + 6] = struct.pack("<I", 24)  # a record shorter than 2 blocks need
    error = _refusal(_write(tmp_path, bytes(data)))
    assert (error.offset, error.detail) == (
        index_at, "corrupted: block index length does not match its count")


def test_an_index_longer_than_its_count_says_is_not_found(tmp_path: Path) -> None:
    data = _era1_bytes(0, [_block(0, 1), _block(1, 2)], index_extra=b"\x00" * 8)
    error = _refusal(_write(tmp_path, data))
    # found by its count from the end, the index is looked for 8 bytes into the real one,
    # where its first field (the start, 0) reads as a header of type 0x0000
    real_index_at = len(data) - 8 - 40
    assert (error.offset, error.detail) == (
        real_index_at + 8, "corrupted: expected a block index record, found type 0x0000")


def test_a_file_that_does_not_start_with_a_version_record_is_refused(tmp_path: Path) -> None:
    data = b"e3" + _era1_bytes(0, [_block(0, 1)])[2:]
    error = _refusal(_write(tmp_path, data))
    assert (error.offset, error.detail) == (0, "corrupted: expected a version record, found type 0x6533")


def test_a_nonzero_reserved_field_is_refused(tmp_path: Path) -> None:
    data = _record(b"e2", b"", reserved=1) + _era1_bytes(0, [_block(0, 1)])[8:]
    error = _refusal(_write(tmp_path, data))
    assert (error.offset, error.detail) == (
        0, "corrupted: record header has a nonzero reserved field")


def test_damaged_snappy_data_names_the_record(tmp_path: Path) -> None:
    header, body, receipts, td = _block(0, 1)
    data = _era1_bytes(7, [(header, body[:-3] + b"\x00\x00\x00", receipts, td)])
    path = _write(tmp_path, data)
    era = Era1File(path)
    try:
        assert era.header_rlp(7) == b"header0"
        with pytest.raises(FormatError) as caught:
            era.body_rlp(7)
        body_at = 8 + 8 + len(header)
        assert caught.value.offset == body_at
        assert caught.value.detail.startswith("corrupted compressed body record: ")
    finally:
        era.close()


def test_a_total_difficulty_not_of_32_bytes_is_refused(tmp_path: Path) -> None:
    header, body, receipts, _ = _block(0, 1)
    path = _write(tmp_path, _era1_bytes(0, [(header, body, receipts, b"\x01" * 31)]))
    era = Era1File(path)
    try:
        for call in (era.total_difficulty, era.raw_tuple):
            with pytest.raises(FormatError) as caught:
                call(0)
            assert caught.value.detail == "corrupted: total difficulty is not 32 bytes"
    finally:
        era.close()


def test_records_out_of_order_are_refused(tmp_path: Path) -> None:
    header, body, receipts, td = _block(0, 1)
    data = bytearray(_era1_bytes(0, [(header, body, receipts, td)]))
    body_at = 8 + 8 + len(header)
    data[body_at:body_at + 2] = b"\x05\x00"  # the body's record typed as receipts
    path = _write(tmp_path, bytes(data))
    error = _refusal(path, 0)
    assert (error.offset, error.detail) == (
        body_at, "corrupted: expected a compressed body record, found type 0x0500")


def test_a_file_cut_before_its_index_is_refused(tmp_path: Path) -> None:
    data = _era1_bytes(0, [_block(0, 1)])
    cut = data[:-(8 + 8 + 8 + 8)]  # the index record (start, one offset, count) gone
    error = _refusal(_write(tmp_path, cut))
    # the count is then read from the accumulator's last eight bytes
    assert (error.offset, error.detail) == (
        len(cut) - 8, f"truncated or corrupted: the block index count reads {0xaa * 0x0101010101010101}")


def test_an_index_pointing_past_the_end_is_refused(tmp_path: Path) -> None:
    data = bytearray(_era1_bytes(0, [_block(0, 1)]))
    data[-16:-8] = struct.pack("<q", 10**6)  # block 0's offset, relative to the index
    path = _write(tmp_path, bytes(data))
    error = _refusal(path, 0)
    index_at = len(data) - 32
    assert (error.offset, error.detail) == (
        index_at + 10**6, f"truncated: no record header (file is {len(data)} bytes)")
