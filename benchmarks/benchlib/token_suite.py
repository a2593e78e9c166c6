"""The token suite (tests/clients/test_token_web3.py, 50 tests) run by pytest in a fresh
interpreter with its one provider line replaced: how bench_testchain.py and bench_fork.py put
the same tests on other chains. A copy finds the contract's artifact as the suite does, in
``contracts/`` beside its own folder: it is written into ``<folder>/clients/`` beside
``<folder>/contracts/``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchlib import BENCHMARKS, REPO

SUITE = REPO / "tests" / "clients" / "test_token_web3.py"
CONTRACTS = REPO / "tests" / "contracts"
PROVIDER_LINE = "    return Web3(EthreadProvider(DevChain(ethread.MemoryBackend())))  # the provider line"
"""The line that gives the suite its chain (``w3``); nothing else in it knows ethread."""


def prepare(folder: Path) -> None:
    """The suite's contract artifacts in ``folder``, where the suites written there read them."""
    shutil.copytree(CONTRACTS, folder / "contracts", ignore=shutil.ignore_patterns("node_modules"))


def suite_for(name: str, line: str, folder: Path) -> Path:
    """The suite as ``folder/clients/<name>.py``, ``line`` in place of its provider line."""
    text = SUITE.read_text()
    if text.count(PROVIDER_LINE) != 1:
        raise SystemExit(f"the provider line is not in {SUITE} as expected")
    path = folder / "clients" / f"{name}.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text.replace(PROVIDER_LINE, line))
    return path


def environment() -> dict[str, str]:
    """This process's environment, with the repository (ethread) and the benchmarks folder
    (``benchlib``, whose providers and plugin a suite may use) first on PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO), str(BENCHMARKS), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
    return env


def run_suite(suite: Path, folder: Path, env: dict[str, str], *options: str) -> tuple[float, str]:
    """Wall seconds of ``pytest SUITE OPTIONS`` in ``folder`` (no cache, no random order, none
    of the repository's options), and its summary line (or the end of its stderr)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", str(suite), "-q", "-p", "no:cacheprovider",
                           "-p", "no:randomly", "-o", "addopts=", "--rootdir", str(folder), *options],
                          cwd=folder, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    lines = done.stdout.strip().splitlines()
    return wall, (lines[-1] if lines else done.stderr[-300:])
