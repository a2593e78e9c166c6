"""Frames figures: rows per second for ``ethread.frames`` blocks, transactions and logs tables
on the Era1 and LevelDB backends, beside the same tables built the way a notebook user does
it without frames: web3.py over HTTP against ``ethread serve`` (``w3.eth.get_block`` per
block, ``w3.eth.get_logs`` by window) into pandas. Prints figures; asserts no times.

    python benchmarks/bench_frames.py [--blocks 100000] [--workdir DIR] [--web3-blocks N]

The history is :func:`benchlib.synthetic_history.synthetic_history` (one signed transfer and
one Transfer log per block) written into LevelDB and exported to Era1 files of the same
blocks. Both stores are kept in ``--workdir`` (default: ``ethread-bench-frames`` in the
temporary folder) and reused by later runs of the same ``--blocks``; ``--fresh`` rebuilds.

Every table is built once, from a freshly opened store, over the whole history (blocks
0..blocks). The web3.py tables cover the first ``--web3-blocks`` blocks (default: all of
them), read from a server in a subprocess with access logging off and an in-memory ledger.
The load average is printed with the figures: the machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchlib import report
from benchlib.processes import stop_process
from benchlib.serve import start_serving
from benchlib.synthetic_history import synthetic_history

from ethread import frames
from ethread.backends.era import EraBackend
from ethread.backends.leveldb import LevelDBBackend
from ethread.era1.export import export_era1

KEY = "bench-frames-0123456789"
LOG_WINDOW = 5_000
"""Blocks per eth_getLogs call on the web3.py side: with one log a block, a window stays under
the server's default cap of 10,000 logs an answer, as a user paging a long range must."""


def line(label: str, value: str) -> None:
    print(f"  {label:<52} {value}", flush=True)


def load() -> str:
    return f"load average {report.load_average()} ({os.cpu_count()} cores)"


def progress(label: str) -> Callable[[int, int], None]:
    def show(done: int, total: int) -> None:
        if sys.stderr.isatty():
            sys.stderr.write(f"\r  {label}: {done}/{total}")
            if done >= total:
                sys.stderr.write("\n")
            sys.stderr.flush()
    return show


def build(work: Path, blocks: int, fresh: bool) -> None:
    """LevelDB and Era1 stores of ``blocks`` synthetic blocks in ``work``, unless a previous
    run left complete ones there."""
    marker = work / "complete.json"
    if not fresh and marker.exists() and json.loads(marker.read_text()) == {"blocks": blocks}:
        print(f"reusing the {blocks:,}-block history in {work}")
        return
    for path in (marker, work / "leveldb", work / "era1"):
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    print(f"building a {blocks:,}-block history in {work}")
    store = LevelDBBackend(work / "leveldb")
    start = time.perf_counter()
    synthetic_history(store, blocks, sign=True, progress=progress("writing LevelDB"))
    line("LevelDB: written in", f"{time.perf_counter() - start:,.1f} s")
    start = time.perf_counter()
    export_era1(store, work / "era1", network="synthetic", proof_of_work_only=False,
                progress=progress("exporting Era1"))
    line("Era1: exported in", f"{time.perf_counter() - start:,.1f} s")
    store.compact()
    store.close()
    start = time.perf_counter()
    EraBackend(work / "era1", progress=progress("indexing Era1")).close()
    line("Era1: sidecar index built in", f"{time.perf_counter() - start:,.1f} s")
    marker.write_text(json.dumps({"blocks": blocks}))


def rate(label: str, fn: Callable[[], Any]) -> None:
    start = time.perf_counter()
    rows = fn()
    seconds = time.perf_counter() - start
    line(label, f"{rows / seconds:>10,.0f} rows/s   ({rows:,} rows in {seconds:,.1f} s)")


def bench_frames(name: str, opener: Callable[[], Any], stop: int) -> None:
    for table in ("blocks", "transactions", "logs"):
        # A fresh store for each table: no table profits from another's warm caches.
        backend = opener()
        try:
            fn = getattr(frames, table)
            rate(f"{name}: frames.{table}",
                 lambda f=fn, b=backend: f(b, 0, stop, progress=False).num_rows)
        finally:
            backend.close()
    backend = opener()
    try:
        rate(f"{name}: frames.tables (the three, one pass)",
             lambda: sum(t.num_rows for t in frames.tables(
                 backend, 0, stop, ("blocks", "transactions", "logs"), progress=False).values()))
    finally:
        backend.close()


@contextmanager
def served(flag: str, path: Path) -> Iterator[str]:
    """``ethread serve`` over the store at ``path`` on a free loopback port: its URL."""
    try:
        process, port = start_serving(
            [flag, str(path), "--host", "127.0.0.1", "--api-key", KEY, "--daily-credits",
             str(10**15), "--ledger", ":memory:", "--no-access-log", "--log-level", "warning"])
    except RuntimeError:
        raise SystemExit(f"ethread serve {flag} did not start") from None
    try:
        yield f"http://127.0.0.1:{port}/v3/{KEY}"
    finally:
        stop_process(process, signal.SIGTERM, 30)


