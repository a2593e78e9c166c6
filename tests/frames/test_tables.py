"""ethread.frames: Arrow tables of a block range, checked against the models they come from."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pytest
from eth_utils import keccak

import ethread
from ethread import frames
from ethread.backends.era import EraBackend
from ethread.devchain import DevChain, contracts, demo_chain
from ethread.errors import MissingBlocks
from tests.support.paths import conformance_dir
from tests.support.without_modules import run_without

SEPOLIA_21 = range(21 * 8192, 22 * 8192)

ERC20_ABI = [
    {"type": "event", "name": "Transfer", "anonymous": False, "inputs": [
        {"name": "from", "type": "address", "indexed": True},
        {"name": "to", "type": "address", "indexed": True},
        {"name": "value", "type": "uint256", "indexed": False}]},
    {"type": "event", "name": "Approval", "anonymous": False, "inputs": [
        {"name": "owner", "type": "address", "indexed": True},
        {"name": "spender", "type": "address", "indexed": True},
        {"name": "value", "type": "uint256", "indexed": False}]},
]
TRANSFER = keccak(b"Transfer(address,address,uint256)")
APPROVAL = keccak(b"Approval(address,address,uint256)")


@pytest.fixture(scope="module")
def sepolia(tmp_path_factory: pytest.TempPathFactory) -> EraBackend:
    index = tmp_path_factory.mktemp("era-index") / "index.sqlite"
    return EraBackend(conformance_dir() / "era1", index_path=index)


@pytest.fixture(scope="module")
def demo() -> ethread.MemoryBackend:
    backend = ethread.MemoryBackend()
    demo_chain(backend)
    return backend


def test_sepolia_file_21(sepolia: EraBackend) -> None:
    blocks = frames.blocks(sepolia, SEPOLIA_21.start, SEPOLIA_21.stop, progress=False)
    assert blocks.num_rows == 8192
    assert blocks["number"].to_pylist() == list(SEPOLIA_21)
    assert blocks.schema.field("hash").type == pa.string()
    assert blocks.schema.field("difficulty").type == pa.decimal128(38, 0)
    head = sepolia.block_by_hash(sepolia.canonical_hash(SEPOLIA_21.stop - 1) or b"")
    assert head is not None
    assert blocks["hash"][-1].as_py() == "0x" + head.hash.hex()
    assert blocks["difficulty"][-1].as_py() == Decimal(head.header.difficulty)

    txs = frames.transactions(sepolia, SEPOLIA_21.start, SEPOLIA_21.stop, progress=False)
    receipts = frames.receipts(sepolia, SEPOLIA_21.start, SEPOLIA_21.stop, progress=False)
    assert txs.num_rows == 93 and receipts.num_rows == 93
    for table in (txs, receipts):
        assert {"hash", "from", "to", "value"} <= set(table.column_names)
        assert table.schema.field("value").type == pa.decimal128(38, 0)
    assert txs["hash"].to_pylist() == receipts["hash"].to_pylist()
    assert sum(blocks["transaction_count"].to_pylist()) == 93
    # Every row agrees with the models the RPC methods answer from.
    for row in txs.to_pylist()[::10]:
        location = sepolia.transaction_location(bytes.fromhex(row["hash"][2:]))
        assert location is not None
        block = sepolia.block_by_hash(location[0])
        assert block is not None
        included = block.transactions[location[1]]
        assert row["from"] == "0x" + included.sender.hex()
        assert row["to"] == ("0x" + included.transaction.to.hex() if included.transaction.to else None)
        assert row["value"] == Decimal(included.transaction.value)
        assert row["block_number"] == block.number
        assert row["gas_price"] == Decimal(included.gas_price)
    statuses = receipts["status"].to_pylist()
    assert set(statuses) <= {0, 1} and statuses.count(1) > 0


def test_a_range_across_the_gap_names_the_missing_blocks(sepolia: EraBackend) -> None:
    with pytest.raises(MissingBlocks) as caught:
        frames.blocks(sepolia, 8000, 8200, progress=False)
    assert caught.value.missing == [(8192, 8199)]
    assert "8192..8199" in caught.value.message
    with pytest.raises(MissingBlocks) as caught:
        list(ethread.iter_blocks(sepolia, 180_000, 180_300))
    assert caught.value.missing == [(180_224, 180_299)]
    with pytest.raises(MissingBlocks):
        frames.logs(sepolia, 0, 200_000, progress=False)
    # A single-block lookup in the gap still answers None, as the RPC requires.
    assert sepolia.canonical_hash(9000) is None
    assert ethread.methods.get_block_by_number(sepolia, 9000) is None


def test_iter_blocks_in_order(sepolia: EraBackend) -> None:
    numbers = [b.number for b in ethread.iter_blocks(sepolia, 8100, 8192)]
    assert numbers == list(range(8100, 8192))
    pairs = list(ethread.iter_blocks_with_receipts(sepolia, SEPOLIA_21.start, SEPOLIA_21.start + 50))
    assert [len(b.transactions) for b, _ in pairs] == [len(r) for _, r in pairs]
    with pytest.raises(ValueError, match="before start"):
        ethread.iter_blocks(sepolia, 10, 5)
    assert list(ethread.iter_blocks(sepolia, 10, 10)) == []


def test_demo_tables_match_models(demo: ethread.MemoryBackend) -> None:
    head = demo.pointer("latest")
    assert head is not None
    tables = frames.tables(demo, 0, head + 1, progress=False)
    assert set(tables) == set(frames.TABLES)
    blocks = [b for b in ethread.iter_blocks(demo, 0, head + 1)]
    pairs = list(ethread.iter_blocks_with_receipts(demo, 0, head + 1))
    assert tables["blocks"].num_rows == head + 1
    assert tables["transactions"].num_rows == sum(len(b.transactions) for b in blocks)
    assert tables["receipts"].num_rows == tables["transactions"].num_rows
    logs = [log for _, receipts in pairs for r in receipts for log in r.logs]
    assert tables["logs"].num_rows == len(logs) > 0
    assert tables["logs"]["data"].to_pylist() == [log.data for log in logs]
    assert tables["logs"]["topic0"].to_pylist() == [
        "0x" + log.topics[0].hex() if log.topics else None for log in logs]
    withdrawals = [w for b in blocks for w in b.withdrawals or ()]
    assert tables["withdrawals"].num_rows == len(withdrawals) > 0
    assert tables["withdrawals"]["amount_gwei"].to_pylist() == [w.amount for w in withdrawals]
    uncles = [u for b in blocks for u in b.uncles]
    assert tables["uncles"].num_rows == len(uncles) > 0
    assert tables["uncles"]["hash"].to_pylist() == ["0x" + u.hash.hex() for u in uncles]
    # The same logs come through the log index, one call per chunk of the range.
    assert frames.logs(demo, 0, head + 1, progress=False).equals(tables["logs"])
    # Pre-Byzantium receipts carry a root and no status; the columns say so with nulls.
    receipts = tables["receipts"].to_pylist()
    assert all((r["status"] is None) != (r["root"] is None) for r in receipts)
    assert tables["transactions"]["to"].null_count > 0  # contract creations


def _token_chain() -> tuple[ethread.MemoryBackend, bytes, list[tuple[bytes, bytes, int]]]:
    backend = ethread.MemoryBackend()
    chain = DevChain(backend)
    sender = chain.accounts[0]
    token = chain.deploy_runtime(sender, contracts.LOG_EMITTER)
    chain.mine()
    sent = []
    for i in range(12):
        a, b = chain.accounts[i % 3].address, chain.accounts[3 + i % 4].address
        amount = (i + 1) * 10**18 if i != 5 else 2**256 - 1
        word = lambda x: b"\x00" * 12 + x  # noqa: E731
        chain.send(sender, token, data=contracts.log_calldata([TRANSFER, word(a), word(b)],
                                                               amount.to_bytes(32, "big")))
        sent.append((a, b, amount))
        if i % 4 == 0:  # an approval (filtered out by topic) and an ERC-721-shaped Transfer
            chain.send(sender, token, data=contracts.log_calldata(
                [APPROVAL, word(a), word(b)], (7).to_bytes(32, "big")))
        chain.mine()
    chain.send(sender, token, data=contracts.log_calldata(
        [TRANSFER, b"\x00" * 32, b"\x00" * 32, (1).to_bytes(32, "big")]))
    chain.mine()
    return backend, token, sent


def test_logs_decoded_with_an_abi() -> None:
    backend, token, sent = _token_chain()
    head = backend.pointer("latest")
    assert head is not None
    transfer_only = [e for e in ERC20_ABI if e["name"] == "Transfer"]
    table = frames.logs(backend, 0, head + 1, address=token, abi=transfer_only, progress=False)
    assert table.num_rows == len(sent) + 1  # the ERC-721-shaped one stays, undecoded
    rows = table.to_pylist()
    decoded = [r for r in rows if r["decoded"]]
    assert [(r["from"], r["to"], r["value"]) for r in decoded] == [
        ("0x" + a.hex(), "0x" + b.hex(), str(v)) for a, b, v in sent]  # 2**256-1: exact text
    assert rows[-1]["decoded"] is False and rows[-1]["from"] is None
    assert all(r["event"] == "Transfer" for r in rows)
    # Blocks 2-6 hold transfers 0-4, without the oversized amount: decimal128(38, 0).
    small = frames.logs(backend, 0, 7, address="0x" + token.hex(), abi=transfer_only,
                        progress=False)
    assert small.schema.field("value").type == pa.decimal128(38, 0)
    assert small["value"].to_pylist() == [Decimal(v) for _, _, v in sent[:5]]
    both = frames.logs(backend, 0, head + 1, abi=ERC20_ABI, progress=False)
    assert both["event"].to_pylist().count("Approval") == 3
    assert "owner" in both.column_names and "spender" in both.column_names


def _printed(statement: str, error: str, label: str) -> str:
    """Script lines running ``statement`` and printing ``label`` and the ``error`` it raises."""
    return f"try:\n    {statement}\nexcept {error} as exc:\n    print('{label}:', exc)\n"


def test_missing_extra_is_a_clear_error() -> None:
    """The core imports and runs without pyarrow; frames then say what to install."""
    done = run_without(("pyarrow", "tqdm", "plyvel", "web3"), (
        "import ethread\nfrom ethread import frames\nbackend = ethread.MemoryBackend()\n"
        + _printed("frames.blocks(backend, 0, 1)", "frames.MissingExtra", "missing")
        + _printed("ethread.LevelDBBackend", "ImportError", "leveldb")))
    assert done.returncode == 0, done.stderr
    assert "missing: ethread.frames needs pyarrow" in done.stdout
    assert "pip install 'ethread[frames]'" in done.stdout
    assert "leveldb: ethread's LevelDB backend needs plyvel" in done.stdout


def test_numpy_missing_is_a_clear_error() -> None:
    """numpy is an extra's library too (pyarrow no longer brings it): without it a bulk table
    says what to install, as without pyarrow; and workers on an Era folder never ask for
    LevelDB's or LMDB's engine."""
    done = run_without(("numpy", "plyvel", "lmdb"), (
        "from ethread import frames\n"
        "from ethread.frames import parallel\n"
        "print('engines imported:', sorted(m for m in ('plyvel', 'lmdb') if m in sys.modules))\n"
        "from ethread.frames.extra import numpy\n"
        + _printed("numpy()", "frames.MissingExtra", "missing")))
    assert done.returncode == 0, done.stderr
    assert "engines imported: []" in done.stdout
    assert "missing: ethread.frames needs numpy" in done.stdout


def test_one_table_named_as_a_string(sepolia: EraBackend) -> None:
    """``tables(..., "logs")`` is the logs table, not one per letter."""
    assert list(frames.tables(sepolia, 0, 10, "blocks", progress=False)) == ["blocks"]


def test_earliest_and_latest_name_the_ends_of_the_chain(demo: ethread.MemoryBackend,
                                                         sepolia: EraBackend) -> None:
    head = demo.pointer("latest")
    assert head is not None
    whole = frames.blocks(demo, "earliest", "latest", progress=False)
    assert whole.column("number").to_pylist() == list(range(0, head + 1))
    assert frames.transactions(demo, 0, "latest", progress=False).equals(
        frames.transactions(demo, 0, head + 1, progress=False))
    tail = frames.blocks(sepolia, 180_000, "latest", progress=False)
    assert tail.column("number").to_pylist() == list(range(180_000, 180_224))
    assert frames.logs(demo, "earliest", "latest").num_rows == frames.logs(demo, 0, head + 1).num_rows
    with pytest.raises(ValueError, match='stop must be a block number or "latest"'):
        frames.blocks(demo, 0, "head", progress=False)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match='start must be a block number or "earliest"'):
        frames.blocks(demo, "latest", 3, progress=False)  # type: ignore[arg-type]


def test_integer_columns_stay_integers_in_pandas(sepolia: EraBackend, demo: ethread.MemoryBackend,
                                                 tmp_path: object) -> None:
    """A column with nulls (blob gas before Cancun, chain id of a pre-EIP-155 transaction)
    becomes a nullable pandas integer, not floats; so does every other integer column, the
    same dtype whatever the range; a Parquet file written from the table reads back the same."""
    import pandas as pd
    import pyarrow.parquet as pq

    blocks = frames.blocks(sepolia, 0, 100, progress=False)
    assert blocks.column("blob_gas_used").null_count == 100
    df = blocks.to_pandas()
    assert df["blob_gas_used"].dtype == pd.UInt64Dtype() and df["blob_gas_used"].isna().all()
    assert df["number"].dtype == pd.UInt64Dtype() and df["number"].tolist() == list(range(100))
    assert df["timestamp"].dtype.kind == "M"  # the rest as before
    for backend in (demo, sepolia):  # the models' path and the bulk path
        receipts = frames.receipts(backend, "earliest", 50, progress=False).to_pandas()
        assert {str(receipts[n].dtype) for n in ("status", "gas_used", "log_count")} == {"UInt64"}
    path = f"{tmp_path}/blocks.parquet"
    pq.write_table(blocks, path)
    assert pd.read_parquet(path)["blob_gas_used"].dtype == pd.UInt64Dtype()
