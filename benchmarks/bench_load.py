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
import statistics
import subprocess
import sys
import time
from typing import Any

from benchlib import report, wrk
from benchlib.client import http_request, install_uvloop, rpc, run_load
from benchlib.processes import start_reporting, stop_process
from benchlib.serve import KEY

CALLS_HOST = "calls.localhost"


# -- the server side (child process) ---------------------------------------------------------


def serve(blocks: int, access_log: bool) -> None:
    """Build both chains, bind a free port, print one JSON line describing them, serve."""
    from benchlib.calls_chain import calls_chain
    from benchlib.synthetic_history import synthetic_history

    import ethread
    from ethread.server import KeyConfig, ServerConfig, make_network, prepare

    history_backend = ethread.MemoryBackend()
    history = synthetic_history(history_backend, blocks, emitters=1)
    calls_backend = ethread.MemoryBackend()
    storage = calls_chain(calls_backend)
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
    """The same scenario through wrk, when it is installed (:mod:`benchlib.wrk`).
    Returns (requests/s, p50 ms, p99 ms)."""
    if not wrk.installed():
        return None
    lua = ", ".join("[==[" + b.decode() + "]==]" for b in bodies[:2000])
    output = wrk.run(WRK_SCRIPT % (lua, KEY, host), port, concurrency, seconds, "--latency")
    rate, p50, p99 = wrk.rate(output), wrk.latency_ms(output, 50), wrk.latency_ms(output, 99)
    if rate is None or p50 is None or p99 is None:
        return None
    return rate, p50, p99


def start_server(blocks: int, access_log: bool) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    command = [sys.executable, __file__, "--serve", "--no-save", "--blocks", str(blocks)]
    if access_log:
        command.append("--access-log")
    return start_reporting(command, None if access_log else subprocess.DEVNULL)


def main() -> None:
    parser = report.parser(__doc__)
    parser.add_argument("--blocks", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=2.0, help="per scenario (bound)")
    parser.add_argument("--max-requests", type=int, default=50_000, help="per scenario (bound)")
    parser.add_argument("--distinct", type=int, default=100_000,
                        help="distinct requests to cycle through")
    parser.add_argument("--access-log", action="store_true", help="server writes its access log")
    parser.add_argument("--only", help="run the methods whose label contains this")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    report.run(parser, __file__, run_benchmark)


def run_benchmark(args: argparse.Namespace) -> None:
    if args.serve:  # the server's own process (started with --no-save)
        serve(args.blocks, args.access_log)
        return
    install_uvloop()
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
                requests = [http_request(b, f"/v3/{KEY}", host) for b in bodies]
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
