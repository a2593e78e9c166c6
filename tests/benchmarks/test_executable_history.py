"""The executable dense chain of ``bench_frames_vs_cryo.py``
(``benchmarks/benchlib/executable_history.py``), built small: every block as the module says
(counts, kinds, creations, logs, every transaction successful), the raw transactions a peer
replays are the stored ones, a kept chain is reused, its ``ere`` export gives the frames the
store gives, and anvil replaying it agrees with the store on everything but the fields each
node fills its own way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchlib.executable_history import (
    CREATIONS,
    SENDERS,
    TOKENS,
    ExecutableChain,
    build,
    disagreements,
    export_ere,
)

from ethread.backends.lmdb import LMDBBackend
from ethread.devchain.pool import decode_raw
from ethread.models import Block, Receipt
from ethread.rlpcodec.transactions import transaction_hash
from tests.support.chain_reads import blocks_of, receipts_of

BLOCKS = 5
PER_BLOCK = 24


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> ExecutableChain:
    return build(tmp_path_factory.mktemp("executable") / "chain", BLOCKS, PER_BLOCK, log=False)


def stored_blocks(chain: ExecutableChain) -> list[tuple[Block, tuple[Receipt, ...]]]:
    """Blocks 1..head of the store, with their receipts."""
    with LMDBBackend(chain.lmdb, create=False) as backend:
        return [(b, receipts_of(backend, b)) for b in list(blocks_of(backend))[1:]]


def test_every_block_is_as_the_module_says(chain: ExecutableChain) -> None:
    blocks = stored_blocks(chain)
    assert [len(b.transactions) for b, _ in blocks] == (
        [TOKENS + 1, TOKENS * SENDERS] + [PER_BLOCK] * (BLOCKS - 2))
    assert chain.transactions == sum(len(b.transactions) for b, _ in blocks)
    assert chain.logs == sum(len(r.logs) for _, receipts in blocks for r in receipts)
    for block, receipts in blocks:
        assert all(r.status == 1 for r in receipts), block.number
    for block, receipts in blocks[2:]:
        txs = [t.transaction for t in block.transactions]
        assert {type(t).__name__ for t in txs} == {
            "LegacyTransaction", "AccessListTransaction", "DynamicFeeTransaction"}
        created = [r.contract_address for t, r in zip(txs, receipts, strict=True) if t.to is None]
        assert len(created) == CREATIONS and None not in created
        # six transfers, an approval and an emitter call of every ten leave a log each
        assert len([r for r in receipts if r.logs]) == sum(
            1 for i in range(PER_BLOCK - CREATIONS) if i % 10 < 8)
        assert len({t.sender for t in block.transactions}) > 10


def test_the_raw_transactions_are_the_stored_ones(chain: ExecutableChain) -> None:
    blocks = stored_blocks(chain)
    assert len(chain.raw_blocks) == len(blocks) == BLOCKS
    for (timestamp, raws), (block, _) in zip(chain.raw_blocks, blocks, strict=True):
        assert timestamp == block.header.timestamp
        assert [transaction_hash(decode_raw(bytes.fromhex(raw[2:]))) for raw in raws] == [
            t.hash for t in block.transactions]
    genesis = json.loads(chain.genesis.read_text())
    assert genesis["config"]["chainId"] == 1337 and len(genesis["alloc"]) >= SENDERS + 1


def test_a_kept_chain_is_reused(chain: ExecutableChain) -> None:
    data = chain.lmdb / "data.mdb"
    written = data.stat().st_mtime_ns
    again = build(chain.folder, BLOCKS, PER_BLOCK, log=False)
    assert again == chain and data.stat().st_mtime_ns == written


def test_the_ere_export_gives_the_stores_tables(chain: ExecutableChain) -> None:
    frames = pytest.importorskip("ethread.frames")
    pytest.importorskip("pyarrow")
    from ethread.backends.era import EraBackend

    folder = export_ere(chain)
    assert [p.suffix for p in folder.glob("*.ere")] == [".ere"]
    with LMDBBackend(chain.lmdb, create=False) as store:
        config = store.chain_config()
        expected = frames.tables(store, 1, chain.head + 1, ["blocks", "transactions", "logs"],
                                 progress=False)
    era = EraBackend(folder, config=config)
    try:
        got = frames.tables(era, 1, chain.head + 1, ["blocks", "transactions", "logs"],
                            progress=False)
    finally:
        era.close()
    for name, table in expected.items():
        assert got[name].equals(table), name
    assert expected["transactions"].num_rows == chain.transactions


def test_disagreements_name_the_fields_that_differ() -> None:
    block = {"number": "0x3", "transactionsRoot": "0x01", "receiptsRoot": "0x02",
             "logsBloom": "0x00", "gasUsed": "0x5208", "baseFeePerGas": "0x7",
             "timestamp": "0x1e", "hash": "0xaa", "transactions": ["0xab", "0xcd"]}
    assert list(disagreements(block, {**block, "hash": "0xbb", "stateRoot": "0x09"})) == []
    assert list(disagreements(block, {**block, "gasUsed": "0x5209"})) == [
        "gasUsed: 0x5208 != 0x5209"]
    full = {**block, "transactions": [{"hash": "0xab"}, {"hash": "0xcd"}]}
    assert list(disagreements(block, full)) == []
    assert list(disagreements(block, {**block, "transactions": ["0xcd", "0xab"]})) == [
        "transaction hashes"]


@pytest.mark.anvil
def test_anvil_replaying_the_chain_agrees_with_the_store(chain: ExecutableChain) -> None:
    from benchlib.targets import start_anvil

    anvil = start_anvil(chain)
    try:
        for block, _ in stored_blocks(chain):
            header = block.header
            ours = {"number": hex(header.number), "timestamp": hex(header.timestamp),
                    "transactionsRoot": "0x" + header.transactions_root.hex(),
                    "receiptsRoot": "0x" + header.receipts_root.hex(),
                    "logsBloom": "0x" + header.logs_bloom.hex(), "gasUsed": hex(header.gas_used),
                    "baseFeePerGas": hex(header.base_fee_per_gas or 0),
                    "transactions": ["0x" + t.hash.hex() for t in block.transactions]}
            status, answer = anvil.post(json.dumps({
                "jsonrpc": "2.0", "id": 1, "method": "eth_getBlockByNumber",
                "params": [hex(header.number), False]}).encode())
            assert status == 200
            assert list(disagreements(ours, answer["result"])) == [], header.number
    finally:
        anvil.stop()


def test_the_chain_needs_room_for_its_creations(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        build(tmp_path / "chain", 2, PER_BLOCK)
    with pytest.raises(ValueError):
        build(tmp_path / "chain", BLOCKS, CREATIONS)
