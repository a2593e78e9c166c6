"""The storage subcommands (``ethread.cli.storage``) end to end: import into LevelDB (and
resume), export Era1 from LevelDB and Parquet from Era1, verify good and damaged files; errors
(a failed seal, a cut blocks file, missing flags) are one line that says what to do, never a
traceback."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

import ethread
from ethread import frames
from ethread.backends.leveldb import LevelDBBackend
from ethread.backends.open import open_backend
from ethread.cli import main
from ethread.errors import StoreError
from tests.support.paths import conformance_dir


def run(*argv: str) -> int:
    """``ethread ARGV`` run in this process: its exit status."""
    return main(argv)


def test_import_export_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    compat = conformance_dir() / "rpc-compat"
    db, era = str(tmp_path / "db"), str(tmp_path / "era")
    common = ("--genesis", str(compat / "genesis.json"), "--blocks", str(compat / "chain.rlp"),
              "--no-verify-seals")
    assert run("import", "--db", db, *common) == 0
    assert "imported 45 blocks" in capsys.readouterr().out
    assert run("import", "--db", db, *common) == 0
    assert "imported 0 blocks" in capsys.readouterr().out
    assert run("export", "--db", db, "--era", era, "--network", "compat") == 0
    written = capsys.readouterr().out.split()
    assert len(written) == 1 and Path(written[0]).name.startswith("compat-00000-")
    assert run("verify", "--era", era) == 0
    assert "1 of 1 files verified" in capsys.readouterr().out
    backend = open_backend(era=era)
    assert backend.pointer("latest") == 35


def test_errors_are_messages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("import", "--db", str(tmp_path / "db"), "--genesis", str(tmp_path / "none")) == 1
    assert "error: cannot read genesis file" in capsys.readouterr().err
    assert run("export", "--db", str(tmp_path / "absent"), "--era", str(tmp_path / "e")) == 1
    assert "error: no ethread store" in capsys.readouterr().err
    assert run("verify", "--era", str(tmp_path)) == 1
    assert "error: no Era1 files" in capsys.readouterr().err


def test_verify_reports_damage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = conformance_dir() / "era1" / "sepolia-00000-643a00f7.era1"
    data = bytearray(source.read_bytes())
    data[100_000] ^= 0xFF
    damaged = tmp_path / source.name
    damaged.write_bytes(bytes(data))
    assert run("verify", "--era", str(damaged)) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "at byte" in out and source.name in out


def test_open_backend_needs_exactly_one_source(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="exactly one"):
        open_backend()
    with pytest.raises(StoreError, match="exactly one"):
        open_backend(db=tmp_path, era=tmp_path)
    with pytest.raises(StoreError, match="no ethread store"):
        open_backend(db=tmp_path / "none")
    LevelDBBackend(tmp_path / "made").close()
    with open_backend(db=tmp_path / "made") as backend:  # type: ignore[union-attr]
        assert backend.pointer("latest") is None


def test_export_names_the_source_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "--era", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err.strip()
    assert err == ("ethread export: error: name the chain to export: --db DIR (a LevelDB store), "
                   "--from-era DIR (Era1 files), or --genesis G with --blocks B")
    assert main(["export", "--from-era", str(tmp_path)]) == 1
    assert "name the output folder: --era OUT (or --out OUT)" in capsys.readouterr().err


def test_truncated_blocks_file_names_the_block(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    compat = conformance_dir() / "rpc-compat"
    cut = tmp_path / "cut.rlp"
    cut.write_bytes((compat / "chain.rlp").read_bytes()[:3000])
    assert main(["import", "--db", str(tmp_path / "db"), "--genesis", str(compat / "genesis.json"),
                 "--blocks", str(cut), "--no-verify-seals"]) == 1
    err = capsys.readouterr().err.strip()
    assert "block -1" not in err
    assert err.startswith("ethread import: error: block 3: invalid rlp: ")
    assert "cut short or malformed from byte" in err and "of 3000" in err
    assert "the 2 block(s) before it are whole" in err


def test_verify_errors_name_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--era", str(tmp_path)]) == 1
    assert capsys.readouterr().err.strip() == f"ethread verify: error: no Era1 files (nor ere files) in {tmp_path}"


def test_export_parquet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    era = conformance_dir() / "era1"
    out = tmp_path / "pq"
    assert main(["export", "--format", "parquet", "--out", str(out), "--from-era", str(era),
                 "--first", "172032", "--last", "180223"]) == 0
    written = capsys.readouterr().out.split()
    assert [Path(p).name for p in written] == [f"{t}.parquet" for t in frames.TABLES]
    blocks = pq.read_table(out / "blocks.parquet")
    txs = pq.read_table(out / "transactions.parquet")
    assert blocks.num_rows == 8192 and txs.num_rows == 93
    backend = ethread.EraBackend(era, index_path=tmp_path / "i.sqlite")
    expected = frames.transactions(backend, 172032, 180224, progress=False)
    # Parquet has no seconds unit: timestamps come back in milliseconds, same instants.
    assert txs.cast(expected.schema).equals(expected)
    assert main(["export", "--format", "parquet", "--era", str(out), "--from-era", str(era)]) == 1
    assert "with --format parquet use --out" in capsys.readouterr().err
    assert main(["export", "--format", "parquet", "--out", str(out), "--from-era", str(era),
                 "--first", "8000", "--last", "8300"]) == 1
    assert ("blocks 8000..8300 have gaps: the chain holds 8000..8191 of them; export --first "
            "8000 --last 8191, or leave --first and --last out") in capsys.readouterr().err
    assert main(["export", "--format", "parquet", "--out", str(out), "--from-era", str(era),
                 "--first", "9000", "--last", "9100"]) == 1
    assert ("the chain holds none of blocks 9000..9100 (0..8191, 172032..180223 are held)"
            in capsys.readouterr().err)


def test_export_parquet_of_a_folder_with_a_gap_exports_what_it_holds(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The Sepolia folder holds blocks 0..8191 and 172032..180223: with no range given, both
    spans are exported (in order, into the same files) and the gap is named."""
    era = conformance_dir() / "era1"
    out = tmp_path / "pq"
    assert main(["export", "--format", "parquet", "--out", str(out), "--from-era", str(era),
                 "--tables", "blocks,transactions"]) == 0
    err = capsys.readouterr().err
    assert "the chain has gaps; exporting the blocks it holds: 0..8191, 172032..180223" in err
    numbers = pq.read_table(out / "blocks.parquet").column("number").to_pylist()
    assert numbers == [*range(0, 8192), *range(172032, 180224)]
    assert pq.read_table(out / "transactions.parquet").num_rows == 93  # none before the gap


