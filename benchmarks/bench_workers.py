"""Requests/s of ``ethread serve`` with 1 and 2 worker processes, at concurrency 1, 16 and 64,
for a cheap method (eth_chainId: the transport, the key lookup and the ledger debit) and for
eth_call (a storage contract executed by py-evm, a distinct call each time so that no answer
comes from a cache).

    .venv/bin/python benchmarks/bench_workers.py [--seconds 3] [--workers 1 2]
                                                  [--ledger PATH|redis://HOST:PORT/DB]

The server is this script with ``--serve``, in its own process tree: with ``--workers`` above 1
it is the real supervisor (:mod:`ethread.server.processes.workers`) forking its workers. Every request is
debited from the ledger as in production: the default engine (a memory-mapped ``*.ledger``
file) in a temporary directory, or the ledger named by ``--ledger`` (a ``*.sqlite3`` file, a
Redis).

The load generator (:mod:`benchlib.client`: a keep-alive asyncio client, one process) runs on
the same machine and takes CPU from the same cores as the workers: on a 2-core machine two
workers compete with it, so the 2-worker figures understate what two cores serve when the load
comes from elsewhere. Prints a table and the 2-worker/1-worker ratio; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchlib import report
from benchlib.client import http_request, install_uvloop, rpc, run_load
from benchlib.processes import start_reporting, stop_process
from benchlib.serve import KEY

from ethread.server.billing.ledger import ledger_engine


def serve(workers: int, ledger: str) -> None:
    """Build the contract chain, bind a free port, print one JSON line, serve."""
    from benchlib.calls_chain import calls_chain

    import ethread
    from ethread.server import KeyConfig, ServerConfig, make_network
    from ethread.server.processes.runner import assemble, listen

    backend = ethread.MemoryBackend()
    storage = calls_chain(backend)
    config = ServerConfig(port=0, keys=(KeyConfig(key=KEY, daily_credits=10**15),),
                          ledger=ledger, access_log=False, workers=workers)
    listening = listen(config, [make_network("calls", backend)], progress=False)
    print(json.dumps({"port": listening.main_port, "storage": "0x" + storage.hex()}),
          flush=True)
    if workers > 1:
        from ethread.server.processes.workers import supervise

        supervise(listening, workers)
        return
    with contextlib.suppress(KeyboardInterrupt):  # SIGINT from the parent: a clean stop
        assemble(listening).run()


def start_server(workers: int, ledger: str) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    process, info = start_reporting(
        [sys.executable, __file__, "--serve", "--no-save", "--serve-workers", str(workers),
         "--ledger", ledger])
    _wait_workers(info["port"], workers)
    return process, info


def _wait_workers(port: int, workers: int, timeout: float = 60) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), urllib.request.urlopen(
                f"http://127.0.0.1:{port}/health", timeout=2) as answer:
            if json.loads(answer.read())["workers"]["up"] == workers:
                return
        time.sleep(0.1)
    raise SystemExit("the workers did not come up")


def main() -> None:
    parser = report.parser(__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="per scenario (bound)")
    parser.add_argument("--max-requests", type=int, default=200_000, help="per scenario")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--ledger", help="default: a *.ledger file in a temporary directory")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve-workers", type=int, default=1, help=argparse.SUPPRESS)
    report.run(parser, __file__, run_benchmark)


def run_benchmark(args: argparse.Namespace) -> None:
    if args.serve:  # the server's own process (started with --no-save)
        serve(args.serve_workers, args.ledger)
        return
    install_uvloop()
    with tempfile.TemporaryDirectory(prefix="ethread-bench-") as scratch:
        ledger = args.ledger or str(Path(scratch) / "credits.ledger")
        print(f"{os.cpu_count()} CPUs shared by the server and this load generator; load "
              f"average {os.getloadavg()[0]:.1f} at start; ledger "
              f"{ledger_engine(ledger)}; "
              f"{args.seconds} s per scenario")
        print(f"{'method':<12} {'workers':>7} {'c':>4} {'req/s':>9} {'p50 ms':>8} "
              f"{'p99 ms':>8}")
        rates: dict[tuple[str, int, int], float] = {}
        for workers in args.workers:
            process, info = start_server(workers, ledger)
            storage = info["storage"]
            methods = {
                "eth_chainId": [rpc("eth_chainId", [])],
                "eth_call": [rpc("eth_call", [{"to": storage, "data": "0x" + (
                    1000 + i).to_bytes(32, "big").hex()}, "latest"]) for i in range(200_000)],
            }
            try:
                for method, bodies in methods.items():
                    requests = [http_request(b, f"/v3/{KEY}", "localhost") for b in bodies]
                    for concurrency in args.concurrency:
                        # a fresh slice for every run: no eth_call answer is served twice
                        offset = (concurrency * 7919 + workers * 104729) % len(requests)
                        outcome = asyncio.run(run_load(
                            info["port"], requests[offset:] + requests[:offset], concurrency,
                            args.seconds, args.max_requests))
                        rates[(method, workers, concurrency)] = outcome.rate
                        flag = f"  ({outcome.failures} FAILED)" if outcome.failures else ""
                        print(f"{method:<12} {workers:>7} {concurrency:>4} {outcome.rate:>9.0f} "
                              f"{statistics.median(outcome.latencies) * 1e3:>8.2f} "
                              f"{outcome.percentile(0.99):>8.2f}{flag}", flush=True)
            finally:
                stop_process(process)
        if len(args.workers) > 1:
            low, high = min(args.workers), max(args.workers)
            for method in ("eth_chainId", "eth_call"):
                ratios = [f"c={c}: {rates[(method, high, c)] / rates[(method, low, c)]:.2f}x"
                          for c in args.concurrency if rates.get((method, low, c))]
                print(f"{method}: {high} workers / {low}: {', '.join(ratios)}")
        print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
