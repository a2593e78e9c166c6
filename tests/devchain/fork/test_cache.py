"""The fork cache (``ethread.devchain.fork.cache``) across runs of a forked test suite: the
token suite, and the testing guide's suite through the pytest plugin's fork options, run
forked from a served chain; a second run asks the node nothing it read the first time (a
counting proxy on loopback in front of the node counts the calls).

The node is the demo chain served in this process, on loopback; nothing else is contacted.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fork_proxy import CountingProxy
from tests.support.paths import CONTRACTS, REPO
from tests.support.server_harness import KEY, demo_network, serve_in_thread, shared_demo
from tests.support.token_suite import PROVIDER_LINE, SUITE

FORKED_LINE = ("    import os\n"
               "    return Web3(EthreadProvider(DevChain.fork(\n"
               "        os.environ['FORK_URL'], int(os.environ['FORK_BLOCK']),\n"
               "        backend=ethread.MemoryBackend(), cache=os.environ['FORK_CACHE'])))"
               "  # the provider line")


@pytest.fixture(scope="module")
def remote() -> Iterator[str]:
    with serve_in_thread(networks=[demo_network()]) as thread:
        yield f"http://127.0.0.1:{thread.port}/v3/{KEY}"


def forked_token_suite(folder: Path) -> Path:
    """tests/clients/test_token_web3.py with its provider line forking ``FORK_URL`` at
    ``FORK_BLOCK`` (the contract's artifacts where it finds them, in ``../contracts``)."""
    text = SUITE.read_text()
    assert text.count(PROVIDER_LINE) == 1
    shutil.copytree(CONTRACTS, folder / "contracts",
                    ignore=shutil.ignore_patterns("node_modules"), dirs_exist_ok=True)
    path = folder / "clients" / "test_token_forked.py"
    path.parent.mkdir()
    path.write_text(text.replace(PROVIDER_LINE, FORKED_LINE))
    return path


def run_pytest(folder: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-o", "addopts=", "--rootdir", str(folder), *args],
                          cwd=folder, capture_output=True, text=True, timeout=900,
                          env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def test_the_token_suite_runs_forked_and_a_second_run_asks_nothing_again(
        remote: str, tmp_path: Path) -> None:
    suite = forked_token_suite(tmp_path)
    block = shared_demo().chain.head.number
    with CountingProxy(remote) as proxy:
        env = {"FORK_URL": proxy.url, "FORK_BLOCK": str(block),
               "FORK_CACHE": str(tmp_path / "fork-cache")}
        first = run_pytest(tmp_path, str(suite), env=env)
        assert "50 passed" in first
        asked_first = dict(proxy.calls)
        assert asked_first.get("eth_getProof", 0) > 0 and asked_first.get("eth_getBlockByNumber", 0) > 0
        proxy.reset()
        second = run_pytest(tmp_path, str(suite), env=env)
        assert "50 passed" in second
        # what the first run read (headers, accounts, code, storage) is not asked again: only
        # the chain id, which says whose cache to read
        assert dict(proxy.calls) == {"eth_chainId": 1}


def _guide_block(language: str, containing: str) -> str:
    import re

    text = (REPO / "docs" / "testing.md").read_text()
    blocks = re.findall(r"```(\w+)\n(.*?)```", text, flags=re.S)
    return next(body for lang, body in blocks if lang == language and containing in body)


@pytest.mark.node
def test_the_guides_suite_runs_forked_through_the_plugin(remote: str, tmp_path: Path) -> None:
    node = shutil.which("node")
    solc = CONTRACTS / "node_modules"
    assert node, "node is needed to compile the guide's contract"
    assert (solc / "solc").is_dir(), "run `npm ci` in tests/contracts first (CI does)"
    folder = tmp_path / "guide"
    (folder / "contracts").mkdir(parents=True)
    (folder / "contracts" / "Counter.sol").write_text(_guide_block("solidity", "contract Counter"))
    (folder / "contracts" / "compile.js").write_text(_guide_block("js", "solc.compile"))
    compiled = subprocess.run([node, "contracts/compile.js"], cwd=folder, capture_output=True,
                              text=True, timeout=300, env={**os.environ, "NODE_PATH": str(solc)})
    assert compiled.returncode == 0, compiled.stderr
    (folder / "test_counter.py").write_text(_guide_block("python", "def test_increment_counts_and_logs"))
    block = shared_demo().chain.head.number
    with CountingProxy(remote) as proxy:
        options = ["--ethread-fork-url", proxy.url, "--ethread-fork-block", str(block),
                   "--ethread-fork-cache", str(tmp_path / "cache")]
        # (the guide's third test checks that a fresh chain starts at block 0: a fork starts
        # after the forked block, so it is left out here)
        out = run_pytest(folder, "test_counter.py", *options, "-k", "not starts_afresh")
        assert "2 passed" in out
        assert proxy.total > 0
        proxy.reset()
        assert "2 passed" in run_pytest(folder, "test_counter.py", *options, "-k", "not starts_afresh")
        assert dict(proxy.calls) == {"eth_chainId": 1}
