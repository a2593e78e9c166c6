"""``ere`` archives: the shared sample read as geth wrote it, the format's pieces, round trips
of pre- and post-merge history through export, verify and the Era backend, and damage."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest
import rlp
from eth_bloom import BloomFilter  # type: ignore[attr-defined]
from trie import HexaryTrie

import ethread
from ethread.backend import LogQuery
from ethread.backends.era import EraBackend
from ethread.backends.memory import MemoryBackend
from ethread.cli import main
from ethread.era1 import FormatError
from ethread.era1.ere import (
    EreFile,
    EreName,
    EreWriter,
    consensus_to_slim,
    logs_bloom,
    slim_to_consensus,
)
from ethread.era1.ere_export import export_ere
from ethread.era1.ere_verify import verify_ere
from ethread.era1.verify import trie_root
from ethread.errors import StoreError
from ethread.rlpcodec.headers import decode_header
from ethread.rlpcodec.receipts import encode_receipts
from tests.support.paths import conformance_dir

SAMPLE = "sepolia-00000-deadbeef-noreceipts.ere"


def _ask(backend: object, method: str, *params: object) -> object:
    request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}
    return json.loads(ethread.handle(backend, json.dumps(request).encode()))  # type: ignore[arg-type]


# -- the shared sample ---------------------------------------------------------------------------


def test_sample_reads_as_written() -> None:
    ere = EreFile(conformance_dir() / "era1" / SAMPLE)
    try:
        assert (ere.start, ere.count) == (0, 1)
        assert ere.held_components() == ("header", "body", "total_difficulty")
        assert not ere.has_receipts and not ere.has_proofs
        assert ere.accumulator() is None
        assert ere.total_difficulty(0) == 1
        assert ere.receipts_rlp(0) is None and ere.proof(0) is None
        assert ere.body_rlp(0) == bytes.fromhex("c2c0c0")
        header = decode_header(ere.header_rlp(0))
        assert (header.number, header.difficulty, header.gas_limit) == (0, 1, 0)
        assert ere.last_hash().hex().startswith("e0f878f2")
        with pytest.raises(KeyError):
            ere.header_rlp(1)
    finally:
        ere.close()
    name = EreName.parse(SAMPLE)
    assert name == EreName("sepolia", 0, "deadbeef", ("noreceipts",))
    assert str(name) == SAMPLE


def test_sample_is_refused_by_verify_and_serve(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Its header is a zeroed test header (no real transactions root) and its name does not
    abbreviate its block's hash: verify says which check fails, the backend will not serve it."""
    ere = EreFile(conformance_dir() / "era1" / SAMPLE)
    with pytest.raises(FormatError, match="block 0: transactions do not match"):
        verify_ere(ere)
    ere.close()
    assert main(["verify", "--era", str(conformance_dir() / "era1" / SAMPLE)]) == 1
    assert "FAILED" in capsys.readouterr().out
    shutil.copy(conformance_dir() / "era1" / SAMPLE, tmp_path / SAMPLE)
    with pytest.raises(StoreError, match="not the name's deadbeef"):
        EraBackend(tmp_path)


# -- pieces ----------------------------------------------------------------------------------------


def test_trie_root_stores_a_decoded_list_as_its_rlp() -> None:
    """verify's roots take a body as rlp.decode gives it: a legacy transaction (a list) is
    stored as its RLP, a typed envelope (a string) as it is."""
    items: list[object] = [[b"\x01", b"", b"\x02" * 20], b"\x02" + b"\xaa" * 40, [b"", [b"\x03"]]]
    reference = HexaryTrie({})
    for position, item in enumerate(items):
        reference[rlp.encode(position)] = rlp.encode(item) if isinstance(item, list) else item
    assert trie_root(items) == reference.root_hash


