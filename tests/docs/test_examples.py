"""The examples run and say what they claim (they are documentation: keep them true)."""

from __future__ import annotations

import subprocess
import sys

from tests.support.paths import EXAMPLES


def run(name: str) -> str:
    done = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_quickstart() -> None:
    out = run("quickstart.py")
    assert "head: block 50" in out
    assert "(proof verified)" in out


def test_custom_backend() -> None:
    out = run("custom_backend.py")
    assert "eth_blockNumber -> 0x32" in out
    assert "eth_getLogs -> 5 logs" in out
    assert "this backend holds history only" in out
