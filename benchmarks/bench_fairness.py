"""One key's cheap and slow calls while another key floods the server with long traces.

    python benchmarks/bench_fairness.py [--flood N] [--seconds S] [--label TEXT]
                                        [--serve-arg=--slow-requests-per-key=2 ...]

Starts ``ethread serve`` (the demo chain, one worker, two API keys) with whichever ethread this
Python imports (put another checkout first on PYTHONPATH to measure it), then measures key B's
``eth_chainId`` (one keep-alive connection, one request after another) and key B's
``eth_getProof`` first alone, then while key A keeps ``N`` ``debug_traceCall`` of an endless
loop (``"timeout": "25s"``) in flight on as many connections. Prints p50/p99 of each, and what
key A's flood got back (answers, refusals with their codes).
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchlib import report
from benchlib.hostile import ENDLESS
from benchlib.processes import stop_process
from benchlib.serve import start_serving

FLOODER = "flooder-key-00000000000000"
VICTIM = "victim-key-000000000000000"
TRACE = {"jsonrpc": "2.0", "id": 1, "method": "debug_traceCall",
         "params": [ENDLESS, "latest", {"tracer": "callTracer", "timeout": "25s"}]}
CHAIN_ID = {"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []}
PROOF = {"jsonrpc": "2.0", "id": 1, "method": "eth_getProof",
         "params": ["0x" + "11" * 20, ["0x0"], "latest"]}


def post(conn: http.client.HTTPConnection, key: str, body: dict[str, Any]) -> tuple[int, bytes]:
    conn.request("POST", f"/v3/{key}", json.dumps(body).encode(),
                 {"Content-Type": "application/json"})
    response = conn.getresponse()
    return response.status, response.read()


def percentiles(samples: list[float]) -> str:
    if not samples:
        return "no answers"
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (f"p50 {statistics.median(ordered) * 1000:8.2f} ms   p99 {p99 * 1000:8.2f} ms   "
            f"max {ordered[-1] * 1000:8.2f} ms   n={len(ordered)}")


def measure(port: int, body: dict[str, Any], seconds: float, pause: float = 0.0) -> list[float]:
    """Latencies of ``body`` sent by the victim key one after another for ``seconds``."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    times = []
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        started = time.perf_counter()
        status, _ = post(conn, VICTIM, body)
        times.append(time.perf_counter() - started)
        if status != 200:
            raise RuntimeError(f"victim got HTTP {status}")
        if pause:
            time.sleep(pause)
    conn.close()
    return times


def flood(port: int, stop: threading.Event, outcomes: Counter[str]) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    while not stop.is_set():
        try:
            status, raw = post(conn, FLOODER, TRACE)
        except (OSError, http.client.HTTPException):
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            outcomes["connection error"] += 1
            time.sleep(0.05)
            continue
        try:
            answer = json.loads(raw)
        except ValueError:
            answer = {}
        error = answer.get("error") if isinstance(answer, dict) else None
        outcomes[f"HTTP {status} " + (f"error {error.get('code')}" if error else "answer")] += 1
        if error is not None and status != 200:
            time.sleep(0.05)  # a refusal: back off a little, as a client with Retry-After would
    conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flood", type=int, default=8, help="traces key A keeps in flight")
    parser.add_argument("--seconds", type=float, default=15.0, help="seconds per measurement")
    parser.add_argument("--label", default="", help="what this run measures (printed)")
    parser.add_argument("--serve-arg", action="append", default=[], dest="serve_args",
                        metavar="ARG", help="one more argument for ethread serve (repeatable)")
    report.run(parser, __file__, run_benchmark)


def run_benchmark(args: argparse.Namespace) -> None:
    """Key B's figures alone and beside key A's flood, on one served demo chain."""
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "fair.toml"
        config.write_text(
            f'[[keys]]\nkey = "{FLOODER}"\ndaily_credits = 1000000000\n\n'
            f'[[keys]]\nkey = "{VICTIM}"\ndaily_credits = 1000000000\n')
        process, port = start_serving(["--config", str(config), "--ledger", ":memory:",
                                       "--no-access-log", *args.serve_args])
        try:
            print(f"bench_fairness {args.label}".rstrip())
            print(f"  one worker, demo chain; key A floods with {args.flood} debug_traceCall "
                  f"(endless loop, timeout 25s) in flight; serve {' '.join(args.serve_args)}")
            measure(port, CHAIN_ID, 1.0)  # warm up
            alone_chain = measure(port, CHAIN_ID, args.seconds / 3)
            alone_proof = measure(port, PROOF, args.seconds / 3, 0.05)
            stop = threading.Event()
            outcomes: Counter[str] = Counter()
            flooders = [threading.Thread(target=flood, args=(port, stop, outcomes), daemon=True)
                        for _ in range(args.flood)]
            for thread in flooders:
                thread.start()
            time.sleep(1.0)
            flooded_chain = measure(port, CHAIN_ID, args.seconds)
            flooded_proof = measure(port, PROOF, args.seconds / 2, 0.05)
            stop.set()
            print(f"  key B eth_chainId,   alone:    {percentiles(alone_chain)}")
            print(f"  key B eth_chainId,   flooded:  {percentiles(flooded_chain)}")
            print(f"  key B eth_getProof,  alone:    {percentiles(alone_proof)}")
            print(f"  key B eth_getProof,  flooded:  {percentiles(flooded_proof)}")
            print(f"  key A's flood got (so far): {dict(sorted(outcomes.items()))}")
        finally:
            stop_process(process)


if __name__ == "__main__":
    main()
