"""Frames beside cryo on dense history a node can execute: rows per second of
``ethread.frames`` over an LMDB store, and of cryo (PyPI) extracting the same range over RPC
from ``ethread serve --db`` and from anvil holding the same chain, in the same run. Prints
figures; asserts no times.

    python benchmarks/bench_frames_vs_cryo.py [--blocks 256] [--transactions 150]
                                              [--rounds 3] [--workdir DIR] [--no-anvil]

The chain is :func:`benchlib.executable_history.build`: ``--blocks`` blocks, from block 3 on
``--transactions`` real signed transactions each (token transfers and approvals with their
logs, log-emitter calls, plain transfers, two contract creations; legacy, access-list and
dynamic-fee), mined by ethread's dev chain into an LMDB store and kept in ``--workdir``
(default ``ethread-bench-executable`` in the temporary folder) for later runs. The synthetic
history of ``bench_frames_dense.py`` is denser and longer but not executable (no state, filler
signatures), so no node can hold it; this one anvil replays (``--init`` from the same
genesis, then each block's raw transactions at its timestamp, ``--order fifo``), and the run
checks that both nodes agree on a few blocks' transactions and receipts roots, blooms, gas
used, base fees and transaction hashes (the block hashes differ: see
:data:`benchlib.executable_history.AGREEING`).

Over blocks 1..head, for the blocks, transactions and logs tables:

- ``frames.<table>`` on the LMDB store and on the chain exported as ``ere`` files (the
  post-merge archive; Era1 holds pre-merge blocks only, and this chain is proof of stake from
  genesis), one process and ``workers=2`` (the best of ``--rounds`` each; workers split an Era
  folder by file, and the ``ere`` export of fewer than 8,192 blocks is one file, so there the
  second process has nothing to do);
- cryo's dataset of the same name (16 requests at once, no rate limit), from ``ethread serve
  --db`` on the same store (2 workers, credits for any run) and from anvil;
- the ratios frames / cryo (the issue's target: at least 20x);
- in process, what cryo's blocks dataset costs the server: eth_getBlockByNumber with
  transaction hashes of every block, cold, from the block's outline (transaction hashes read
  from their bytes in the body) beside the plain path (the whole block decoded), with a check
  that both answer the same bytes.

The servers wait idle while the frames are measured, and each cryo extraction runs alone;
the machine is shared: the load average is printed with the figures.

Two things to read the figures by (measured at load average 3 on the shared two cores): a
``workers=2`` call spends about half a second getting its workers going (the blocks table
takes 0.46 s with 2 processes, 0.02 s with one), more than the whole work over 256 blocks,
so here the second process loses; ``bench_frames_dense.py``'s whole-history run shows the
speedup where the work is longer. And anvil answers a full block of 150 transactions in
about 73 ms and a block's receipts in about 25 ms (one request at a time), which is what
cryo's transactions dataset waits on there.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchlib import report
from benchlib.executable_history import ExecutableChain, build, disagreements, export_ere
from benchlib.targets import Target, start_anvil, start_ethread

TABLES = ("blocks", "transactions", "logs")


def load() -> str:
    return f"load average {report.load_average()} ({os.cpu_count()} cores)"


def line(label: str, value: str) -> None:
    print(f"  {label:<44} {value}", flush=True)


def rate(count: int, seconds: float) -> str:
    return f"{count / seconds:>10,.0f} rows/s   ({count:,} in {seconds:.2f} s)"


def best_of(rounds: int, fn: Callable[[], Any]) -> tuple[Any, float]:
    """``fn()``'s result and its shortest wall time over ``rounds`` runs."""
    best = float("inf")
    result = None
    for _ in range(rounds):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return result, best


def measure_frames(label: str, backend: Any, head: int, rounds: int,
                   ) -> dict[str, dict[str, float]]:
    """rows/s of each table over blocks 1..head, one process and two."""
    from ethread import frames
    from ethread.frames import parallel

    print(f"\nframes over {label}: blocks 1..{head} ({load()})")
    rates: dict[str, dict[str, float]] = {"1": {}, "2": {}}
    frames.tables(backend, 1, 2, progress=False)  # imports and first-call set-up
    # The rows with workers=2 measure the workers whatever the range's size (ethread.frames
    # reads a range too small to gain from them in one process: parallel.worth_workers).
    parallel.PARALLEL_FROM_BYTES = parallel.PARALLEL_FROM_BLOCKS = 0
    frames.blocks(backend, 1, 3, progress=False, workers=2)  # the forkserver, started once
    for workers in (1, 2):
        for name in TABLES:
            table, seconds = best_of(rounds, functools.partial(
                getattr(frames, name), backend, 1, head + 1, progress=False, workers=workers))
            line(f"frames.{name}, {workers} process(es)", rate(table.num_rows, seconds))
            rates[str(workers)][name] = table.num_rows / seconds
    return rates


