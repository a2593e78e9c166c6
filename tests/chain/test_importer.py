"""Chain import: validation names the block and field, and a failed import keeps the store
consistent (every block before the bad one, nothing of it)."""

from __future__ import annotations

from pathlib import Path

import pytest
import rlp

import ethread
from ethread.chain.genesis import load_genesis
from ethread.chain.importer import ChainImporter
from ethread.errors import GenesisError, ImportFailed
from ethread.rlpcodec.items import split_concatenated


def raw_blocks(rpc_compat_dir: Path) -> list[bytes]:
    return split_concatenated((rpc_compat_dir / "chain.rlp").read_bytes())


def tamper_header(raw: bytes, field_index: int, value: bytes) -> bytes:
    items = rlp.decode(raw)
    items[0][field_index] = value
    return rlp.encode(items)


def test_import_counts_and_pointers(rpc_compat_memory: ethread.MemoryBackend) -> None:
    assert rpc_compat_memory.pointer("latest") == 45
    assert rpc_compat_memory.pointer("safe") == 45
    assert rpc_compat_memory.pointer("finalized") == 45
    assert rpc_compat_memory.pointer("earliest") == 0
    head = rpc_compat_memory.block_by_hash(rpc_compat_memory.canonical_hash(45))  # type: ignore[arg-type]
    assert head is not None and head.hash.hex().startswith("e27a3e81")


@pytest.mark.parametrize(
    ("index", "value", "field"),
    [
        (3, b"\x11" * 32, "stateRoot"),
        (5, b"\x22" * 32, "receiptsRoot"),
        (6, b"\x00" * 256, "logsBloom"),
        (10, (1).to_bytes(1, "big"), "gasUsed"),
    ],
)
def test_invalid_block_stops_import_and_keeps_earlier_blocks(rpc_compat_dir: Path, index: int, value: bytes,
                                                             field: str) -> None:
    blocks = raw_blocks(rpc_compat_dir)
    blocks[9] = tamper_header(blocks[9], index, value)  # block 10
    backend = ethread.MemoryBackend()
    importer = ChainImporter(backend, load_genesis(rpc_compat_dir / "genesis.json"), verify_seals=False)
    with pytest.raises(ImportFailed) as failure:
        importer.import_blocks(blocks)
    assert failure.value.number == 10
    assert failure.value.field == field
    assert "block 10" in str(failure.value)
    assert backend.pointer("latest") == 9
    assert backend.canonical_hash(10) is None
    # The store still serves what it holds, and the import resumes with the good block.
    good = raw_blocks(rpc_compat_dir)
    assert importer.import_blocks(good) == 36
    assert backend.pointer("latest") == 45


def test_bad_transaction_signature_is_named(rpc_compat_dir: Path) -> None:
    blocks = raw_blocks(rpc_compat_dir)
    items = rlp.decode(blocks[0])
    legacy = items[1][0]
    legacy[8] = b"\x01" * 32  # s of the first transaction of block 1
    blocks[0] = rlp.encode(items)
    backend = ethread.MemoryBackend()
    with pytest.raises(ImportFailed) as failure:
        ChainImporter(backend, load_genesis(rpc_compat_dir / "genesis.json"),
                      verify_seals=False).import_blocks(blocks)
    assert failure.value.number == 1
    assert backend.pointer("latest") == 0


def test_seals_are_checked_unless_disabled(rpc_compat_dir: Path) -> None:
    backend = ethread.MemoryBackend()
    with pytest.raises(ImportFailed) as failure:
        ethread.import_chain(backend, rpc_compat_dir / "genesis.json", rpc_compat_dir / "chain.rlp")
    assert failure.value.number == 1
    assert failure.value.field == "nonce"
    assert "seal" in failure.value.detail
    assert backend.pointer("latest") == 0


def test_reimport_is_a_no_op_and_resumes(rpc_compat_dir: Path) -> None:
    backend = ethread.MemoryBackend()
    genesis = rpc_compat_dir / "genesis.json"
    blocks = raw_blocks(rpc_compat_dir)
    importer = ChainImporter(backend, load_genesis(genesis), verify_seals=False)
    assert importer.import_blocks(blocks[:20]) == 20
    assert ethread.import_chain(backend, genesis, rpc_compat_dir / "chain.rlp", verify_seals=False) == 25
    assert ethread.import_chain(backend, genesis, rpc_compat_dir / "chain.rlp", verify_seals=False) == 0


def test_wrong_genesis_is_refused(rpc_compat_dir: Path, tmp_path: Path) -> None:
    backend = ethread.MemoryBackend()
    ethread.import_chain(backend, rpc_compat_dir / "genesis.json")
    other = tmp_path / "genesis.json"
    other.write_text((rpc_compat_dir / "genesis.json").read_text().replace('"0x68697665636861696e"', '"0x00"'))
    with pytest.raises(GenesisError):
        ethread.import_chain(backend, other)


def test_malformed_inputs_give_clear_errors(tmp_path: Path) -> None:
    bad = tmp_path / "genesis.json"
    bad.write_text("{not json")
    with pytest.raises(GenesisError, match="not JSON"):
        ethread.import_chain(ethread.MemoryBackend(), bad)
    with pytest.raises(GenesisError, match="cannot read"):
        ethread.import_chain(ethread.MemoryBackend(), tmp_path / "missing.json")
