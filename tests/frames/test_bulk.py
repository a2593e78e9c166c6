"""The bulk path of ethread.frames (stored records decoded into columns, no models) against the
model path, and workers: the same tables from several processes as from one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from benchlib.synthetic_history import dense_history

from ethread import frames
from ethread.backends.era import EraBackend
from ethread.frames.bulk import decimal_column, hex_column, tables_of_records, uint_column
from ethread.frames.tables import TABLES, collect, collect_models
from tests.support.paths import conformance_dir

pa = pytest.importorskip("pyarrow")


def _same(bulk: dict[str, Any], model: dict[str, Any]) -> None:
    for name in model:
        assert bulk[name].schema == model[name].schema, name
        for column in model[name].column_names:
            assert bulk[name].column(column).to_pylist() == model[name].column(column).to_pylist(), \
                (name, column)


def test_column_builders() -> None:
    assert hex_column([b"\x01\xab", None, b"\xff\x00"], 2).to_pylist() == ["0x01ab", None, "0xff00"]
    assert uint_column([b"", b"\x01\x00", None, b"\xff" * 8]).to_pylist() == [0, 256, None, 2**64 - 1]
    assert uint_column([b"\x01" * 9]).type == pa.decimal128(38, 0)
    big = (10**38).to_bytes(17, "big")
    assert decimal_column([b"\x05", None]).to_pylist()[0] == 5
    assert decimal_column([b"\x05", (10**38 - 1).to_bytes(16, "big")]).type == pa.decimal128(38, 0)
    assert decimal_column([b"\x05", big]).to_pylist() == ["5", str(10**38)]
    assert decimal_column([(2**127).to_bytes(16, "big")]).type == pa.string()


@pytest.mark.parametrize("source", ["lmdb", "era1", "ere"])
def test_bulk_equals_models(compat: dict[str, Any], source: str) -> None:
    backend = compat[source]
    stop = backend.pointer("latest") + 1
    bulk = collect(backend, 0, stop, TABLES, progress=False)
    _same(bulk, collect_models(backend, 0, stop, TABLES, progress=False))
    _same(bulk, collect_models(compat["memory"], 0, stop, TABLES, progress=False))
    assert bulk["transactions"].num_rows > 0 and bulk["uncles"].num_rows > 0


@pytest.mark.parametrize("source", ["lmdb", "era1", "ere"])
def test_bodies_read_in_part_give_the_decoded_bodies_rows(compat: dict[str, Any],
                                                         source: str) -> None:
    """Blocks and withdrawals alone count each body's lists from their length prefixes, logs
    alone hash each transaction's bytes without decoding it, and receipts without logs count
    each receipt's logs; the rows equal those of bodies and receipts decoded whole, and the
    model path's."""
    backend = compat[source]
    stop = backend.pointer("latest") + 1
    config = backend.chain_config()
    for names in (["blocks"], ["blocks", "withdrawals"], ["withdrawals"], ["logs"],
                  ["blocks", "logs"], ["receipts"], ["transactions", "receipts"]):
        receipts = "logs" in names or "receipts" in names
        counted = tables_of_records(backend.raw_blocks(0, stop, receipts=receipts), names,
                                    config)
        whole = tables_of_records(backend.raw_blocks(0, stop, receipts=receipts), names, config,
                                  whole_bodies=True)
        _same(counted, whole)
        _same(counted, collect_models(compat["memory"], 0, stop, names, progress=False))
    counts = collect(backend, 0, stop, ["blocks"], progress=False)["blocks"]
    assert max(counts.column("transaction_count").to_pylist()) > 1
    assert collect(backend, 0, stop, ["logs"], progress=False)["logs"].num_rows > 0
    assert max(counts.column("uncle_count").to_pylist()) > 0 or source == "ere"


def test_dense_history_reads_alike_everywhere(tmp_path: Path) -> None:
    stores = dense_history(tmp_path, 6, transactions=60, recover=True)
    from ethread.backends.lmdb import LMDBBackend

    with LMDBBackend(stores.lmdb, create=False) as lmdb:
        config = lmdb.chain_config()
        expected = collect_models(lmdb, 0, 7, TABLES, progress=False)
        assert expected["transactions"].num_rows == 360
        assert set(expected["transactions"].column("type").to_pylist()) >= {0, 2}
        _same(collect(lmdb, 0, 7, TABLES, progress=False), expected)
        _same(collect(lmdb, 0, 7, ["blocks"], progress=False), {"blocks": expected["blocks"]})
        for folder in (stores.era1, stores.ere):
            with EraBackend(folder, config=config) as era:
                _same(collect(era, 0, 7, TABLES, progress=False), expected)
                for alone in (["blocks", "withdrawals", "logs"], ["receipts"]):  # read in part
                    _same(collect(era, 0, 7, alone, progress=False),
                          {name: expected[name] for name in alone})


def test_two_workers_give_the_one_worker_tables(tmp_path: Path) -> None:
    """Over the shared Sepolia folder (two Era1 files: one part each)."""
    era = EraBackend(conformance_dir() / "era1", index_path=tmp_path / "index.sqlite")
    names = ["blocks", "transactions", "receipts", "logs", "uncles"]
    parts = [(0, 8192), (172_032, 180_224)]
    for lo, hi in parts:
        assert era.file_ranges(lo, hi) == [(lo, hi)]
    across = era.file_ranges(0, 180_224)
    assert across == parts
    single = {n: pa.concat_tables([collect(era, lo, hi, names, progress=False)[n]
                                   for lo, hi in parts]) for n in names}
    from ethread.frames.parallel import collect_parallel

    double = collect_parallel(era, 0, 180_224, names, workers=2)
    for n in names:
        assert double[n].equals(single[n]), n
    assert double["blocks"].num_rows == 16_384 and double["transactions"].num_rows == 93
    era.close()


def test_workers_on_a_store(compat: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    from ethread.frames import parallel

    monkeypatch.setattr(parallel, "PARALLEL_FROM_BLOCKS", 0)  # workers even for 46 blocks
    lmdb = compat["lmdb"]
    one = frames.tables(lmdb, 0, 46, progress=False)
    two = frames.tables(lmdb, 0, 46, progress=False, workers=2)
    for name in TABLES:
        assert two[name].equals(one[name]), name
    assert frames.transactions(lmdb, 3, 40, progress=False, workers=2).equals(
        frames.transactions(lmdb, 3, 40, progress=False))


def test_workers_refused_where_one_process_reads(compat: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="read in this process"):
        frames.blocks(compat["memory"], 0, 10, progress=False, workers=2)
    with pytest.raises(ValueError, match="positive"):
        frames.blocks(compat["lmdb"], 0, 10, progress=False, workers=0)
