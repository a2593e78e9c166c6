"""era1/archive.py: a folder that mixes Era1 and ``ere`` files, opened by extension, named
by network and epoch, and each file checked to be the one its name says (the first block
starts the epoch; an Era1 name carries the accumulator root's prefix, an ``ere`` name the last
block's hash prefix). The files are the real ones of the conformance data, linked under other
names; the oracles are Sepolia's genesis hash and keccak of the headers read."""

from __future__ import annotations

from pathlib import Path

import pytest
import rlp
from eth_hash.auto import keccak

from ethread.era1.archive import (
    SUFFIXES,
    ArchiveFile,
    archive_network_and_epoch,
    archive_paths,
    check_name,
    is_archive,
    lacks_receipts,
    open_archive,
)
from ethread.era1.ere import EreFile
from ethread.era1.file import Era1File
from ethread.errors import StoreError
from tests.support.paths import conformance_dir

EPOCH0 = "sepolia-00000-643a00f7.era1"
EPOCH21 = "sepolia-00021-b8814b14.era1"
ERE_SAMPLE = "sepolia-00000-deadbeef-noreceipts.ere"
SEPOLIA_GENESIS = "25a5cc106eea7138acab33231d7160d69cb777ee0c2c553fcddf5138993e6dd9"


def _real(name: str) -> Path:
    return conformance_dir() / "era1" / name


def _linked(tmp_path: Path, real: str, name: str) -> Path:
    link = tmp_path / name
    link.symlink_to(_real(real))
    return link


@pytest.mark.parametrize(("name", "archive"), [
    ("a.era1", True), ("a.ere", True), ("a.era", False), ("a.era1.partial", False),
    ("a.ERA1", False), ("era1", False), ("a.e2s", False),
])
def test_an_archive_is_known_by_its_extension(name: str, archive: bool) -> None:
    assert is_archive(Path(name)) is archive
    assert SUFFIXES == (".era1", ".ere")


def test_archive_paths_lists_the_archive_files_of_a_folder_sorted(tmp_path: Path) -> None:
    for name in ("b-00001-00000000.era1", "a-00000-00000000.ere", "c.txt", "a-00002-00000000.era1",
                 "x.era1.partial"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "d.era1").mkdir()  # a folder, whatever its name
    assert [p.name for p in archive_paths(tmp_path)] == [
        "a-00000-00000000.ere", "a-00002-00000000.era1", "b-00001-00000000.era1"]


@pytest.mark.parametrize(("name", "lacks"), [
    (ERE_SAMPLE, True),
    ("sepolia-00000-deadbeef-noproofs-noreceipts.ere", True),
    ("sepolia-00000-deadbeef-noproofs.ere", False),
    ("sepolia-00000-deadbeef.ere", False),
    ("sepolia-00000-deadbeef-noreceipts.era1", False),  # only an ere name has profiles
    ("not an ere name-noreceipts.ere", False),
])
def test_lacks_receipts_reads_the_ere_profile(name: str, lacks: bool) -> None:
    assert lacks_receipts(Path(name)) is lacks


def test_open_archive_opens_each_kind_by_its_extension() -> None:
    era1 = open_archive(_real(EPOCH0))
    ere = open_archive(str(_real(ERE_SAMPLE)))
    try:
        assert isinstance(era1, Era1File) and era1.kind == "era1"
        assert isinstance(ere, EreFile) and ere.kind == "ere"
        files: list[ArchiveFile] = [era1, ere]
        for archive in files:  # the calls both kinds answer
            assert archive.path.is_file() and archive.size == archive.path.stat().st_size
            assert (archive.start, archive.end - archive.count) == (0, 0)
            header, body, _, td = archive.raw_tuple(0)
            assert header == archive.header_rlp(0) and body == archive.body_rlp(0)
            assert td == archive.total_difficulty(0) == int.from_bytes(rlp.decode(header)[7], "big")
            assert archive.offset(0) > 0
        assert keccak(era1.header_rlp(0)).hex() == SEPOLIA_GENESIS
        assert era1.receipts_rlp(0) == bytes.fromhex("c0")  # the genesis has no receipts
        assert ere.receipts_rlp(0) is None and ere.raw_tuple(0)[2] is None  # a noreceipts file
        assert ere.accumulator() is None and era1.accumulator() is not None
    finally:
        era1.close()
        ere.close()