def test_import_of_blocks_without_seals_fails_at_once_saying_what_to_pass(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The rpc-compat chain's blocks carry zero seals: checking them would build ethash's cache
    (about 40 s) only to refuse block 1; the command says so before opening any store."""
    compat = conformance_dir() / "rpc-compat"
    db = tmp_path / "db"
    assert main(["import", "--db", str(db), "--genesis", str(compat / "genesis.json"),
                 "--blocks", str(compat / "chain.rlp")]) == 1
    err = capsys.readouterr().err.strip()
    assert err == ("ethread import: error: block 1 carries no proof-of-work seal (its nonce and "
                   "mix hash are zero, as a dev chain's or a test fixture's blocks): import it "
                   "with --no-verify-seals")
    assert not db.exists()


def test_seal_checks_are_announced_before_the_wait(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A first block with a seal: the wait for ethash's cache and the flag that skips it are
    said up front; a block without proof of work (after the merge) needs no notice."""
    import rlp

    from ethread.cli.storage import _announce_seal_checks

    compat = conformance_dir() / "rpc-compat"
    first = rlp.decode((compat / "chain.rlp").read_bytes()[:200_000], strict=False)
    header = list(first[0])
    header[13], header[14] = b"\x01" * 32, b"\x02" * 8  # a mix hash and a nonce
    sealed = tmp_path / "sealed.rlp"
    sealed.write_bytes(rlp.encode([header, *first[1:]]))
    _announce_seal_checks(str(sealed))
    err = capsys.readouterr().err
    assert "checking proof-of-work seals: ethash builds the cache of block 1's epoch first" in err
    assert "imports with --no-verify-seals" in err
    header[7] = b""  # difficulty 0: a proof-of-stake block
    merged = tmp_path / "merged.rlp"
    merged.write_bytes(rlp.encode([header, *first[1:]]))
    _announce_seal_checks(str(merged))
    assert capsys.readouterr().err == ""