def test_bloom_matches_eth_bloom() -> None:
    logs: list[object] = [[b"\x11" * 20, [b"\x22" * 32, b"\x33" * 32], b""], [b"\x44" * 20, [], b"x"]]
    expected = BloomFilter.from_iterable([b"\x11" * 20, b"\x22" * 32, b"\x33" * 32, b"\x44" * 20])
    assert logs_bloom(logs) == int(expected).to_bytes(256, "big")  # type: ignore[arg-type]


def test_writer_layout_and_index(tmp_path: Path) -> None:
    writer = EreWriter(8192)
    receipts = bytes.fromhex("c0")
    for i in range(3):
        writer.add(bytes([i]) * 32, b"\xc1\x01", b"\xc2\xc0\xc0", receipts, 0, None)
    data = writer.finish()
    components, count = struct.unpack_from("<QQ", data, len(data) - 16)
    assert (components, count) == (3, 3)  # header, body, receipts; no difficulty after the merge
    path = writer.write(tmp_path, "devnet")
    assert path.name == "devnet-00001-02020202-noproofs.ere"
    ere = EreFile(path)
    assert (ere.start, ere.count, ere.accumulator()) == (8192, 3, None)
    assert ere.receipts_rlp(8194) == b"\xc0" and ere.total_difficulty(8194) is None
    ere.close()


# -- the rpc-compat chain: proof of work, the merge, withdrawals, blobs, set-code ----------------


@pytest.fixture(scope="module")
def compat_ere(rpc_compat_memory: MemoryBackend, tmp_path_factory: pytest.TempPathFactory) -> EraBackend:
    folder = tmp_path_factory.mktemp("compat-ere")
    export_ere(rpc_compat_memory, folder, network="devnet")
    return EraBackend(folder, config=rpc_compat_memory.chain_config())


def test_export_holds_the_merge_as_the_format_says(compat_ere: EraBackend) -> None:
    [ere] = compat_ere.files()
    assert isinstance(ere, EreFile) and ere.path.name.endswith("-noproofs.ere")
    verify_ere(ere)
    assert ere.held_components() == ("header", "body", "receipts", "total_difficulty")
    final = ere.total_difficulty(35)
    assert final is not None and ere.total_difficulty(44) == final  # flat after the merge
    assert ere.accumulator() is not None


def test_receipts_round_trip_through_slim(rpc_compat_memory: MemoryBackend) -> None:
    for number in range(46):
        block_hash = rpc_compat_memory.canonical_hash(number)
        assert block_hash is not None
        receipts = rpc_compat_memory.receipts(block_hash)
        assert receipts is not None
        consensus = encode_receipts(receipts)
        assert slim_to_consensus(consensus_to_slim(consensus)) == consensus


def test_ere_answers_like_memory(rpc_compat_memory: MemoryBackend, compat_ere: EraBackend) -> None:
    assert (compat_ere.pointer("earliest"), compat_ere.pointer("latest")) == (0, 45)
    for number in range(46):
        for full in (False, True):
            assert _ask(compat_ere, "eth_getBlockByNumber", hex(number), full) == \
                _ask(rpc_compat_memory, "eth_getBlockByNumber", hex(number), full)
        assert _ask(compat_ere, "eth_getBlockReceipts", hex(number)) == \
            _ask(rpc_compat_memory, "eth_getBlockReceipts", hex(number))
        block = rpc_compat_memory.block_by_hash(rpc_compat_memory.canonical_hash(number) or b"")
        assert block is not None
        for tx in block.transactions:
            assert _ask(compat_ere, "eth_getTransactionReceipt", "0x" + tx.hash.hex()) == \
                _ask(rpc_compat_memory, "eth_getTransactionReceipt", "0x" + tx.hash.hex())
    assert compat_ere.logs(LogQuery(0, 45)) == rpc_compat_memory.logs(LogQuery(0, 45))


def test_reexport_is_identical(compat_ere: EraBackend, tmp_path: Path) -> None:
    [again] = export_ere(compat_ere, tmp_path, network="devnet")
    assert again.read_bytes() == compat_ere.files()[0].path.read_bytes()