def measure_sources(chain: ExecutableChain, rounds: int) -> dict[str, dict[str, dict[str, float]]]:
    """:func:`measure_frames` over the LMDB store and over the ``ere`` files."""
    from ethread.backends.era import EraBackend
    from ethread.backends.lmdb import LMDBBackend

    measured: dict[str, dict[str, dict[str, float]]] = {}
    with LMDBBackend(chain.lmdb, create=False) as backend:
        config = backend.chain_config()
        measured["LMDB"] = measure_frames("the LMDB store", backend, chain.head, rounds)
    folder = export_ere(chain)
    era = EraBackend(folder, config=config)  # its sidecar index built the first time
    try:
        measured["ere"] = measure_frames("the ere files", era, chain.head, rounds)
    finally:
        era.close()
    return measured


def extract(rpc: str, label: str, head: int, scratch: Path) -> dict[str, float]:
    """cryo's rows/s for each table over blocks 1..head from ``rpc``."""
    import cryo  # type: ignore[import-untyped]  # (PyPI cryo: wheels for CPython 3.11 on x86-64 Linux)
    import pyarrow.parquet as pq

    print(f"\ncryo from {label}: blocks 1..{head} ({load()})")
    rates: dict[str, float] = {}
    for dataset in TABLES:
        out = scratch / f"{label.split()[0]}-{dataset}"
        start = time.perf_counter()
        cryo.freeze([dataset], blocks=[f"1:{head + 1}"], rpc=rpc, output_dir=str(out),
                    verbose=False, requests_per_second=1_000_000,
                    max_concurrent_requests=16)
        seconds = time.perf_counter() - start
        rows = sum(pq.read_metadata(f).num_rows for f in out.glob("*.parquet"))
        line(f"cryo {dataset} (16 concurrent requests)", rate(rows, seconds))
        rates[dataset] = rows / seconds
        shutil.rmtree(out, ignore_errors=True)
    return rates


def block_object(target: Target, number: int) -> dict[str, Any]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "eth_getBlockByNumber",
                       "params": [hex(number), False]}).encode()
    status, answer = target.post(body)
    if status != 200 or not isinstance(answer.get("result"), dict):
        raise SystemExit(f"{target.name} did not answer block {number}: {answer}")
    result: dict[str, Any] = answer["result"]
    return result