@pytest.mark.parametrize(("name", "network", "epoch"), [
    (EPOCH0, "sepolia", 0), (EPOCH21, "sepolia", 21), (ERE_SAMPLE, "sepolia", 0),
    ("mainnet-01896-e6ebe562.era1", "mainnet", 1896),
    ("mainnet-123456-0011aabb-noproofs.ere", "mainnet", 123456),
])
def test_network_and_epoch_come_from_the_name(name: str, network: str, epoch: int) -> None:
    assert archive_network_and_epoch(Path(name)) == (network, epoch)


@pytest.mark.parametrize(("name", "form"), [
    ("sepolia-0-643a00f7.era1", "<network>-<epoch>-<root prefix>.era1"),
    ("sepolia.era1", "<network>-<epoch>-<root prefix>.era1"),
    ("sepolia-00000.ere", "<network>-<epoch>-<last block hash prefix>(-<profile>)*.ere"),
])
def test_a_name_of_another_form_is_a_store_error(name: str, form: str) -> None:
    with pytest.raises(StoreError) as caught:
        archive_network_and_epoch(Path("/data") / name)
    assert caught.value.message == f"/data/{name}: not an archive file name ({form})"
    assert caught.value.code == StoreError.code


@pytest.mark.parametrize("name", [EPOCH0, EPOCH21])
def test_the_real_era1_files_are_what_their_names_say(name: str) -> None:
    archive = open_archive(_real(name))
    try:
        check_name(archive)
    finally:
        archive.close()


def _refused(path: Path) -> str:
    archive = open_archive(path)
    try:
        with pytest.raises(StoreError) as caught:
            check_name(archive)
        return caught.value.message
    finally:
        archive.close()


def test_an_era1_file_under_another_root_prefix_is_refused(tmp_path: Path) -> None:
    path = _linked(tmp_path, EPOCH0, "sepolia-00000-643a00f8.era1")
    message = _refused(path)
    assert message.startswith(f"{path}: accumulator root 0x643a00f7")
    assert message.endswith(" does not match the name's 643a00f8")


def test_an_era1_file_under_another_epoch_is_refused(tmp_path: Path) -> None:
    path = _linked(tmp_path, EPOCH21, "sepolia-00020-b8814b14.era1")
    assert _refused(path) == (f"{path}: holds blocks from 172032, but its name says epoch 20 "
                              f"(block 163840)")


def test_the_ere_sample_is_named_after_a_hash_it_does_not_end_with(tmp_path: Path) -> None:
    """The sample's one header does not hash to deadbeef...; under its hash's prefix the same
    file passes."""
    ere = EreFile(_real(ERE_SAMPLE))
    try:
        last = keccak(ere.header_rlp(0)).hex()
    finally:
        ere.close()
    path = _linked(tmp_path, ERE_SAMPLE, ERE_SAMPLE)
    assert _refused(path) == f"{path}: its last block's hash is 0x{last}, not the name's deadbeef"
    renamed = _linked(tmp_path, ERE_SAMPLE, f"sepolia-00000-{last[:8]}-noreceipts.ere")
    archive = open_archive(renamed)
    try:
        check_name(archive)
    finally:
        archive.close()


def test_an_archive_under_a_name_of_another_form_is_refused(tmp_path: Path) -> None:
    path = _linked(tmp_path, EPOCH0, "sepolia-epoch0.era1")
    assert _refused(path) == f"{path}: not an archive file name (<network>-<epoch>-<root prefix>.era1)"
