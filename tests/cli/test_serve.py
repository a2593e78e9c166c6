"""``ethread serve``'s rough edges (``ethread.cli.serve``): a port out of range, a genesis
without blocks; one line that says what to do, never a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from ethread.cli import main
from tests.support.paths import conformance_dir
from tests.support.server_harness import ETHREAD


def test_serve_port_out_of_range(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--port", "99999"]) == 2
    err = capsys.readouterr().err
    assert "ethread serve: error: server.port must be between 0 and 65535, got 99999" in err
    assert "Traceback" not in err


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
