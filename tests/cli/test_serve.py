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


def test_serve_record_traces(capsys: pytest.CaptureFixture[str]) -> None:
    """``--record-traces BLOCKS``: the network is opened with the latest blocks' traces
    recorded (answered as traced when asked); a negative count is refused."""
    from ethread.codec.envelope import Call
    from ethread.rpc.dispatcher import Dispatcher
    from ethread.server.config import NetworkConfig, ServerConfig
    from ethread.server.networks import open_network, service_context

    compat = conformance_dir() / "rpc-compat"
    config = NetworkConfig(name="main", backend="import", genesis=compat / "genesis.json",
                           blocks=compat / "chain.rlp", verify_seals=False, record_traces=4)
    network = open_network(config, service_context(ServerConfig(networks=(config,))))
    traces = network.dispatcher.context.traces
    assert traces is not None and traces.recording
    backend = network.backend
    head = backend.pointer("latest")
    assert head is not None
    plain = Dispatcher(backend)  # traces when asked
    checked = 0
    for number in range(head - 3, head + 1):
        block_hash = backend.canonical_hash(number)
        block = backend.block_by_hash(block_hash) if block_hash is not None else None
        assert block is not None
        for tx in block.transactions:
            params = ["0x" + tx.hash.hex(), {"tracer": "callTracer"}]
            recorded = traces.recorded(backend, params)
            assert recorded is not None
            assert recorded == plain.result(Call("debug_traceTransaction", params, 1))
            checked += 1
    assert checked > 0
    assert main(["serve", "--record-traces", "-1"]) == 2
    assert "--record-traces takes a number of blocks" in capsys.readouterr().err


def test_serve_names_its_ledger_and_writes_nothing_in_the_current_folder(tmp_path: Path) -> None:
    """Without --ledger the credits go to credits.ledger in ethread's data folder
    ($ETHREAD_HOME), which the banner names; the folder it runs in stays empty."""
    genesis = conformance_dir() / "rpc-compat" / "genesis.json"
    here, home = tmp_path / "here", tmp_path / "home"
    here.mkdir()
    env = dict(os.environ, PYTHONUNBUFFERED="1", ETHREAD_HOME=str(home))
    server = subprocess.Popen(
        [*ETHREAD, "serve", "--genesis", str(genesis), "--port", "0", "--no-access-log"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=here)
    try:
        assert server.stdout is not None
        lines: list[str] = []
        while not lines or (lines[-1] and not lines[-1].startswith("health:")):
            lines.append(server.stdout.readline())
        assert f"credit ledger: {home / 'credits.ledger'}\n" in lines, lines
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=60)
    assert (home / "credits.ledger").is_file() and list(here.iterdir()) == []
