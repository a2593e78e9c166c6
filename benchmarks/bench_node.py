"""``ethread node`` beside anvil, both with their defaults, as a test suite meets a dev node:
the seconds from the command to the first answer, then (one keep-alive connection, one call
at a time) a transfer sent with eth_sendTransaction and mined at once, its receipt read,
eth_getBalance, eth_call of a small contract, evm_snapshot plus evm_revert and anvil_mine.
Prints the median and 90th percentile of each, milliseconds, side by side. Asserts nothing.

    .venv/bin/python benchmarks/bench_node.py [--rounds N]

Needs ``npm install`` in tests/js (anvil, pinned there).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import time
from collections.abc import Callable
from typing import Any

from benchlib import report
from benchlib.anvil import Anvil
from benchlib.processes import free_port, stop_process
from benchlib.serve import ethread_command

FIRST = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266"
SECOND = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"
RETURNS_42 = "0x602a60005260206000f3"
"""Runtime code returning the word 42."""
CONTRACT = "0x" + "42" * 20


class Rpc:
    """JSON-RPC over one keep-alive connection at ``/``."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.ids = 0

    def __call__(self, method: str, *params: Any) -> Any:
        self.ids += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self.ids, "method": method,
                           "params": list(params)})
        self.connection.request("POST", "/", body, {"content-type": "application/json"})
        answer = json.loads(self.connection.getresponse().read())
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]


def first_answer(port: int, process: subprocess.Popen[Any], started: float) -> float:
    """Seconds from ``started`` until the node answers eth_chainId."""
    while process.poll() is None:
        try:
            Rpc(port)("eth_chainId")
            return time.perf_counter() - started
        except (OSError, http.client.HTTPException):
            time.sleep(0.02)
    raise SystemExit("the node exited before answering")


def timings(rpc: Rpc, rounds: int) -> dict[str, list[float]]:
    """Milliseconds of each operation, ``rounds`` times."""
    rpc("anvil_setCode", CONTRACT, RETURNS_42)
    operations: dict[str, Callable[[], Any]] = {
        "transfer (send, mined)": lambda: rpc("eth_sendTransaction",
                                              {"from": FIRST, "to": SECOND, "value": "0x1"}),
        "eth_getBalance": lambda: rpc("eth_getBalance", SECOND, "latest"),
        "eth_call": lambda: rpc("eth_call", {"to": CONTRACT, "data": "0x"}, "latest"),
        "snapshot + revert": lambda: rpc("evm_revert", rpc("evm_snapshot")),
        "anvil_mine (1 block)": lambda: rpc("anvil_mine", "0x1"),
    }
    out: dict[str, list[float]] = {name: [] for name in operations}
    out["receipt of a transfer (polled)"] = []
    for _ in range(rounds):
        for name, operation in operations.items():
            began = time.perf_counter()
            result = operation()
            out[name].append((time.perf_counter() - began) * 1000)
            if name.startswith("transfer"):  # (anvil may mine just after it answers: polled)
                began = time.perf_counter()
                while (receipt := rpc("eth_getTransactionReceipt", result)) is None:
                    pass
                assert receipt["status"] == "0x1"
                out["receipt of a transfer (polled)"].append((time.perf_counter() - began) * 1000)
    return out


def measure_ethread(rounds: int) -> tuple[float, dict[str, list[float]]]:
    port = free_port()
    started = time.perf_counter()
    process = subprocess.Popen([*ethread_command("node", "--silent", "--port", str(port))],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        start = first_answer(port, process, started)
        return start, timings(Rpc(port), rounds)
    finally:
        stop_process(process, timeout=20)


def measure_anvil(rounds: int) -> tuple[float, dict[str, list[float]]]:
    started = time.perf_counter()
    with Anvil() as anvil:
        start = first_answer(anvil.port, anvil.process, started)
        return start, timings(Rpc(anvil.port), rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100, help="times each call is made")
    report.run(parser, __file__, run_benchmark)


def run_benchmark(args: argparse.Namespace) -> None:
    print(f"load average {report.load_average()}")
    ethread_start, ethread = measure_ethread(args.rounds)
    anvil_start, anvil = measure_anvil(args.rounds)
    print(f"{'':36} {'ethread node':>22} {'anvil 1.7.1':>22}")
    print(f"{'':36} {'median':>10} {'p90':>11} {'median':>10} {'p90':>11}")
    print(f"{'start to first answer (s)':36} {ethread_start:10.2f} {'':11} {anvil_start:10.2f}")
    for name in ethread:
        row = f"{name + ' (ms)':36}"
        for figures in (ethread[name], anvil[name]):
            ordered = sorted(figures)
            row += f" {statistics.median(ordered):10.2f} {ordered[int(len(ordered) * 0.9)]:11.2f}"
        print(row)
    print(f"({args.rounds} rounds, one call at a time over one keep-alive connection to /)")
    print(f"load average {report.load_average()}")


if __name__ == "__main__":
    main()
