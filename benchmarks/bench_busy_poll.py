"""A client that sends one request at a time, against ``ethread serve`` with and without the
polling window after a read (``--busy-poll-us``, :mod:`ethread.server.busy_poll`).

    .venv/bin/python benchmarks/bench_busy_poll.py [--requests 5000] [--rounds 3] [--window 250]

Two servers of the demo chain run side by side, one with ``--busy-poll-us WINDOW`` and one
with ``--busy-poll-us 0``, each a single process with the default ``*.ledger`` ledger and no
access log. One client (this process) sends ``--requests`` requests, each after the answer to
the last, over one kept-alive HTTP connection (raw socket, pre-encoded bodies) and over one
WebSocket (the ``websockets`` library's synchronous client, what a script would use), to
each server in turn, ``--rounds`` times, so that the machine's slower minutes fall on both.
Every answer is checked. Prints requests/s, the median and 99th percentile latency, and the
server's CPU time per request (user + system, from /proc).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchlib import report
from benchlib.client import http_request
from benchlib.processes import free_port, process_cpu_seconds, stop_process, wait_for_port
from benchlib.serve import ethread_command
from websockets.sync.client import connect

KEY = "bench-key-0123456789"
LENGTH = re.compile(rb"content-length:\s*(\d+)")


@dataclass
class Server:
    name: str
    window: int
    port: int
    process: subprocess.Popen[bytes]
    figures: dict[str, list[tuple[float, list[float], float]]] = field(default_factory=dict)


def start(name: str, window: int, workdir: Path) -> Server:
    port = free_port()
    command = ethread_command(
        "serve", "--port", str(port), "--api-key", KEY, "--daily-credits", str(10**15),
        "--ledger", str(workdir / f"{name}.ledger"), "--no-access-log", "--log-level", "warning",
        "--busy-poll-us", str(window))
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not wait_for_port(port, process, 120):
        raise SystemExit(f"{name}: the server did not start")
    return Server(name, window, port, process)


def body(method: str, params: list[object], request_id: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                       "params": params}).encode()


def over_http(server: Server, bodies: list[bytes]) -> list[float]:
    """Latencies (s) of ``bodies`` sent one after another on one kept-alive connection."""
    requests = [http_request(b, f"/v3/{KEY}") for b in bodies]
    latencies = []
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buffer = b""
        for request in requests:
            started = time.perf_counter()
            sock.sendall(request)
            while True:
                end = buffer.find(b"\r\n\r\n")
                if end >= 0:
                    head = buffer[:end].lower()
                    found = LENGTH.search(head)
                    if found is None:
                        raise SystemExit(f"{server.name}: an answer without a length")
                    length = int(found.group(1))
                    if len(buffer) >= end + 4 + length:
                        answer = buffer[end + 4:end + 4 + length]
                        buffer = buffer[end + 4 + length:]
                        break
                buffer += sock.recv(65536)
            latencies.append(time.perf_counter() - started)
            if not head.startswith(b"http/1.1 200") or b'"result"' not in answer:
                raise SystemExit(f"{server.name}: a bad answer: {head[:40]!r} {answer[:200]!r}")
    return latencies


def over_websocket(server: Server, bodies: list[bytes]) -> list[float]:
    """Latencies (s) of ``bodies`` sent one after another on one WebSocket."""
    latencies = []
    with connect(f"ws://127.0.0.1:{server.port}/ws/v3/{KEY}", open_timeout=10) as ws:
        for payload in bodies:
            started = time.perf_counter()
            ws.send(payload.decode())
            answer = ws.recv(30)
            latencies.append(time.perf_counter() - started)
            if '"result"' not in answer:
                raise SystemExit(f"{server.name}: a bad answer: {answer[:200]!r}")
    return latencies


def main() -> None:
    parser = report.parser(__doc__)
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--window", type=int, default=250, help="--busy-poll-us of the first")
    report.add_options(parser, __file__)
    args = parser.parse_args()
    if args.requests < 1 or args.rounds < 1 or args.window < 1:
        parser.error("--requests, --rounds and --window must be at least 1")
    with report.recorded(args):
        run_benchmark(args)


def run_benchmark(args: argparse.Namespace) -> None:
    scenarios = {
        "eth_chainId, HTTP": (over_http, "eth_chainId", []),
        "eth_getBlockByNumber latest, HTTP": (over_http, "eth_getBlockByNumber",
                                              ["latest", False]),
        "eth_chainId, WebSocket": (over_websocket, "eth_chainId", []),
        "eth_getBlockByNumber latest, WebSocket": (over_websocket, "eth_getBlockByNumber",
                                                   ["latest", False]),
    }
    with tempfile.TemporaryDirectory(prefix="ethread-busy-poll-") as tmp:
        servers = [start("polling", args.window, Path(tmp)), start("no polling", 0, Path(tmp))]
        try:
            for _ in range(args.rounds):
                for label, (send, method, params) in scenarios.items():
                    bodies = [body(method, params, n) for n in range(args.requests)]
                    for server in servers:
                        before = process_cpu_seconds(server.process.pid)
                        started = time.perf_counter()
                        latencies = send(server, bodies)
                        elapsed = time.perf_counter() - started
                        cpu = process_cpu_seconds(server.process.pid) - before
                        server.figures.setdefault(label, []).append((elapsed, latencies, cpu))
        finally:
            for server in servers:
                stop_process(server.process)
    load = os.getloadavg()
    print(f"{args.requests} requests one at a time x {args.rounds} rounds, servers alternating; "
          f"load average {load[0]:.2f}; polling window {args.window} µs")
    print(f"{'scenario':<40} {'server':<11} {'req/s':>8} {'p50 µs':>8} {'p99 µs':>8} "
          f"{'CPU µs/req':>11}")
    for label in scenarios:
        for server in servers:
            runs = server.figures[label]
            elapsed = sum(run[0] for run in runs)
            latencies = sorted(lat for run in runs for lat in run[1])
            count = len(latencies)
            cpu = sum(run[2] for run in runs)
            print(f"{label:<40} {server.name:<11} {count / elapsed:>8.0f} "
                  f"{statistics.median(latencies) * 1e6:>8.0f} "
                  f"{latencies[int(count * 0.99)] * 1e6:>8.0f} {cpu / count * 1e6:>11.1f}")


if __name__ == "__main__":
    main()
