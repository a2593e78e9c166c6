"""Storage figures: import speed, open time, eth_getLogs latency and bytes per block, for the
LevelDB, LMDB and Era1 backends (memory as the reference). Prints figures; asserts no times.

    python benchmarks/bench_storage.py [--blocks 100000] [--workdir DIR] [--keep]

Import speed uses the rpc-compat chain (executed with py-evm, from ETHREAD_CONFORMANCE or
../shared/conformance) and synthetic history (written without execution). The 100,000-block
figures use :func:`benchlib.synthetic_history.synthetic_history` (one transfer and one
Transfer log per block) in LevelDB, copied record by record into LMDB and exported to Era1
files of the same blocks; block reads are timed on freshly opened stores (cold caches).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchlib import conformance, report
from benchlib.synthetic_history import synthetic_history

import ethread
from ethread.backend import LogQuery
from ethread.backends.era import EraBackend
from ethread.backends.keyvalue import KeyValueBackend, copy_records
from ethread.backends.leveldb import LevelDBBackend
from ethread.backends.lmdb import LMDBBackend
from ethread.backends.memory import MemoryBackend
from ethread.chain.importer import import_chain
from ethread.era1.export import export_era1

ENGINES: dict[str, Callable[..., KeyValueBackend]] = {"LevelDB": LevelDBBackend,
                                                     "LMDB": LMDBBackend}


def timed(fn: Callable[[], Any], repeat: int = 5) -> tuple[float, Any]:
    """Median seconds of ``repeat`` runs, and the last result."""
    times = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def folder_bytes(folder: Path, suffix: str | None = None) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*")
               if p.is_file() and (suffix is None or p.name.endswith(suffix)))


def line(label: str, value: str) -> None:
    print(f"  {label:<58} {value}")


def bench_import(work: Path) -> None:
    print("import (rpc-compat chain, 45 executed blocks, seals off)")
    compat = conformance() / "rpc-compat"
    genesis, blocks = compat / "genesis.json", compat / "chain.rlp"
    rates: dict[str, list[float]] = {"memory": [], **{name: [] for name in ENGINES}}
    for attempt in range(3):
        for name in rates:
            path = work / f"import-{attempt}"
            backend: Any = MemoryBackend() if name == "memory" else ENGINES[name](path)
            start = time.perf_counter()
            count = import_chain(backend, genesis, blocks, verify_seals=False)
            rates[name].append(count / (time.perf_counter() - start))
            if name != "memory":
                backend.close()
                shutil.rmtree(path)
    for name, values in rates.items():
        line(f"{name}: blocks/s (median of 3)", f"{statistics.median(values):,.0f}")

    print("write (synthetic history, 5,000 blocks, no execution)")
    for name in ("memory", *ENGINES):
        path = work / "synthetic-write"
        backend = MemoryBackend() if name == "memory" else ENGINES[name](path)
        start = time.perf_counter()
        synthetic_history(backend, 5_000, sign=True)
        line(f"{name}: blocks/s", f"{5_000 / (time.perf_counter() - start):,.0f}")
        if name != "memory":
            backend.close()
            shutil.rmtree(path)


def progress(label: str) -> Callable[[int, int], None]:
    def show(done: int, total: int) -> None:
        sys.stderr.write(f"\r  {label}: {done}/{total}")
        sys.stderr.flush()
        if done >= total:
            sys.stderr.write("\n")
    return show


def bench_large(work: Path, blocks: int) -> None:
    print(f"{blocks:,}-block synthetic history")
    db_path, era_path = work / "large-db", work / "large-era"
    store = LevelDBBackend(db_path)
    start = time.perf_counter()
    history = synthetic_history(store, blocks, sign=True, progress=progress("writing LevelDB"))
    line("LevelDB: written in", f"{time.perf_counter() - start:,.1f} s")
    start = time.perf_counter()
    export_era1(store, era_path, network="synthetic", proof_of_work_only=False,
                progress=progress("exporting Era1"))
    line("Era1: exported in", f"{time.perf_counter() - start:,.1f} s")
    lmdb_path = work / "large-lmdb"
    start = time.perf_counter()
    with LMDBBackend(lmdb_path) as copy:
        records = copy_records(store, copy)
    line(f"LMDB: copied from LevelDB ({records:,} records) in",
         f"{time.perf_counter() - start:,.1f} s")
    store.compact()
    store.close()
    paths = {"LevelDB": db_path, "LMDB": lmdb_path}

    for name, path in paths.items():
        opens = []
        for _ in range(5):
            start = time.perf_counter()
            store = ENGINES[name](path, create=False)
            opens.append(time.perf_counter() - start)
            head = store.pointer("latest")
            store.close()
        line(f"{name}: open time (head {head}, median of 5)",
             f"{statistics.median(opens) * 1e3:.1f} ms")
    bench_reads(paths, blocks)

    start = time.perf_counter()
    era = EraBackend(era_path, config=None, progress=None)
    line("Era1: first open (builds the sidecar index)", f"{time.perf_counter() - start:,.1f} s")
    era.close()
    start = time.perf_counter()
    era = EraBackend(era_path)
    line("Era1: open time (index built)", f"{(time.perf_counter() - start) * 1e3:.1f} ms")
    store = LevelDBBackend(db_path, create=False)

    for name, path in paths.items():
        line(f"{name}: bytes per block (whole store, on disk)",
             f"{disk_bytes(path) / (blocks + 1):,.0f}")
    era_bytes = folder_bytes(era_path, ".era1")
    index_bytes = folder_bytes(era_path) - era_bytes
    line("Era1: bytes per block (files)", f"{era_bytes / (blocks + 1):,.0f}")
    line("Era1: bytes per block (sidecar index)", f"{index_bytes / (blocks + 1):,.0f}")

    emitter = history.emitters[0]
    sender = history.senders[0]
    queries = {
        "address, 1,000-block window": LogQuery(blocks // 2, blocks // 2 + 999,
                                                addresses=(emitter,)),
        "address, 10,000-block window": LogQuery(blocks // 2, blocks // 2 + 9_999,
                                                 addresses=(emitter,)),
        f"address, whole {blocks:,} blocks": LogQuery(0, blocks, addresses=(emitter,)),
        "address + from-topic, whole range": LogQuery(
            0, blocks, addresses=(emitter,),
            topics=((history.transfer_topic,), (b"\x00" * 12 + sender,))),
        "absent address, whole range": LogQuery(0, blocks, addresses=(b"\x42" * 20,)),
    }
    lmdb_store = LMDBBackend(lmdb_path, create=False)
    for name, backend in (("LevelDB", store), ("LMDB", lmdb_store), ("Era1", era)):
        for label, query in queries.items():
            # First run decodes receipts (cold); the median of later runs is cache-warm.
            cold, logs = timed(lambda q=query, b=backend: b.logs(q), repeat=1)
            warm, _ = timed(lambda q=query, b=backend: b.logs(q), repeat=3)
            line(f"{name}: getLogs {label} ({len(logs):,} logs)",
                 f"cold {cold * 1e3:,.1f} ms, warm {warm * 1e3:,.1f} ms")
        # Distinct windows, so neither the response cache nor the receipt cache answers.
        seconds = []
        for window in range(5):
            low = blocks // 4 + window * 5_000 + {"LevelDB": 0, "LMDB": 1_000}.get(name, 2_000)
            request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "eth_getLogs", "params": [{
                "fromBlock": hex(low), "toBlock": hex(low + 999),
                "address": "0x" + emitter.hex()}]}).encode()
            start = time.perf_counter()
            ethread.handle(backend, request)
            seconds.append(time.perf_counter() - start)
        line(f"{name}: eth_getLogs JSON-RPC, fresh 1,000-block window",
             f"{statistics.median(seconds) * 1e3:,.1f} ms")
    store.close()
    lmdb_store.close()
    era.close()


def disk_bytes(folder: Path) -> int:
    """Blocks the files take on disk (an LMDB file is sparse: its length overstates)."""
    return sum(p.stat().st_blocks * 512 for p in folder.rglob("*") if p.is_file())


def bench_reads(paths: dict[str, Path], blocks: int) -> None:
    """Blocks and receipts by number at random, on a freshly opened store (no cache warm)."""
    rng = random.Random(7)
    numbers = [rng.randrange(blocks + 1) for _ in range(2_000)]
    for name, path in paths.items():
        store = ENGINES[name](path, create=False)
        times = []
        for number in numbers:
            start = time.perf_counter()
            block_hash = store.canonical_hash(number)
            assert block_hash is not None
            store.block_by_hash(block_hash)
            store.receipts(block_hash)
            times.append(time.perf_counter() - start)
        times.sort()
        line(f"{name}: block + receipts by number, cold (2,000 random)",
             f"median {times[len(times) // 2] * 1e6:,.0f} us, "
             f"p99 {times[len(times) * 99 // 100] * 1e6:,.0f} us")
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=100_000)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the stores afterwards")
    report.run(parser, __file__, run_benchmark)


def run_benchmark(args: argparse.Namespace) -> None:
    work = args.workdir or Path(tempfile.mkdtemp(prefix="ethread-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        bench_import(work)
        bench_large(work, args.blocks)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
