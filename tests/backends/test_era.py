"""Era1: the real Sepolia archives are served and verified, export reproduces them byte for
byte, damage gives errors naming file and offset, and exported rpc-compat history answers
like memory; what history alone cannot answer (state, a range across a gap between archives)
is a clear error naming no folder."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import rlp
from eth_utils import keccak
from trie import HexaryTrie

import ethread
from ethread.backend import LogQuery
from ethread.backends.era import EraBackend
from ethread.backends.era_index import HistoryIndex
from ethread.backends.memory import MemoryBackend
from ethread.era1 import Era1File, FormatError, export_era1, verify_file
from ethread.errors import StateUnavailable, StoreError
from ethread.rlpcodec.headers import encode_header
from ethread.rlpcodec.receipts import encode_receipts
from ethread.rlpcodec.transactions import transaction_item
from tests.support.paths import conformance_dir
from tests.support.storage_backends import era_from

SEPOLIA_FILES = ("sepolia-00000-643a00f7.era1", "sepolia-00021-b8814b14.era1")
SEPOLIA_RANGES = (range(0, 8192), range(172032, 180224))


@pytest.fixture(scope="module")
def sepolia_dir() -> Path:
    return conformance_dir() / "era1"


@pytest.fixture(scope="module")
def sepolia(sepolia_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> EraBackend:
    index = tmp_path_factory.mktemp("index") / "index.sqlite"
    return EraBackend(sepolia_dir, index_path=index)


def _root(items: list[bytes | list[object]]) -> bytes:
    trie = HexaryTrie({})
    for position, item in enumerate(items):
        trie[rlp.encode(position)] = rlp.encode(item) if isinstance(item, list) else item
    return bytes(trie.root_hash)


def test_sepolia_blocks_recompute(sepolia: EraBackend) -> None:
    assert sepolia.chain_config() is not None
    assert sepolia.chain_config().chain_id == 11155111  # type: ignore[union-attr]
    assert (sepolia.pointer("earliest"), sepolia.pointer("latest")) == (0, 180223)
    assert sepolia.canonical_hash(100_000) is None
    transactions = uncles = 0
    for numbers in SEPOLIA_RANGES:
        parent = None
        for number in numbers:
            block_hash = sepolia.canonical_hash(number)
            assert block_hash is not None
            block = sepolia.block_by_hash(block_hash)
            assert block is not None and block.number == number
            assert keccak(encode_header(block.header)) == block_hash
            if parent is not None:
                assert block.header.parent_hash == parent
            parent = block_hash
            uncles += len(block.uncles)
            assert keccak(rlp.encode([rlp.decode(encode_header(u)) for u in block.uncles])) == \
                block.header.uncles_hash
            if not block.transactions:
                continue
            transactions += len(block.transactions)
            items = [transaction_item(tx.transaction) for tx in block.transactions]
            assert _root(items) == block.header.transactions_root
            receipts = sepolia.receipts(block_hash)
            assert receipts is not None
            assert _root(rlp.decode(encode_receipts(receipts))) == block.header.receipts_root
            for tx, receipt in zip(block.transactions, receipts, strict=True):
                assert sepolia.transaction_location(tx.hash) == (block_hash, tx.index)
                assert receipt.sender == tx.sender
                assert receipt.gas_used > 0
    assert (transactions, uncles) == (93, 1273)


def test_sepolia_senders_are_recovered(sepolia: EraBackend) -> None:
    # The first transactions of the later file: senders recovered from signatures, and the
    # receipts' gas adds up to the header's.
    for number in range(172032, 180224):
        block = sepolia.block_by_hash(sepolia.canonical_hash(number) or b"")
        assert block is not None
        if block.transactions:
            receipts = sepolia.receipts(block.hash) or ()
            assert sum(r.gas_used for r in receipts) == block.header.gas_used
            assert all(len(tx.sender) == 20 and any(tx.sender) for tx in block.transactions)


def test_sepolia_accumulators_match_names(sepolia_dir: Path) -> None:
    for name in SEPOLIA_FILES:
        era = Era1File(sepolia_dir / name)
        assert era.accumulator()[:4].hex() == name.split("-")[2][:8]
        verify_file(era)
        era.close()


def test_export_is_byte_identical(sepolia: EraBackend, sepolia_dir: Path, tmp_path: Path) -> None:
    written = export_era1(sepolia, tmp_path)
    assert sorted(p.name for p in written) == sorted(SEPOLIA_FILES)
    for path in written:
        assert path.read_bytes() == (sepolia_dir / path.name).read_bytes()


def test_no_state(sepolia: EraBackend) -> None:
    with pytest.raises(StateUnavailable, match="history only"):
        sepolia.evm_database()
    request = {"jsonrpc": "2.0", "id": 1, "method": "eth_call",
               "params": [{"to": "0x" + "00" * 20}, "0x2a000"]}
    answer = json.loads(ethread.handle(sepolia, json.dumps(request).encode()))
    assert "error" in answer and "history only" in answer["error"]["message"]


# --------------------------------------------------------------------------------------------
# Damage


def _folder_with(tmp_path: Path, source: Path, data: bytes | None = None) -> Path:
    folder = tmp_path / "era"
    folder.mkdir()
    target = folder / source.name
    if data is None:
        target.symlink_to(source)
    else:
        target.write_bytes(data)
    return folder


def test_truncated_file(sepolia_dir: Path, tmp_path: Path) -> None:
    source = sepolia_dir / SEPOLIA_FILES[1]
    data = source.read_bytes()[:-1000]
    folder = _folder_with(tmp_path, source, data)
    with pytest.raises(FormatError) as caught:
        EraBackend(folder)
    assert SEPOLIA_FILES[1] in str(caught.value) and "at byte" in str(caught.value)


def test_file_cut_mid_record(tmp_path: Path, sepolia_dir: Path) -> None:
    source = sepolia_dir / SEPOLIA_FILES[0]
    with pytest.raises(FormatError, match="truncated"):
        EraBackend(_folder_with(tmp_path, source, source.read_bytes()[:5000]))


def test_corrupted_record_names_file_and_offset(sepolia_dir: Path, tmp_path: Path) -> None:
    source = sepolia_dir / SEPOLIA_FILES[1]
    era = Era1File(source)
    offset = era.offset(172032 + 100)
    era.close()
    data = bytearray(source.read_bytes())
    data[offset + 8 + 20] ^= 0xFF  # inside the compressed header: the CRC no longer matches
    folder = _folder_with(tmp_path, source, bytes(data))
    with pytest.raises(FormatError) as caught:
        EraBackend(folder)
    assert caught.value.offset == offset
    assert SEPOLIA_FILES[1] in str(caught.value)
    # Read directly, without the index build: the same error at the same place.
    with pytest.raises(FormatError, match=f"at byte {offset}"):
        Era1File(folder / SEPOLIA_FILES[1]).header_rlp(172032 + 100)


def test_wrong_record_type(sepolia_dir: Path, tmp_path: Path) -> None:
    source = sepolia_dir / SEPOLIA_FILES[0]
    era = Era1File(source)
    offset = era.offset(7)
    era.close()
    data = bytearray(source.read_bytes())
    data[offset] = 0x09
    damaged = tmp_path / SEPOLIA_FILES[0]
    damaged.write_bytes(bytes(data))
    with pytest.raises(FormatError, match=f"at byte {offset}: corrupted: expected a compressed"):
        Era1File(damaged).body_rlp(7)


def test_name_must_match_accumulator(sepolia_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "era"
    folder.mkdir()
    (folder / "sepolia-00000-deadbeef.era1").symlink_to(sepolia_dir / SEPOLIA_FILES[0])
    with pytest.raises(StoreError, match="does not match"):
        EraBackend(folder)


def test_empty_or_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no Era1 files"):
        EraBackend(tmp_path)
    with pytest.raises(StoreError, match="no Era1 folder"):
        EraBackend(tmp_path / "absent")


# --------------------------------------------------------------------------------------------
# Two processes

_SERVER = textwrap.dedent(
    """
    import sys
    from ethread.backends.era import EraBackend
    backend = EraBackend(sys.argv[1])
    block_hash = backend.canonical_hash(172032 + 4321)
    tx = backend.block_by_hash(backend.canonical_hash(179999)).header.hash
    print(block_hash.hex(), tx.hex(), flush=True)
    """
)


def test_two_processes_serve_one_folder(sepolia_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "era"
    folder.mkdir()
    for name in SEPOLIA_FILES:
        (folder / name).symlink_to(sepolia_dir / name)
    # Both start before either has built the sidecar index: one builds, the other waits.
    children = [
        subprocess.Popen([sys.executable, "-c", _SERVER, str(folder)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [child.communicate(timeout=120) for child in children]
    assert [child.returncode for child in children] == [0, 0], outputs
    assert outputs[0][0] == outputs[1][0] and outputs[0][0].strip()
    with EraBackend(folder) as backend:
        assert backend.canonical_hash(172032 + 4321) == bytes.fromhex(outputs[0][0].split()[0])


# --------------------------------------------------------------------------------------------
# The rpc-compat chain's proof-of-work part, exported and served


@pytest.fixture(scope="module")
def compat_era(rpc_compat_memory: MemoryBackend, tmp_path_factory: pytest.TempPathFactory) -> EraBackend:
    return era_from(rpc_compat_memory, tmp_path_factory.mktemp("compat-era"))


def _ask(backend: object, method: str, *params: object) -> object:
    request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}
    return json.loads(ethread.handle(backend, json.dumps(request).encode()))  # type: ignore[arg-type]


def test_exported_history_answers_like_memory(rpc_compat_memory: MemoryBackend,
                                              compat_era: EraBackend) -> None:
    last = compat_era.pointer("latest")
    assert last == 35  # the merge is at block 36
    for number in range(last + 1):
        block_hash = rpc_compat_memory.canonical_hash(number)
        assert block_hash is not None
        assert compat_era.block_by_hash(block_hash) == rpc_compat_memory.block_by_hash(block_hash)
        assert compat_era.receipts(block_hash) == rpc_compat_memory.receipts(block_hash)
        for full in (False, True):
            assert _ask(compat_era, "eth_getBlockByNumber", hex(number), full) == \
                _ask(rpc_compat_memory, "eth_getBlockByNumber", hex(number), full)
        assert _ask(compat_era, "eth_getBlockReceipts", hex(number)) == \
            _ask(rpc_compat_memory, "eth_getBlockReceipts", hex(number))
        block = rpc_compat_memory.block_by_hash(block_hash)
        assert block is not None
        for tx in block.transactions:
            assert _ask(compat_era, "eth_getTransactionByHash", "0x" + tx.hash.hex()) == \
                _ask(rpc_compat_memory, "eth_getTransactionByHash", "0x" + tx.hash.hex())
    everything = rpc_compat_memory.logs(LogQuery(0, last))
    assert compat_era.logs(LogQuery(0, last)) == everything
    for log in everything[::5]:
        query = LogQuery(0, last, addresses=(log.address,), topics=((log.topics[0],),)
                         if log.topics else ())
        assert compat_era.logs(query) == rpc_compat_memory.logs(query)


def test_reexport_of_exported_files_is_identical(compat_era: EraBackend, tmp_path: Path) -> None:
    again = export_era1(compat_era, tmp_path, network="devnet")
    for path in again:
        assert path.read_bytes() == (compat_era.folder / path.name).read_bytes()


def test_index_is_built_once(compat_era: EraBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    assert compat_era.index_path.is_file()

    def rebuild(*args: object) -> None:
        raise AssertionError("the sidecar index was rebuilt")

    monkeypatch.setattr(HistoryIndex, "_index_file", rebuild)
    with EraBackend(compat_era.folder) as again:
        assert again.pointer("latest") == 35
        assert again.block_by_hash(compat_era.canonical_hash(35) or b"") is not None


def test_the_era_history_only_error_names_no_folder(tmp_path: Path,
                                                    rpc_compat_memory: MemoryBackend) -> None:
    from tests.support.storage_backends import era_from

    backend = era_from(rpc_compat_memory, tmp_path / "era")
    body = b'{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"data":"0x"},"0x1"]}'
    answer = json.loads(ethread.handle(backend, body) or b"")
    assert answer["error"]["code"] == -32000
    assert "history only" in answer["error"]["message"]
    assert str(tmp_path) not in answer["error"]["message"]


def test_a_log_range_across_an_era_gap_is_a_clear_error(tmp_path: Path) -> None:
    from ethread.backends.era import EraBackend
    from tests.support.paths import conformance_dir

    sepolia = EraBackend(conformance_dir() / "era1", index_path=tmp_path / "index.sqlite")
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "eth_getLogs", "params": [
        {"fromBlock": hex(8000), "toBlock": hex(8300)}]}).encode()
    answer = json.loads(ethread.handle(sepolia, body) or b"")
    assert answer["error"]["code"] == -32000
    assert "8192..8300" in answer["error"]["message"]
    inside = body.replace(hex(8300).encode(), hex(8100).encode())
    assert "result" in json.loads(ethread.handle(sepolia, inside) or b"")