def web3_blocks(w3: Any, stop: int) -> Any:
    import pandas as pd

    rows = []
    for number in range(stop):
        b = w3.eth.get_block(number)
        rows.append({
            "number": b["number"], "hash": b["hash"].to_0x_hex(),
            "parent_hash": b["parentHash"].to_0x_hex(),
            "timestamp": b["timestamp"], "miner": b["miner"], "gas_limit": b["gasLimit"],
            "gas_used": b["gasUsed"], "base_fee_per_gas": b.get("baseFeePerGas"),
            "difficulty": b["difficulty"], "size": b["size"],
            "transaction_count": len(b["transactions"]),
            "state_root": b["stateRoot"].to_0x_hex(), "logs_bloom": bytes(b["logsBloom"]),
            "extra_data": bytes(b["extraData"]),
        })
    frame = pd.DataFrame(rows)
    frame["timestamp"] = pd.to_datetime(frame["timestamp"], unit="s", utc=True)
    return frame


def web3_transactions(w3: Any, stop: int) -> Any:
    import pandas as pd

    rows = []
    for number in range(stop):
        b = w3.eth.get_block(number, full_transactions=True)
        for tx in b["transactions"]:
            rows.append({
                "block_number": tx["blockNumber"], "block_hash": tx["blockHash"].to_0x_hex(),
                "timestamp": b["timestamp"], "transaction_index": tx["transactionIndex"],
                "hash": tx["hash"].to_0x_hex(), "type": tx["type"], "from": tx["from"],
                "to": tx.get("to"), "value": tx["value"], "nonce": tx["nonce"],
                "gas": tx["gas"], "gas_price": tx["gasPrice"],
                "max_fee_per_gas": tx.get("maxFeePerGas"),
                "max_priority_fee_per_gas": tx.get("maxPriorityFeePerGas"),
                "input": bytes(tx["input"]), "chain_id": tx.get("chainId"), "v": tx["v"],
                "r": tx["r"].to_0x_hex(), "s": tx["s"].to_0x_hex(),
            })
    frame = pd.DataFrame(rows)
    frame["timestamp"] = pd.to_datetime(frame["timestamp"], unit="s", utc=True)
    return frame


def web3_logs(w3: Any, stop: int) -> Any:
    import pandas as pd

    rows = []
    for low in range(0, stop, LOG_WINDOW):
        high = min(stop, low + LOG_WINDOW) - 1
        for log in w3.eth.get_logs({"fromBlock": low, "toBlock": high}):
            topics = [t.to_0x_hex() for t in log["topics"]] + [None] * (4 - len(log["topics"]))
            rows.append({
                "block_number": log["blockNumber"], "block_hash": log["blockHash"].to_0x_hex(),
                "transaction_index": log["transactionIndex"],
                "transaction_hash": log["transactionHash"].to_0x_hex(),
                "log_index": log["logIndex"], "address": log["address"],
                "topic0": topics[0], "topic1": topics[1], "topic2": topics[2],
                "topic3": topics[3], "data": bytes(log["data"]),
            })
    return pd.DataFrame(rows)


def bench_web3(name: str, flag: str, path: Path, stop: int) -> None:
    from web3 import HTTPProvider, Web3

    for table, fn in (("blocks", web3_blocks), ("transactions", web3_transactions),
                      ("logs", web3_logs)):
        # A fresh server for each table, as each frames table gets a freshly opened store.
        with served(flag, path) as url:
            w3 = Web3(HTTPProvider(url, request_kwargs={"timeout": 120}))
            rate(f"web3.py over HTTP ({name}): {table}",
                 lambda f=fn, w=w3: len(f(w, stop)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=100_000,
                        help="blocks of synthetic history after genesis (default 100,000)")
    parser.add_argument("--workdir", type=Path,
                        default=Path(tempfile.gettempdir()) / "ethread-bench-frames",
                        help="where the stores are built and kept for later runs")
    parser.add_argument("--fresh", action="store_true", help="rebuild the stores")
    parser.add_argument("--web3-blocks", type=int, default=None,
                        help="blocks read through web3.py (default: the whole history)")
    parser.add_argument("--skip-web3", action="store_true")
    parser.add_argument("--skip-frames", action="store_true")
    parser.add_argument("--only", choices=("Era1", "LevelDB"), default=None,
                        help="bench one backend only")
    report.run(parser, __file__, run_benchmark)


def run_benchmark(args: argparse.Namespace) -> None:
    # Stopped with SIGTERM, still stop the servers it started (the finally blocks run).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    # Imported before any clock starts: the first table should not pay for loading them.
    import pandas  # noqa: F401
    import pyarrow  # noqa: F401
    import web3  # noqa: F401

    work = args.workdir / f"{args.blocks}"
    work.mkdir(parents=True, exist_ok=True)
    build(work, args.blocks, args.fresh)
    stop = args.blocks + 1  # genesis and every block after it
    backends: dict[str, tuple[str, Path, Callable[[], Any]]] = {
        "Era1": ("--era", work / "era1", lambda: EraBackend(work / "era1")),
        "LevelDB": ("--db", work / "leveldb",
                    lambda: LevelDBBackend(work / "leveldb", create=False)),
    }
    if args.only:
        backends = {args.only: backends[args.only]}
    if not args.skip_frames:
        print(f"frames over blocks 0..{args.blocks:,}; {load()}")
        for name, (_, _, opener) in backends.items():
            bench_frames(name, opener, stop)
            print(f"  ({load()})")
    if not args.skip_web3:
        web3_stop = stop if args.web3_blocks is None else min(stop, args.web3_blocks)
        print(f"web3.py over HTTP against ethread serve, blocks 0..{web3_stop - 1:,}; {load()}")
        for name, (flag, path, _) in backends.items():
            bench_web3(name, flag, path, web3_stop)
            print(f"  ({load()})")


if __name__ == "__main__":
    main()
