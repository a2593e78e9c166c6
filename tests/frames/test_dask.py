"""The frames as a Dask DataFrame on a local cluster of two worker processes, over the shared
Sepolia Era1 folder: one partition per file, the same rows as ethread.frames."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dask.dataframe  # noqa: F401  (the dask extra: .ci/run installs it; a missing one fails)
import distributed
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ethread import frames
from ethread.backends.era import EraBackend
from tests.support.paths import conformance_dir


def _arrow(frame: Any) -> Any:
    """A computed Dask frame as one Arrow table (its partitions in order)."""
    return pa.Table.from_pandas(frame.compute(), preserve_index=False)


@pytest.fixture(scope="module")
def client() -> Any:
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, worker_dashboard_address=None)
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()


@pytest.fixture(scope="module")
def sepolia(tmp_path_factory: pytest.TempPathFactory) -> EraBackend:
    index = tmp_path_factory.mktemp("dask-index") / "index.sqlite"
    return EraBackend(conformance_dir() / "era1", index_path=index)


def test_dask_tables_equal_frames(client: Any, sepolia: EraBackend, tmp_path: Path) -> None:
    from ethread.frames import dask as fd

    files = [(0, 8192), (172_032, 180_224)]
    assert fd.partitions(sepolia) == files
    for name in ("blocks", "transactions", "receipts", "logs"):
        frame = fd.dataframe(sepolia, name)
        assert frame.npartitions == 2
        got = _arrow(frame)
        want = pa.concat_tables([frames.tables(sepolia, lo, hi, [name], progress=False)[name]
                                 for lo, hi in files])
        assert got.equals(want), name
    assert _arrow(fd.dataframe(sepolia, "blocks", 172_032, 180_224)).num_rows == 8192
    assert _arrow(fd.dataframe(sepolia, "transactions", 172_032, 180_224)).num_rows == 93
    [folder] = fd.to_parquet(sepolia, tmp_path / "parquet", ["transactions"])
    names = sorted(p.name for p in folder.glob("*.parquet"))
    assert names == ["000000000-000008191.parquet", "000172032-000180223.parquet"]
    table = pq.read_table(folder)
    assert table.num_rows == 93
    assert sorted(table.column("hash").to_pylist()) == sorted(
        frames.transactions(sepolia, 172_032, 180_224, progress=False).column("hash").to_pylist())
