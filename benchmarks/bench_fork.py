"""A forked test suite's first and second run, on ethread and on anvil ``--fork-url``, against
the same node: the token suite (tests/clients/test_token_web3.py, 50 tests) with its provider line
forking the demo chain that ``ethread serve`` serves on loopback, behind a proxy that counts
the node's JSON-RPC calls. Each chain runs the suite twice with the same cache (ethread: an
LMDB directory given to ``DevChain.fork``; anvil: its own RPC cache under the ``HOME`` it is
given, the same for both runs, with ``--fork-block-number`` so that it caches). Printed per
run: the node's calls (by method), and seconds: the whole pytest run and, for anvil, its start
(the fork's connection happens in ethread's test process, in anvil's start for anvil).
Asserts nothing.

    .venv/bin/python benchmarks/bench_fork.py [--rounds N]

Needs ``npm install`` in tests/js (anvil, pinned there). Every process is on loopback.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.support.fork_proxy import CountingProxy  # noqa: E402
from tests.support.server_harness import ServeProcess  # noqa: E402
from tests.support.token_suite import PROVIDER_LINE, SUITE  # noqa: E402

PEER_PACKAGES = REPO / "tests" / "js" / "node_modules" / "@foundry-rs"
"""Where ``npm install`` in tests/js puts anvil."""

LINES = {
    "ethread": ("    import os\n"
                "    return Web3(EthreadProvider(DevChain.fork(\n"
                "        os.environ['FORK_URL'], int(os.environ['FORK_BLOCK']),\n"
                "        backend=ethread.MemoryBackend(), cache=os.environ['FORK_CACHE'])))"
                "  # the provider line"),
    "anvil": ("    import os\n"
              "    return Web3(Web3.HTTPProvider(os.environ['ANVIL_URL'], request_kwargs={'timeout': 60}))"
              "  # the provider line"),
}
DEMO_KEY = "ethread-demo-key"


def suite_for(chain: str, folder: Path) -> Path:
    text = SUITE.read_text()
    if text.count(PROVIDER_LINE) != 1:
        raise SystemExit(f"the provider line is not in {SUITE} as expected")
    path = folder / "clients" / f"test_token_fork_{chain}.py"  # (beside contracts/, as in tests/)
    path.parent.mkdir(exist_ok=True)
    path.write_text(text.replace(PROVIDER_LINE, LINES[chain]))
    return path


def run_suite(suite: Path, folder: Path, env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", str(suite), "-q", "-p", "no:cacheprovider",
                           "-p", "no:randomly", "-o", "addopts=", "--rootdir", str(folder)],
                          cwd=folder, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    lines = done.stdout.strip().splitlines()
    return wall, (lines[-1] if lines else done.stderr[-300:])


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ForkedAnvil:
    """anvil --fork-url on a free loopback port, with the HOME (and so the RPC cache) given."""

    def __init__(self, url: str, block: int, home: Path) -> None:
        installed = sorted(PEER_PACKAGES.glob("anvil-*/bin/anvil"))
        binary = os.environ.get("ANVIL") or (str(installed[0]) if installed else shutil.which("anvil"))
        if binary is None:
            raise SystemExit("anvil not found: run `npm install` in tests/js (or set ANVIL)")
        self.port = free_port()
        started = time.perf_counter()
        self.process = subprocess.Popen(
            [binary, "--host", "127.0.0.1", "--port", str(self.port), "--silent",
             "--fork-url", url, "--fork-block-number", str(block)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "HOME": str(home)})
        import socket

        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise SystemExit("anvil did not start") from None
                time.sleep(0.02)
        self.start_seconds = time.perf_counter() - started

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1,
                        help="first-and-second-run pairs per chain (each with a fresh cache)")
    args = parser.parse_args()
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    rows: list[tuple[str, int, str, int, dict[str, int], float, float, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shutil.copytree(REPO / "tests" / "contracts", folder / "contracts",
                        ignore=shutil.ignore_patterns("node_modules"))
        suites = {chain: suite_for(chain, folder) for chain in LINES}
        node = ServeProcess([], cwd=folder)  # the demo chain, on loopback
        try:
            target = f"http://{node.host}:{node.port}/v3/{DEMO_KEY}"
            with CountingProxy(target) as proxy:
                import json
                import urllib.request

                ask = urllib.request.Request(target, json.dumps(
                    {"jsonrpc": "2.0", "id": 1, "method": "eth_blockNumber", "params": []}).encode(),
                    {"Content-Type": "application/json"})
                with urllib.request.urlopen(ask, timeout=30) as response:
                    block = int(json.loads(response.read())["result"], 16)
                for round_index in range(args.rounds):
                    for chain in LINES:
                        cache = folder / f"cache-{chain}-{round_index}"
                        cache.mkdir()
                        for run in (1, 2):
                            proxy.reset()
                            start = 0.0
                            anvil = None
                            run_env = {**env, "FORK_URL": proxy.url, "FORK_BLOCK": str(block),
                                       "FORK_CACHE": str(cache)}
                            if chain == "anvil":
                                anvil = ForkedAnvil(proxy.url, block, cache)
                                start = anvil.start_seconds
                                run_env["ANVIL_URL"] = anvil.url
                            try:
                                wall, summary = run_suite(suites[chain], folder, run_env)
                            finally:
                                if anvil is not None:
                                    anvil.stop()
                            rows.append((chain, round_index, summary, run, dict(proxy.calls),
                                         start, wall, f"{proxy.requests}"))
        finally:
            node.stop()
    print(f"\nThe token suite (50 tests) forked from the demo chain at block {block}, served by "
          "ethread on loopback\n")
    print(f"  {'chain':<8} {'run':>3} {'node calls':>10} {'HTTP requests':>13} {'start s':>8} "
          f"{'pytest s':>9}  outcome; calls by method")
    for chain, _, summary, run, calls, start, wall, requests in rows:
        methods = ", ".join(f"{m} {n}" for m, n in sorted(calls.items(), key=lambda kv: -kv[1]))
        print(f"  {chain:<8} {run:>3} {sum(calls.values()):>10} {requests:>13} {start:>8.2f} "
              f"{wall:>9.2f}  {summary}; {methods or 'none'}")
    print("\n  load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
