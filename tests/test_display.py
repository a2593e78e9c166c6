"""Short hex reprs and notebook HTML of models and backends."""

from __future__ import annotations

from pathlib import Path

import pytest

import ethread
from ethread.backends.era import EraBackend
from ethread.devchain import demo_chain
from ethread.display import short_bytes
from tests.support.paths import conformance_dir


@pytest.fixture(scope="module")
def demo() -> ethread.MemoryBackend:
    backend = ethread.MemoryBackend()
    demo_chain(backend)
    return backend


def test_short_bytes() -> None:
    assert short_bytes(b"\x01\x02") == "0x0102"
    assert short_bytes(bytes(32)) == "0x" + "00" * 32
    assert short_bytes(bytes(256)) == "0x00…00 (256 zero bytes)"
    assert short_bytes(bytes(range(40))) == "0x0001020304050607…24252627 (40 bytes)"


def test_models_print_short_in_hex(demo: ethread.MemoryBackend) -> None:
    pairs = list(ethread.iter_blocks_with_receipts(demo, 0, (demo.pointer("latest") or 0) + 1))
    block, receipts = next((b, r) for b, r in pairs if any(x.logs for x in r))
    text = repr(block)
    assert text.startswith(f"Block(number={block.number}, hash=0x{block.hash.hex()}, ")
    assert f"transactions=<{len(block.transactions)} IncludedTransaction>" in text
    assert "b'" not in text and "logs_bloom" not in text and len(text) < 600
    header = repr(block.header)
    assert "b'" not in header and f"miner=0x{block.header.coinbase.hex()}" in header
    tx = block.transactions[0]
    assert repr(tx).startswith(f"IncludedTransaction(hash=0x{tx.hash.hex()}, ")
    inner = repr(tx.transaction)
    assert f"r={hex(tx.transaction.r)}" in inner and "b'" not in inner
    receipt = next(r for r in receipts if r.logs)
    assert f"logs=<{len(receipt.logs)} Log>" in repr(receipt)
    log = receipt.logs[0]
    assert repr(log).startswith(f"Log(address=0x{log.address.hex()}, topics=(")
    for model in (block, tx, tx.transaction, receipt, log):
        page = model._repr_html_()
        assert page.startswith(f"<div><strong>{type(model).__name__}</strong><table>")
        assert "b&#x27;" not in page
    assert f"<code>0x{block.hash.hex()}</code>" in block._repr_html_()


def test_backends_show_range_head_network_and_index(demo: ethread.MemoryBackend,
                                                    tmp_path: Path) -> None:
    head = demo.pointer("latest")
    assert repr(demo).startswith(f"MemoryBackend(blocks=0..{head} ({(head or 0) + 1} blocks), "
                                 f"head={head} 0x")
    assert "network=chain id " in repr(demo)
    index = tmp_path / "index.sqlite"
    with EraBackend(conformance_dir() / "era1", index_path=index) as era:
        text = repr(era)
        assert "blocks=0..180,223" in text and "missing=8,192..172,031" in text
        assert "network=sepolia (chain id 11155111)" in text
        assert f"index={index}" in text and era.index_path == index
        page = era._repr_html_()
        assert "<th style='text-align:left'>index</th>" in page and str(index) in page
    assert repr(ethread.MemoryBackend()) == (
        "MemoryBackend(blocks=none (empty), network=unknown (no chain config))")


def test_leveldb_repr(tmp_path: Path) -> None:
    backend = ethread.LevelDBBackend(tmp_path / "db")
    assert repr(backend) == (f"LevelDBBackend(blocks=none (empty), network=unknown (no chain "
                             f"config), path={tmp_path / 'db'})")
    backend.close()
    assert repr(backend) == f"LevelDBBackend(path={tmp_path / 'db'}, closed)"


def test_the_default_index_goes_to_the_data_folder_not_the_archive_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ethread.backends.era import INDEX_NAME, default_index_path

    monkeypatch.setenv("ETHREAD_HOME", str(tmp_path / "home"))
    folder = tmp_path / "archive"
    folder.mkdir()
    path = default_index_path(folder)
    assert path.parent == tmp_path / "home" / "era-index"
    assert path.name.startswith("archive-") and path.suffix == ".sqlite"
    other = tmp_path / "other" / "archive"
    other.mkdir(parents=True)
    assert default_index_path(other) != path  # one index per folder, by its whole path
    (folder / INDEX_NAME).touch()  # an index an older ethread built beside the files
    assert default_index_path(folder) == folder / INDEX_NAME
