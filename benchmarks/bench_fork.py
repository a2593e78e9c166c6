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
import sys
import tempfile
from pathlib import Path

from benchlib import REPO, report, token_suite
from benchlib.anvil import Anvil

sys.path.insert(0, str(REPO))  # the tests' own helpers: the counting proxy and a served node
from tests.support.fork_proxy import CountingProxy
from tests.support.server_harness import ServeProcess

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1,
                        help="first-and-second-run pairs per chain (each with a fresh cache)")
    report.run(parser, __file__, run_benchmark)


def run_benchmark(args: argparse.Namespace) -> None:
    env = token_suite.environment()
    rows: list[tuple[str, int, str, int, dict[str, int], float, float, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        token_suite.prepare(folder)
        suites = {chain: token_suite.suite_for(f"test_token_fork_{chain}", line, folder)
                  for chain, line in LINES.items()}
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
                                anvil = Anvil("--silent", "--fork-url", proxy.url,
                                              "--fork-block-number", str(block), home=cache,
                                              timeout=60)
                                start = anvil.start_seconds
                                run_env["ANVIL_URL"] = anvil.url
                            try:
                                wall, summary = token_suite.run_suite(suites[chain], folder, run_env)
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
    print(f"\n  load average {report.load_average()}")


if __name__ == "__main__":
    main()