def compare(ours: Target, anvil: Target, head: int) -> None:
    """Both nodes' blocks 1, 2, the middle one and the head: the fields they must agree on."""
    numbers = sorted({1, 2, head // 2, head})
    differing = {n: list(disagreements(block_object(ours, n), block_object(anvil, n)))
                 for n in numbers}
    shown = ", ".join(str(n) for n in numbers)
    if any(differing.values()):
        for number, fields in differing.items():
            if fields:
                print(f"  block {number} differs: {'; '.join(fields)}")
        raise SystemExit("anvil does not hold the same chain")
    print(f"  blocks {shown}: the same transactions (hashes and root), receipts root, bloom, "
          "gas used, base fee and timestamp on both nodes; block hashes "
          + ("differ" if block_object(ours, head)["hash"] != block_object(anvil, head)["hash"]
             else "agree"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=256)
    parser.add_argument("--transactions", type=int, default=150,
                        help="transactions a block from block 3 on")
    parser.add_argument("--rounds", type=int, default=3,
                        help="frames: the best of this many runs of each table")
    parser.add_argument("--workdir", type=Path,
                        default=Path(tempfile.gettempdir()) / "ethread-bench-executable")
    parser.add_argument("--no-anvil", dest="anvil", action="store_false",
                        help="leave anvil out (cryo from ethread serve only)")
    report.run(parser, __file__, run_benchmark)


def run_benchmark(args: argparse.Namespace) -> None:
    folder = args.workdir / f"executable-{args.blocks}-{args.transactions}"
    reused = (folder / "chain.json").exists()
    if not reused:
        print(f"building {args.blocks:,} blocks of {args.transactions} transactions in "
              f"{folder} ...", flush=True)
    chain = build(folder, args.blocks, args.transactions)
    print(f"{'reusing' if reused else 'built'} the chain in {folder}: {chain.head:,} blocks, "
          f"{chain.transactions:,} transactions, {chain.logs:,} logs; mined in "
          f"{chain.build_seconds:.0f} s")
    framed = measure_sources(chain, args.rounds)
    block_objects(chain, args.rounds)
    cryos: dict[str, dict[str, float]] = {}
    scratch = Path(tempfile.mkdtemp(prefix="ethread-bench-cryo-"))
    ours = anvil = None
    try:
        ours = start_ethread("ethread serve --db", ["--db", str(chain.lmdb)], scratch,
                             workers=2)
        cryos["ethread serve"] = extract(f"http://127.0.0.1:{ours.port}{ours.path}",
                                         "ethread serve --db (2 workers)", chain.head, scratch)
        if args.anvil:
            print(f"\nanvil ({load()})")
            anvil = start_anvil(chain)
            compare(ours, anvil, chain.head)
            ours.stop()
            ours = None
            cryos["anvil"] = extract(f"http://127.0.0.1:{anvil.port}{anvil.path}", "anvil",
                                     chain.head, scratch)
    finally:
        for target in (ours, anvil):
            if target is not None:
                target.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    summary(framed, cryos)


class _WithoutOutlines:
    """A backend seen without its block outlines: the dispatcher reads whole blocks (the plain
    path of a block object with transaction hashes)."""

    def __init__(self, backend: Any) -> None:
        self._backend = backend

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)


def block_objects(chain: ExecutableChain, rounds: int) -> None:
    """What cryo's blocks dataset asks a server for, in process: eth_getBlockByNumber with
    transaction hashes of each block, cold (a store opened afresh, a new dispatcher), CPU µs a
    block, read from the block's outline (no transaction decoded) and from the whole block."""
    from ethread.backends.lmdb import LMDBBackend
    from ethread.rpc.dispatcher import Dispatcher

    print(f"\nblock objects with transaction hashes, in process, cold ({load()})")
    bodies = [b'{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["%s",false]}'
              % hex(n).encode() for n in range(1, chain.head + 1)]
    answers: dict[str, list[bytes | None]] = {}
    for label, plain in (("from the outline", False), ("plain path (whole block decoded)", True)):
        best = float("inf")
        for _ in range(rounds):
            backend = LMDBBackend(chain.lmdb, create=False)
            try:
                dispatcher = Dispatcher(_WithoutOutlines(backend) if plain else backend)
                started = time.process_time()
                got = [dispatcher.handle(b) for b in bodies]
                best = min(best, time.process_time() - started)
            finally:
                backend.close()
            answers[label] = got
        line(f"eth_getBlockByNumber(n, false), {label}",
             f"{best / len(bodies) * 1e6:8.1f} µs CPU a block ({len(bodies)} blocks)")
    if len({tuple(a) for a in answers.values()}) != 1:
        raise SystemExit("the two paths answered differently")


def summary(framed: dict[str, dict[str, dict[str, float]]],
            cryos: dict[str, dict[str, float]]) -> None:
    """One row a table: the frames' rates, cryo's, and frames over the LMDB store (one
    process, then two) against cryo from each server."""
    print(f"\nrows/s over blocks 1..head ({load()})")
    columns = [(f"frames {source} {n}p", framed[source][n]) for source in framed
               for n in ("1", "2")]
    columns += [(f"cryo, {server}", rates) for server, rates in cryos.items()]
    header = "".join(f"{label:>22}" for label, _ in columns)
    ratios = [(f"LMDB {n}p / cryo, {server}", n, server) for server in cryos for n in ("1", "2")]
    print(f"  {'table':<13}{header}")
    for name in TABLES:
        print(f"  {name:<13}" + "".join(f"{rates[name]:>22,.0f}" for _, rates in columns))
    for label, n, server in ratios:
        print(f"  {label:<34}" + "   ".join(
            f"{name} {framed['LMDB'][n][name] / cryos[server][name]:.1f}x" for name in TABLES))


if __name__ == "__main__":
    main()
