"""Load benchmark of ``ethread`` over loopback HTTP: requests/s, p50 and p99 per method at
concurrency 1 and 16, for repeated identical requests (cache hits) and for distinct ones.

    .venv/bin/python benchmarks/bench_load.py [--blocks 5000] [--seconds 2] [--max-requests N]

The server runs in a subprocess (this script with ``--serve``) so that it does not share a
GIL with the load generator. It serves two networks built at start:

- ``history`` (default host): 5,000 synthetic blocks (``benchlib.synthetic_history``),
  one transaction and one log each, all logs from one contract, so that eth_getLogs by that
  address over the whole range returns 5,000 logs;
- ``calls`` (Host ``calls.localhost``): a dev chain with a real storage contract, executed by
  py-evm, for eth_call.

The load generator is a minimal HTTP/1.1 client on asyncio (uvloop) streams with keep-alive
connections and pre-encoded requests: it costs a few microseconds per request, far less than
aiohttp or httpx would. Every scenario is bounded by ``--seconds`` and ``--max-requests``;
every answer is checked to be a 200 carrying a result. Prints a table; asserts nothing else.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KEY = "bench-key-0000000000000000"
CALLS_HOST = "calls.localhost"


# -- the server side (child process) ---------------------------------------------------------


def serve(blocks: int, access_log: bool) -> None:
    """Build both chains, bind a free port, print one JSON line describing them, serve."""
    from benchlib.synthetic_history import synthetic_history

    import ethread
    from ethread.devchain import DevChain, contracts
    from ethread.server import KeyConfig, ServerConfig, make_network, prepare

    history_backend = ethread.MemoryBackend()
    history = synthetic_history(history_backend, blocks, emitters=1)
    calls_backend = ethread.MemoryBackend()
    chain = DevChain(calls_backend)
    storage = chain.deploy_runtime(chain.accounts[0], contracts.STORAGE)
    chain.mine()
    chain.send(chain.accounts[1], storage,
               data=contracts.store_calldata({slot: slot * 7 + 1 for slot in range(64)}))
    chain.mine()
    tx_hashes = []
    block_hashes = []
    for number in range(1, blocks + 1):
        block = history_backend.block_by_hash(history_backend.canonical_hash(number))  # type: ignore[arg-type]
        assert block is not None
        block_hashes.append("0x" + block.hash.hex())
        tx_hashes.extend("0x" + tx.hash.hex() for tx in block.transactions)
    networks = [make_network("history", history_backend),
                make_network("calls", calls_backend, hosts=(CALLS_HOST,))]
    config = ServerConfig(port=0, keys=(KeyConfig(key=KEY, daily_credits=10**15),),
                          ledger=":memory:", access_log=access_log)
    prepared = prepare(config, networks, progress=False)
    print(json.dumps({"port": prepared.main_port, "head": history.head,
                      "emitter": "0x" + history.emitters[0].hex(), "storage": "0x" + storage.hex(),
                      "tx_hashes": tx_hashes, "block_hashes": block_hashes}), flush=True)
    with contextlib.suppress(KeyboardInterrupt):  # SIGINT from the parent: a clean stop
        prepared.run()


# -- the load generator ----------------------------------------------------------------------


def http_request(body: bytes, host: str) -> bytes:
    return (f"POST /v3/{KEY} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


class Connection:
    """One keep-alive HTTP/1.1 connection; the server always sends Content-Length."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, port: int) -> Connection:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=64 << 20)
        return cls(reader, writer)

    async def send(self, request: bytes) -> tuple[int, bytes]:
        self.writer.write(request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        start = head.lower().find(b"content-length:")
        end = head.find(b"\r\n", start)
        body = await self.reader.readexactly(int(head[start + 15:end]))
        return status, body

    def close(self) -> None:
        self.writer.close()


@dataclass
class Outcome:
    count: int
    seconds: float
    latencies: list[float]
    failures: int

    @property
    def rate(self) -> float:
        return self.count / self.seconds if self.seconds else 0.0

    def percentile(self, fraction: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))] * 1e3


