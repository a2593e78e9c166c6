"""The storage subcommands end to end: import into LevelDB (and resume), export Era1 from
LevelDB, verify good and damaged files; errors are one line, never a traceback."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from ethread.backends.leveldb import LevelDBBackend
from ethread.backends.open import open_backend
from ethread.cli import storage
from ethread.errors import StoreError
from tests.support.paths import conformance_dir


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="ethread")
    storage.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    result: int = args.run(args)
    return result


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
