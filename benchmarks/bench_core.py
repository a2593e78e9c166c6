"""Core figures: import time, in-process latency per method, and eth_getLogs over a large
synthetic history. Prints a table; asserts nothing.

    .venv/bin/python benchmarks/bench_core.py [--conformance DIR] [--skip-million]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import ethread
from ethread.codec.jsonrpc import Dispatcher
from ethread.codec.response_cache import ResponseCache

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root, for `benchmarks.*` run as a script
from benchmarks.synthetic_history import synthetic_history

REPO = Path(__file__).resolve().parent.parent


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def show(label: str, samples: list[float], unit: str = "ms") -> None:
    scale = 1e3 if unit == "ms" else 1e6
    p50 = statistics.median(samples) * scale
    p99 = sorted(samples)[max(0, int(len(samples) * 0.99) - 1)] * scale
    print(f"  {label:<58} p50 {p50:9.3f} {unit}   p99 {p99:9.3f} {unit}   n={len(samples)}")


def bench_import(rpc: Path) -> ethread.MemoryBackend:
    print("import of the rpc-compat chain (45 blocks, every block executed and validated)")
    backend = ethread.MemoryBackend()

    def run() -> None:
        nonlocal backend
        backend = ethread.MemoryBackend()
        ethread.import_chain(backend, rpc / "genesis.json", rpc / "chain.rlp", verify_seals=False)

    samples = timed(run, 5)
    print(f"  best {min(samples):.3f} s   median {statistics.median(samples):.3f} s   (goal < 1 s)")
    return backend


EMITTER = "0x7dcd17433742f4c0ca53122ab541d0ba67fc27df"


def bench_methods(backend: ethread.MemoryBackend) -> None:
    head = backend.block_by_hash(backend.canonical_hash(45))  # type: ignore[arg-type]
    assert head is not None
    tx = "0x" + head.transactions[0].hash.hex()
    requests = {
        "eth_blockNumber": [],
        "eth_getBlockByNumber (full)": ["0x2d", True],
        "eth_getBlockByHash": ["0x" + head.hash.hex(), False],
        "eth_getTransactionByHash": [tx],
        "eth_getTransactionByBlockNumberAndIndex": ["0x2d", "0x0"],
        "eth_getUncleByBlockNumberAndIndex": ["0x3", "0x0"],
        "eth_getBlockReceipts": ["0x2d"],
        "eth_getLogs (whole chain)": [{"fromBlock": "earliest", "toBlock": "latest"}],
        "eth_call": [{"to": "0x9344b07175800259691961298ca11c824e65032d"}, "latest"],
        "eth_call (state and block overrides)": [
            {"to": "0x9344b07175800259691961298ca11c824e65032d"}, "latest",
            {"0x9344b07175800259691961298ca11c824e65032d": {"balance": "0x1"}}, {"number": "0x99"}],
        "eth_estimateGas": [{"from": "0x0102030000000000000000000000000000000000", "input": "0xff01",
                             "to": "0x17e7eedce4ac02ef114a7ed9fe6e2f33feba1667"}],
        "eth_createAccessList": [{"from": "0x0c2c51a0990aee1d73c1228de158688341557508", "gas": "0xea60",
                                  "gasPrice": "0x5763d64", "input": "0x010203040506",
                                  "to": "0x7dcd17433742f4c0ca53122ab541d0ba67fc27df"}, "latest"],
        "eth_getProof": ["0x7dcd17433742f4c0ca53122ab541d0ba67fc27df", ["0x00"], "latest"],
        "eth_getTransactionReceipt": [tx],
        "eth_getBalance": [EMITTER, "latest"],
        "eth_getTransactionCount": [EMITTER, "latest"],
        "eth_getCode": [EMITTER, "latest"],
        "eth_getStorageAt": [EMITTER, "0x0", "latest"],
        "eth_getStorageValues (8 slots)": [{EMITTER: ["0x" + i.to_bytes(32, "big").hex() for i in range(8)]},
                                           "latest"],
        "eth_getBlockTransactionCountByNumber": ["0x2d"],
        "eth_feeHistory (46 blocks, 3 percentiles)": ["0x2e", "latest", [25, 50, 75]],
        "eth_gasPrice": [],
        "eth_blobBaseFee": [],
        "debug_getRawBlock": ["0x2d"],
        "debug_getRawReceipts": ["0x2d"],
    }
    cached = Dispatcher(backend)
    uncached = Dispatcher(backend, cache=ResponseCache(max_entries=0))
    print("in-process latency through ethread.handle's dispatcher")
    for label, params in requests.items():
        method = label.split()[0]
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        answer = json.loads(uncached.handle(body))  # type: ignore[arg-type]
        assert "result" in answer, (label, answer)
        repeat = 50 if method in ("eth_call", "eth_getProof", "eth_feeHistory", "eth_estimateGas",
                                  "eth_createAccessList") else 500
        show(f"{label}, computed each time", timed(lambda b=body: uncached.handle(b), repeat), "us")
        cached.handle(body)
        show(f"{label}, answer cached", timed(lambda b=body: cached.handle(b), 2000), "us")


def bench_logs(blocks: int, emitters: int) -> None:
    backend = ethread.MemoryBackend()
    start = time.perf_counter()
    history = synthetic_history(backend, blocks, emitters=emitters)
    built = time.perf_counter() - start
    address = "0x" + history.emitters[emitters // 2].hex()
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "eth_getLogs", "params": [
        {"fromBlock": "earliest", "toBlock": "latest", "address": address}]}).encode()
    uncached = Dispatcher(backend, cache=ResponseCache(max_entries=0))
    found = len(json.loads(uncached.handle(body))["result"])  # type: ignore[arg-type]
    print(f"eth_getLogs by one address over {blocks:,} synthetic blocks "
          f"({found} matching logs; history built in {built:.1f} s)")
    show("whole range, one address, computed each time", timed(lambda: uncached.handle(body), 200))
    narrow = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "eth_getLogs", "params": [
        {"fromBlock": hex(blocks - 1000), "toBlock": "latest", "address": address}]}).encode()
    show("last 1,000 blocks, one address, computed each time", timed(lambda: uncached.handle(narrow), 200))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--conformance", type=Path,
                        default=Path(os.environ.get("ETHREAD_CONFORMANCE", REPO.parent / "shared" / "conformance")))
    parser.add_argument("--skip-million", action="store_true", help="only 100,000 blocks for eth_getLogs")
    args = parser.parse_args()
    backend = bench_import(args.conformance / "rpc-compat")
    bench_methods(backend)
    # The same number of matches (800) at both sizes: only the history grows.
    bench_logs(100_000, 1_000)
    if not args.skip_million:
        bench_logs(1_000_000, 10_000)


if __name__ == "__main__":
    main()