async def run_load(port: int, requests: Sequence[bytes], concurrency: int, seconds: float,
                   max_requests: int) -> Outcome:
    connections = [await Connection.open(port) for _ in range(concurrency)]
    for conn in connections:  # warm each connection (and the server's caches for `repeated`)
        await conn.send(requests[0])
    latencies: list[float] = []
    failures = 0
    issued = 0
    deadline = time.perf_counter() + seconds

    async def worker(conn: Connection, offset: int) -> None:
        nonlocal issued, failures
        index = offset
        while issued < max_requests and time.perf_counter() < deadline:
            issued += 1
            request = requests[index % len(requests)]
            index += concurrency
            started = time.perf_counter()
            status, body = await conn.send(request)
            latencies.append(time.perf_counter() - started)
            if status != 200 or b'"result"' not in body[:64]:
                failures += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker(c, i) for i, c in enumerate(connections)))
    elapsed = time.perf_counter() - started
    for conn in connections:
        conn.close()
    return Outcome(len(latencies), elapsed, latencies, failures)


def rpc(method: str, params: list[Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
                      separators=(",", ":")).encode()


def scenarios(info: dict[str, Any], distinct: int) -> dict[str, tuple[str, list[bytes], list[bytes]]]:
    """method label -> (host, repeated request, distinct requests)."""
    head = info["head"]
    emitter = info["emitter"]
    storage = info["storage"]
    numbers = [1 + (i * 7919) % head for i in range(min(distinct, head))]
    txs = info["tx_hashes"]
    tx_pick = [txs[(i * 7919) % len(txs)] for i in range(min(distinct, len(txs)))]

    def call_body(slot: int) -> bytes:
        return rpc("eth_call", [{"to": storage, "data": "0x" + slot.to_bytes(32, "big").hex()},
                                "latest"])

    return {
        "eth_chainId (transport floor)": (
            "localhost", [rpc("eth_chainId", [])], [rpc("eth_chainId", [])]),
        "eth_getBlockByNumber (full)": (
            "localhost", [rpc("eth_getBlockByNumber", [hex(head // 2), True])],
            [rpc("eth_getBlockByNumber", [hex(n), True]) for n in numbers]),
        f"eth_getLogs ({head} blocks, by address)": (
            "localhost",
            [rpc("eth_getLogs", [{"fromBlock": "0x0", "toBlock": hex(head), "address": emitter}])],
            # distinct: the start moves by one block each time (still >= 80% of the range)
            [rpc("eth_getLogs", [{"fromBlock": hex(i % (head // 5)), "toBlock": hex(head),
                                  "address": emitter}]) for i in range(min(distinct, head // 5))]),
        "eth_getTransactionByHash": (
            "localhost", [rpc("eth_getTransactionByHash", [txs[len(txs) // 2]])],
            [rpc("eth_getTransactionByHash", [h]) for h in tx_pick]),
        "eth_getBlockReceipts": (
            "localhost", [rpc("eth_getBlockReceipts", [hex(head // 2)])],
            [rpc("eth_getBlockReceipts", [hex(n)]) for n in numbers]),
        "eth_call": (
            CALLS_HOST, [call_body(3)], [call_body(1000 + i) for i in range(distinct)]),
    }


WRK_SCRIPT = """
local bodies = {%s}
local i = 0
request = function()
  i = i %% #bodies + 1
  return wrk.format("POST", "/v3/%s", {["Host"] = "%s", ["Content-Type"] = "application/json"}, bodies[i])
end
"""


def run_wrk(port: int, host: str, bodies: list[bytes], concurrency: int,
            seconds: float) -> tuple[float, float, float] | None:
    """The same scenario through wrk (C, from Debian's package), when it is installed: a load
    generator far cheaper than any Python client, so the figures measure the server alone.
    Returns (requests/s, p50 ms, p99 ms)."""
    if shutil.which("wrk") is None:
        return None
    lua = ", ".join("[==[" + b.decode() + "]==]" for b in bodies[:2000])
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(WRK_SCRIPT % (lua, KEY, host))
    try:
        done = subprocess.run(
            ["wrk", "-t", "1" if concurrency == 1 else "2", "-c", str(concurrency),
             "-d", f"{max(1, round(seconds))}s", "--latency", "-s", script.name,
             f"http://127.0.0.1:{port}"],
            capture_output=True, text=True, timeout=seconds + 30)
    finally:
        os.unlink(script.name)
    rate = re.search(r"Requests/sec:\s+([\d.]+)", done.stdout)
    p50 = re.search(r"\s50%\s+([\d.]+)(us|ms|s)", done.stdout)
    p99 = re.search(r"\s99%\s+([\d.]+)(us|ms|s)", done.stdout)
    if rate is None or p50 is None or p99 is None:
        return None
    scale = {"us": 1e-3, "ms": 1.0, "s": 1e3}
    return (float(rate.group(1)), float(p50.group(1)) * scale[p50.group(2)],
            float(p99.group(1)) * scale[p99.group(2)])


def process_cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) a live process has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop_process(process: subprocess.Popen[Any], sig: int = signal.SIGINT,
                 timeout: float = 20) -> None:
    """Stop a server the benchmark started: ``sig`` (a graceful stop), then SIGKILL if it has
    not exited within ``timeout`` seconds."""
    if process.poll() is None:
        process.send_signal(sig)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def start_server(blocks: int, access_log: bool) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    command = [sys.executable, __file__, "--serve", "--blocks", str(blocks)]
    if access_log:
        command.append("--access-log")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True,
                               stderr=subprocess.DEVNULL if not access_log else None)
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line:
        process.wait(10)
        raise SystemExit("the benchmark server did not start")
    return process, json.loads(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--blocks", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=2.0, help="per scenario (bound)")
    parser.add_argument("--max-requests", type=int, default=50_000, help="per scenario (bound)")
    parser.add_argument("--distinct", type=int, default=100_000,
                        help="distinct requests to cycle through")
    parser.add_argument("--access-log", action="store_true", help="server writes its access log")
    parser.add_argument("--only", help="run the methods whose label contains this")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.blocks, args.access_log)
        return
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    started = time.perf_counter()
    process, info = start_server(args.blocks, args.access_log)
    print(f"server up in {time.perf_counter() - started:.1f} s: {args.blocks} synthetic blocks, "
          f"one log each; {os.cpu_count()} CPUs; {args.seconds} s or {args.max_requests} "
          "requests per scenario")
    print(f"{'method':<40} {'requests':<9} {'c':>3} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
    try:
        for label, (host, repeated, distinct) in scenarios(info, args.distinct).items():
            if args.only and args.only not in label:
                continue
            for kind, bodies in (("repeated", repeated), ("distinct", distinct)):
                requests = [http_request(b, host) for b in bodies]
                for concurrency in (1, 16):
                    outcome = asyncio.run(run_load(info["port"], requests, concurrency,
                                                   args.seconds, args.max_requests))
                    flag = f"  ({outcome.failures} FAILED)" if outcome.failures else ""
                    print(f"{label:<40} {kind:<9} {concurrency:>3} {outcome.rate:>9.0f} "
                          f"{statistics.median(outcome.latencies) * 1e3:>8.2f} "
                          f"{outcome.percentile(0.99):>8.2f}{flag}", flush=True)
                    measured = run_wrk(info["port"], host, bodies, concurrency, args.seconds)
                    if measured is not None:
                        # After the row above, "distinct" bodies are no longer cold: the
                        # server has cached their JSON, so this row measures warm answers.
                        note = "  same, wrk" + (" (now warm)" if kind == "distinct" else "")
                        print(f"{note:<40} {kind:<9} {concurrency:>3} {measured[0]:>9.0f} "
                              f"{measured[1]:>8.2f} {measured[2]:>8.2f}", flush=True)
    finally:
        stop_process(process)


if __name__ == "__main__":
    main()
