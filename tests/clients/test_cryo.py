"""cryo, the bulk extractor, against ``ethread serve --era`` on the shared Sepolia folder.

cryo asks for every block with its transactions and receipts: about 1,080 credits a block,
so 16,384 blocks cost some 17 million, past the default daily balance of 3 million. The
built-in key of a server started with no key configuration has no daily limit, so the
extraction runs to the end (docs/server.md)."""

from __future__ import annotations

import glob
from pathlib import Path

import pytest

from ethread import frames
from ethread.backends.era import EraBackend
from tests.support.paths import conformance_dir
from tests.support.server_harness import ServeProcess

pytestmark = pytest.mark.cryo

cryo = pytest.importorskip("cryo", reason="cryo has wheels for CPython 3.11 on x86-64 Linux only")
pq = pytest.importorskip("pyarrow.parquet")

RANGES = ["0:8192", "172032:180224"]


def _rows(out: Path, table: str) -> object:
    import pyarrow as pa

    parts = [pq.read_table(f) for f in sorted(glob.glob(str(out / f"*__{table}__*.parquet")))]
    return pa.concat_tables(parts).sort_by([("block_number", "ascending")])


def test_cryo_extracts_both_sepolia_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow as pa

    folder = conformance_dir() / "era1"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the read-only folder's index
    out = tmp_path / "cryo"
    out.mkdir()
    with ServeProcess(["--era", str(folder), "--no-access-log"], cwd=tmp_path) as server:
        rpc = f"http://{server.host}:{server.port}/v3/ethread-demo-key"
        cryo.freeze(["blocks", "transactions", "logs"], blocks=RANGES, rpc=rpc,
                    output_dir=str(out), verbose=False)
    blocks, txs, logs = (_rows(out, t) for t in ("blocks", "transactions", "logs"))
    assert blocks.num_rows == 16_384 and txs.num_rows == 93 and logs.num_rows == 0  # type: ignore[attr-defined]
    with EraBackend(folder) as era:
        ours = {name: pa.concat_tables([frames.tables(era, int(lo), int(hi), ["blocks", "transactions", "receipts"],
                                                   progress=False)[name]
                                     for lo, hi in (r.split(":") for r in RANGES)])
                for name in ("blocks", "transactions", "receipts")}
    assert [b.hex() for b in blocks.column("block_hash").to_pylist()] == \
        [h[2:] for h in ours["blocks"].column("hash").to_pylist()]  # type: ignore[attr-defined]
    assert [t.hex() for t in txs.column("transaction_hash").to_pylist()] == \
        [h[2:] for h in ours["transactions"].column("hash").to_pylist()]  # type: ignore[attr-defined]
    assert [t.hex() for t in txs.column("from_address").to_pylist()] == \
        [h[2:] for h in ours["transactions"].column("from").to_pylist()]  # type: ignore[attr-defined]
    assert txs.column("success").to_pylist() == \
        [s == 1 for s in ours["receipts"].column("status").to_pylist()]  # type: ignore[attr-defined]
    assert txs.column("gas_used").to_pylist() == ours["receipts"].column("gas_used").to_pylist()  # type: ignore[attr-defined]