def test_noreceipts_profile(rpc_compat_memory: MemoryBackend, tmp_path: Path) -> None:
    [path] = export_ere(rpc_compat_memory, tmp_path, network="devnet", receipts=False)
    assert path.name.endswith("-noproofs-noreceipts.ere")
    ere = EreFile(path)
    verify_ere(ere)
    ere.close()
    with EraBackend(tmp_path, config=rpc_compat_memory.chain_config()) as backend:
        assert _ask(backend, "eth_getBlockByNumber", "0x2d", True) == \
            _ask(rpc_compat_memory, "eth_getBlockByNumber", "0x2d", True)


def test_damage_is_named(compat_ere: EraBackend, tmp_path: Path) -> None:
    source = compat_ere.files()[0].path
    data = bytearray(source.read_bytes())
    cut = tmp_path / "cut" / source.name
    cut.parent.mkdir()
    cut.write_bytes(data[:-5])
    with pytest.raises(FormatError, match=r"block index|truncated"):
        EreFile(cut)
    ere = EreFile(source)
    at = ere.offset(40) + 8 + 20  # inside block 40's compressed header
    ere.close()
    data[at] ^= 0xFF
    bad = tmp_path / "bad" / source.name
    bad.parent.mkdir()
    bad.write_bytes(data)
    ere = EreFile(bad)
    with pytest.raises(FormatError, match=f"at byte {at - 28}: "):
        verify_ere(ere)
    ere.close()


# -- Sepolia: Era1 in, ere out, the same answers; a folder mixing both ---------------------------


def test_sepolia_era1_to_ere_and_a_mixed_folder(tmp_path: Path) -> None:
    era1 = conformance_dir() / "era1" / "sepolia-00021-b8814b14.era1"
    source = tmp_path / "source"
    source.mkdir()
    (source / era1.name).symlink_to(era1)
    out = tmp_path / "ere"
    with EraBackend(source) as backend:
        assert main(["export", "--format", "ere", "--from-era", str(source), "--era", str(out),
                     "--first", "172032"]) == 0
        [path] = sorted(out.glob("*.ere"))
        assert path.name == f"sepolia-00021-{backend.canonical_hash(180223).hex()[:8]}-noproofs.ere"  # type: ignore[union-attr]
        assert main(["verify", "--era", str(out)]) == 0
        mixed = tmp_path / "mixed"
        mixed.mkdir()
        (mixed / "sepolia-00000-643a00f7.era1").symlink_to(
            conformance_dir() / "era1" / "sepolia-00000-643a00f7.era1")
        shutil.copy(path, mixed / path.name)
        with EraBackend(mixed) as served:
            assert "1 Era1 files, 1 ere files" in repr(served)
            assert served.pointer("latest") == 180223
            assert served.pointer("earliest") == 0 and served.canonical_hash(8191) is not None
            for number in (172032, 172033, 175000, 180223):
                assert _ask(served, "eth_getBlockByNumber", hex(number), True) == \
                    _ask(backend, "eth_getBlockByNumber", hex(number), True)
                assert _ask(served, "eth_getBlockReceipts", hex(number)) == \
                    _ask(backend, "eth_getBlockReceipts", hex(number))
            assert served.logs(LogQuery(172032, 180223)) == backend.logs(LogQuery(172032, 180223))


def test_shared_folder_sets_the_receiptless_sample_aside(tmp_path: Path) -> None:
    """The shared folder holds the two Sepolia Era1 files and the one-block ``noreceipts``
    sample for epoch 0: the Era1 file, which holds receipts, serves that epoch."""
    with EraBackend(conformance_dir() / "era1", index_path=tmp_path / "index.sqlite") as backend:
        assert [p.name for p in backend.set_aside] == [SAMPLE]
        assert [era.kind for era in backend.files()] == ["era1", "era1"]
        assert "set aside" in repr(backend)
