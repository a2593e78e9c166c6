"""The conformance yardstick over the real transport: ``ethread serve`` as a user starts it,
and the shared ``rpc-replay`` tool posting all 45 rpc-compat cases to it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .conftest import REPO, conformance_dir
from .server_harness import KEY, ServeProcess, post


def _chain_args(conformance: Path) -> list[str]:
    """The command of the issue, with the conformance path relative to the repository when it
    is the default one."""
    rpc = conformance / "rpc-compat"
    if "ETHREAD_CONFORMANCE" not in os.environ:
        rpc = Path(os.path.relpath(rpc, REPO))
    return ["--genesis", str(rpc / "genesis.json"), "--blocks", str(rpc / "chain.rlp"),
            "--no-verify-seals", "--api-key", KEY]


def test_rpc_replay_passes_every_case_against_ethread_serve(tmp_path: Path) -> None:
    conformance = conformance_dir()
    replay = conformance.parent / "tools" / "rpc-replay"
    assert replay.is_file(), f"rpc-replay not found at {replay}"
    args = [*_chain_args(conformance), "--ledger", str(tmp_path / "ledger.sqlite3")]
    with ServeProcess(args, cwd=REPO) as server:
        url = f"http://127.0.0.1:{server.port}/v3/{KEY}"
        result = subprocess.run([sys.executable, str(replay), url, str(conformance / "rpc-compat" / "cases")],
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "45 passed, 0 failed" in result.stdout
        status, _, body = post(url, {"jsonrpc": "2.0", "id": 1, "method": "eth_blockNumber"})
        assert (status, body["result"]) == (200, "0x2d")
        code, err = server.stop()
    assert code == 0, err
    assert KEY not in err, "the access log must mask keys"
    assert "eth_blockNumber" in err


def test_ethread_serve_without_arguments_serves_the_demo_chain(tmp_path: Path) -> None:
    with ServeProcess(["--ledger", ":memory:"], cwd=tmp_path) as server:
        url = f"http://127.0.0.1:{server.port}/v3/ethread-demo-key"
        status, _, body = post(url, {"jsonrpc": "2.0", "id": 1, "method": "eth_chainId"})
        assert (status, body["result"]) == (200, "0x539")
        _, _, body = post(url, {"jsonrpc": "2.0", "id": 2, "method": "eth_getBlockByNumber",
                                "params": ["latest", True]})
        assert int(body["result"]["number"], 16) >= 50
        code, _ = server.stop()
    assert code == 0
