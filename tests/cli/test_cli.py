"""The ``ethread`` command's rough edges: each case answers one line that says what to do,
never a traceback; plus ``--version`` and ``export --format parquet``."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
from importlib.metadata import version
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import ethread
from ethread import frames
from ethread.cli import build_parser, main
from tests.support.paths import conformance_dir
from tests.support.server_harness import ETHREAD


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"ethread {version('ethread')}"
    assert ethread.__version__ == version("ethread")


def test_every_flag_of_every_command_is_described() -> None:
    commands = next(a for a in build_parser()._actions
                    if isinstance(a, argparse._SubParsersAction))
    assert set(commands.choices) >= {"serve", "import", "export", "verify"}
    for name, parser in commands.choices.items():
        undescribed = [a.option_strings[0] for a in parser._actions
                       if a.option_strings and not a.help]
        assert undescribed == [], f"ethread {name}: no help text for {undescribed}"


def test_serve_port_out_of_range(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--port", "99999"]) == 2
    err = capsys.readouterr().err
    assert "ethread serve: error: server.port must be between 0 and 65535, got 99999" in err
    assert "Traceback" not in err


def test_export_names_the_source_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "--era", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err.strip()
    assert err == ("ethread export: error: name the chain to export: --db DIR (a LevelDB store), "
                   "--from-era DIR (Era1 files), or --genesis G with --blocks B")
    assert main(["export", "--from-era", str(tmp_path)]) == 1
    assert "name the output folder: --era OUT (or --out OUT)" in capsys.readouterr().err


def test_seal_failure_gives_the_hint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    compat = conformance_dir() / "rpc-compat"
    assert main(["import", "--db", str(tmp_path / "db"), "--genesis", str(compat / "genesis.json"),
                 "--blocks", str(compat / "chain.rlp")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("ethread import: error: block 1: invalid nonce: proof-of-work seal: ")
    assert "imports with --no-verify-seals" in err
    assert len(err.splitlines()) == 1  # py-evm's several-line report is cut to its first line


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


def test_serve_genesis_without_blocks_says_so(tmp_path: Path) -> None:
    genesis = conformance_dir() / "rpc-compat" / "genesis.json"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    server = subprocess.Popen(
        [*ETHREAD, "serve", "--genesis", str(genesis), "--port", "0", "--ledger", ":memory:",
         "--no-access-log"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert server.stdout is not None
        lines = [server.stdout.readline() for _ in range(2)]
        assert "HTTP http://127.0.0.1:" in lines[0]
    finally:
        server.send_signal(signal.SIGTERM)
        _, err = server.communicate(timeout=60)
    assert "no --blocks given: serving the genesis block alone" in err


def test_export_parquet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    era = conformance_dir() / "era1"
    out = tmp_path / "pq"
    env_index = tmp_path / "index"
    os.environ["XDG_CACHE_HOME"] = str(env_index)  # keep the sidecar index out of shared data
    try:
        assert main(["export", "--format", "parquet", "--out", str(out), "--from-era", str(era),
                     "--first", "172032", "--last", "180223"]) == 0
    finally:
        del os.environ["XDG_CACHE_HOME"]
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
    assert "109 blocks are missing from the backend: 8192..8300" in capsys.readouterr().err
