"""The conformance yardstick over the real transport: ``ethread serve`` as a user starts it,
and the shared ``rpc-replay`` tool posting the rpc-compat cases to it: the interface's 45 and
the read side's 52."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ethread.rpc.table import TABLE
from tests.support.paths import REPO, conformance_dir
from tests.support.server_harness import KEY, ServeProcess, post


def _chain_args(conformance: Path) -> list[str]:
    """The command of the issue, with the conformance path relative to the repository when it
    is the default one."""
    rpc = conformance / "rpc-compat"
    if "ETHREAD_CONFORMANCE" not in os.environ:
        rpc = Path(os.path.relpath(rpc, REPO))
    return ["--genesis", str(rpc / "genesis.json"), "--blocks", str(rpc / "chain.rlp"),
            "--no-verify-seals", "--api-key", KEY,
            "--answers", "geth-1.16"]  # the rpc-compat cases were recorded from geth 1.16


def check_read_side(report: str, folder: Path) -> None:
    """Every read-side case passes, except those of a method not built yet
    (eth_estimateGas and eth_createAccessList come with their own branch); once a method is
    in the table its cases must pass too."""
    failed = {line.split()[1].rstrip(":") for line in report.splitlines() if line.startswith("FAIL ")}
    cases = {f"{p.parent.name}/{p.stem}" for p in folder.rglob("*.io")}
    assert len(cases) == 52
    pending = {c for c in cases if c.split("/")[0] not in TABLE}
    assert failed <= pending, report
    passed = len(cases) - len(failed)
    assert f"{passed} passed, {len(failed)} failed" in report, report
    assert passed >= len(cases) - len(pending)


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
        read_side = subprocess.run(
            [sys.executable, str(replay), url, str(conformance / "rpc-compat" / "read-side")],
            capture_output=True, text=True, timeout=300)
        check_read_side(read_side.stdout, conformance / "rpc-compat" / "read-side")
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
