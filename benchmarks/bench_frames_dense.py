"""Frames at the speed of the data: rows per second of ``ethread.frames`` on dense history, beside
what reading the same bytes costs at the least. Prints figures; asserts no times.

    python benchmarks/bench_frames_dense.py [--blocks 8191] [--transactions 150]
                                            [--sample 1024] [--workdir DIR] [--fresh]
                                            [--only Era1|ere|LMDB] [--cryo]

The history is :func:`benchlib.synthetic_history.dense_history`: ``--blocks`` blocks of
``--transactions`` transactions each (every type; transfers, swaps, approvals, creations,
blobs, set-code; about 1.3 logs a transaction), written as an LMDB store, Era1 files and ere
files, kept in ``--workdir`` (default ``ethread-bench-dense`` in the temporary folder) for later
runs; the Era folders' sidecar indexes (which recover every sender once) are built with it.

For each source (Era1, ere, LMDB), over blocks 1..``--sample``, one process:

- the limits: reading and decompressing the records alone (``raw_blocks``: an archive's
  records located, read and snappy-decompressed; LMDB's read from the map), the first read
  and again (the tables are read after it, from the page cache: the second is theirs to
  beat), the Keccak of every transaction (its hash, which no archive stores: every table of
  transactions, receipts or logs needs it), RLP-decoding them alone (header, body, every
  typed transaction's envelope, receipts: every item to its bytes, nothing else, with the
  item decoder), and recovering senders from signatures (what the sidecar index spares a
  reader, measured on the sample's first 5,000 transactions). A table's limit is reading
  again plus the Keccak (the blocks table's: reading again), and each table's time is
  printed as a multiple of it (the issue's target: within 2x);
- ``frames.blocks``, ``transactions``, ``receipts`` and ``logs`` each alone (rows per second
  of its own table), and ``frames.tables`` of the four in one pass; beside blocks, receipts
  and logs, their plain path (every body and receipt decoded whole, where the blocks table
  counts a body's lists from their length prefixes, the logs table hashes transactions without
  decoding them, and the receipts table counts each receipt's logs); beside transactions,
  receipts and logs also the bulk path item by item (``arrays=False``: each block's body and
  receipts decoded into Python lists), which the array walks
  (:mod:`ethread.frames.transactions_arrays`, :mod:`ethread.frames.receipts_arrays`,
  :mod:`ethread.frames.logs_arrays`) replace, and which must give the same table;
- the model path (``Block``/``Receipt`` models per row, what frames did before the bulk path)
  for the transactions table, for comparison.

With ``--cryo``, cryo (PyPI) extracts the sample's blocks, transactions and logs over RPC from
``ethread serve --db`` on the LMDB store (2 workers, 16 requests at once), what a user would do
instead, and each of its rates is printed beside the best one-process frames rate of the run
(the synthetic chain's transactions are not executable, so anvil cannot hold it:
``bench_frames_vs_cryo.py`` puts cryo from anvil beside frames on an executable chain).

Then over the whole history: the four tables in one pass with 1 process and with 2
(``workers=2``), each twice in turn (the first pass may read the history from disk: this
machine's reclaim evicts the page cache), transactions per second, the CPU time of the
calling process (with workers: its serial part, receiving and concatenating the parts) and
the speedup of the best run of each; beside it the machine's own ceiling for two processes:
the two halves of the history built by two independent processes (no worker pool, nothing
handed back), each alone and then both at once (the sum of the times alone over the longer
time together: what two cores give this work when the processes share nothing but the
machine). The machine is shared: the load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from benchlib import report
from benchlib.serve import start_serving
from benchlib.synthetic_history import dense_history

from ethread import frames
from ethread.backends.era import EraBackend
from ethread.backends.lmdb import LMDBBackend
from ethread.frames import parallel
from ethread.frames.bulk import tables_of_records
from ethread.frames.parallel import opener
from ethread.frames.tables import collect_models
from ethread.keccak import keccak_spans
from ethread.rlpcodec.items import decode_nested, item_spans, payload_span, string_start


def load() -> str:
    return f"load average {report.load_average()} ({os.cpu_count()} cores)"


def line(label: str, value: str) -> None:
    print(f"  {label:<58} {value}", flush=True)


def rate(count: int, seconds: float, unit: str = "rows/s") -> str:
    return f"{count / seconds:>12,.0f} {unit}   ({count:,} in {seconds:.2f} s)"


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def build(work: Path, blocks: int, transactions: int, fresh: bool) -> dict[str, Any]:
    marker = work / "complete.json"
    if not fresh and marker.exists():
        made: dict[str, Any] = json.loads(marker.read_text())
        if made.get("blocks") == blocks and made.get("transactions") == transactions:
            print(f"reusing the {blocks:,}-block dense history in {work}")
            return made
    if work.exists():
        shutil.rmtree(work)
    print(f"building {blocks:,} dense blocks of {transactions} transactions in {work} ...",
          flush=True)
    stores, seconds = timed(lambda: dense_history(work, blocks, transactions=transactions))
    made = {"blocks": blocks, "transactions": transactions, "rows": stores.transactions,
            "logs": stores.logs, "make_s": seconds}
    with LMDBBackend(stores.lmdb, create=False) as lmdb:
        config = lmdb.chain_config()
    for name in ("era1", "ere"):
        _, made[f"index_{name}_s"] = timed(
            lambda n=name: EraBackend(work / n, config=config).close())  # type: ignore[misc]
    marker.write_text(json.dumps(made))
    return made


def _decode_all(raw: Any) -> None:
    """Every item of a block's records to its bytes: the least any reader must do."""
    decode_nested(raw.header_rlp)
    body = decode_nested(raw.body_rlp)
    assert isinstance(body, list)
    for item in body[0]:  # type: ignore[union-attr]
        if isinstance(item, bytes):
            decode_nested(item[1:])
    if raw.receipts_rlp is not None:
        for receipt in decode_nested(raw.receipts_rlp):  # type: ignore[union-attr]
            if isinstance(receipt, bytes):
                decode_nested(receipt[1:])


def _recover(records: list[Any], limit: int) -> tuple[int, float]:
    from ethread.rlpcodec.senders import recover_senders

    done = 0
    start = time.perf_counter()
    for raw in records:
        done += len(recover_senders(raw.body_rlp))
        if done >= limit:
            break
    return done, time.perf_counter() - start


def _transaction_spans(raw: Any) -> tuple[bytes, list[int], list[int]]:
    """Where each transaction of a block's body is, as its hash covers it (a typed one's
    envelope, a legacy one's whole list)."""
    body = raw.body_rlp
    at, _ = payload_span(body)
    txs_at, txs_end = payload_span(body, at)
    starts, ends = [], []
    for lo, hi in item_spans(body, txs_at, txs_end):
        starts.append(lo if body[lo] >= 0xC0 else string_start(body, lo))  # typed: its envelope
        ends.append(hi)
    return body, starts, ends


def measure(label: str, backend: Any, sample: int, head: int) -> dict[str, float]:
    print(f"\n{label}: blocks 1..{sample} ({load()})")
    figures: dict[str, float] = {}
    records, cold_s = timed(lambda: list(backend.raw_blocks(1, sample + 1)))
    txs = sum(len(r.senders) // 20 for r in records)
    line("limit: read + decompress the records, first read", rate(txs, cold_s, "txs/s"))
    records, read_s = timed(lambda: list(backend.raw_blocks(1, sample + 1)))
    line("limit: read + decompress the records, again", rate(txs, read_s, "txs/s"))
    spans = [_transaction_spans(r) for r in records]
    hashes, hash_s = timed(lambda: [keccak_spans(*s) for s in spans])
    assert sum(len(h) for h in hashes) == 32 * txs
    line("limit: Keccak of every transaction (its hash)", rate(txs, hash_s, "txs/s"))
    _, decode_s = timed(lambda: [_decode_all(r) for r in records])
    line("limit: RLP-decode every item", rate(txs, decode_s, "txs/s"))
    recovered, recover_s = _recover(records, 5_000)
    line("limit: recover senders from signatures", rate(recovered, recover_s, "txs/s"))
    figures.update(read=txs / read_s, decode=txs / decode_s, recover=recovered / recover_s)
    limit_s = read_s + hash_s
    line("limit of a table of transactions: read again + Keccak", rate(txs, limit_s, "txs/s"))
    records = []  # let the sample's records go before the tables are built
    frames.tables(backend, 1, 2, progress=False)  # imports and first-call set-up, not timed
    for name in ("blocks", "transactions", "receipts", "logs"):
        table, seconds = timed(lambda n=name: getattr(frames, n)(backend, 1, sample + 1,
                                                                 progress=False))
        limit = read_s if name == "blocks" else limit_s  # (blocks: the header hashes only)
        line(f"frames.{name}", rate(table.num_rows, seconds)
             + f"; {seconds / limit:.2f}x the limit's time")
        figures[name] = table.num_rows / seconds
        if name != "blocks":  # the bulk path item by item beside the array walk
            items, seconds = timed(lambda n=name: tables_of_records(
                backend.raw_blocks(1, sample + 1, receipts=n != "transactions"), [n],
                backend.chain_config(), arrays=False))
            if not items[name].equals(table):
                raise SystemExit(f"the array walk's {name} differ from the item-by-item path's")
            line(f"  bulk path item by item (no array walk): {name}",
                 rate(items[name].num_rows, seconds))
            figures[f"{name}_items"] = items[name].num_rows / seconds
        if name != "transactions":  # the plain path beside it: bodies, receipts decoded whole
            whole, seconds = timed(lambda n=name: tables_of_records(
                backend.raw_blocks(1, sample + 1, receipts=n != "blocks"), [n],
                backend.chain_config(), whole_bodies=True))
            line(f"  plain path (bodies and receipts decoded whole): {name}",
                 rate(whole[name].num_rows, seconds))
    names = ["blocks", "transactions", "receipts", "logs"]
    tables, seconds = timed(lambda: frames.tables(backend, 1, sample + 1, names, progress=False))
    line("frames.tables (the four, one pass): transactions", rate(
        tables["transactions"].num_rows, seconds))
    model, seconds = timed(lambda: collect_models(backend, 1, sample + 1, ["transactions"],
                                                  progress=False))
    line("model path (a Block model per block): transactions",
         rate(model["transactions"].num_rows, seconds))
    figures["model_transactions"] = model["transactions"].num_rows / seconds
    # The rows with workers=2 measure the workers whatever the range's size (ethread.frames
    # reads a range too small to gain from them in one process: parallel.worth_workers).
    parallel.PARALLEL_FROM_BYTES = parallel.PARALLEL_FROM_BLOCKS = 0
    frames.blocks(backend, 1, 3, progress=False, workers=2)  # the forkserver, started once
    for workers in (1, 2, 1, 2):  # twice each: the first read of the history is from disk
        cpu = time.process_time()
        whole, seconds = timed(lambda w=workers: frames.tables(
            backend, 1, head + 1, names, progress=False, workers=w))
        cpu = time.process_time() - cpu
        line(f"whole history, the four tables, {workers} process(es)",
             rate(whole["transactions"].num_rows, seconds, "txs/s")
             + f"; this process's CPU {cpu:.2f} s")
        key = f"workers{workers}"
        figures[key] = max(figures.get(key, 0.0), whole["transactions"].num_rows / seconds)
        del whole
    line("speedup of 2 processes (the best run of each)",
         f"{figures['workers2'] / figures['workers1']:.2f}x")
    halves = [(1, head // 2 + 1), (head // 2 + 1, head + 1)]
    opened = opener(backend)
    alone = [_halves_timed(opened, [half])[0] for half in halves]
    together = _halves_timed(opened, halves)
    line("the machine's own ceiling: each half alone", " + ".join(f"{s:.2f} s" for s in alone))
    line("  the two halves at once, two independent processes",
         " and ".join(f"{s:.2f} s" for s in together)
         + f": {sum(alone) / max(together):.2f}x")
    return figures


def _half(open_backend: Callable[[], Any], lo: int, hi: int) -> float:
    """Seconds to build the four tables of ``range(lo, hi)`` in this process (after a first
    call on three blocks, untimed)."""
    backend = open_backend()
    try:
        names = ["blocks", "transactions", "receipts", "logs"]
        frames.tables(backend, lo, lo + 3, names, progress=False)
        _, seconds = timed(lambda: frames.tables(backend, lo, hi, names, progress=False))
        return seconds
    finally:
        backend.close()


def _halves_timed(open_backend: Callable[[], Any], halves: list[tuple[int, int]]) -> list[float]:
    """Each half's seconds, the halves run at once in as many independent processes."""
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(len(halves), mp_context=context) as pool:
        return list(pool.map(_half, [open_backend] * len(halves), *zip(*halves, strict=True)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=8191)
    parser.add_argument("--transactions", type=int, default=150)
    parser.add_argument("--sample", type=int, default=1024)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) /
                        "ethread-bench-dense")
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument("--only", choices=("Era1", "ere", "LMDB"))
    parser.add_argument("--cryo", action="store_true",
                        help="also cryo (PyPI) extracting blocks, transactions and logs of the "
                             "sample from `ethread serve --db` on the LMDB store (2 workers), "
                             "beside the frames' rows/s")
    report.run(parser, __file__, run_benchmark)


def run_benchmark(args: argparse.Namespace) -> None:
    work = args.workdir / f"dense-{args.blocks}-{args.transactions}"
    made = build(work, args.blocks, args.transactions, args.fresh)
    indexes = ", ".join(f"{kind} index {made[key]:.0f} s" for kind, key in
                        (("Era1", "index_era1_s"), ("ere", "index_ere_s")) if made.get(key))
    print(f"history: {made['blocks']:,} blocks, {made['rows']:,} transactions, "
          f"{made['logs']:,} logs; made in {made['make_s']:.0f} s; {indexes}")
    measured: dict[str, dict[str, float]] = {}
    for label, folder in (("Era1", "era1"), ("ere", "ere"), ("LMDB", "lmdb")):
        if args.only and args.only != label:
            continue
        if label == "LMDB":
            backend: Any = LMDBBackend(work / "lmdb", create=False)
        else:
            with LMDBBackend(work / "lmdb", create=False) as lmdb:
                config = lmdb.chain_config()
            backend = EraBackend(work / folder, config=config)
        try:
            measured[label] = measure(label, backend, min(args.sample, args.blocks), args.blocks)
        finally:
            backend.close()
    if args.cryo:
        beside_cryo(work, min(args.sample, args.blocks), measured)


def beside_cryo(work: Path, sample: int, measured: dict[str, dict[str, float]]) -> None:
    """cryo's rows/s over the sample, from ``ethread serve --db`` (2 workers) on the LMDB
    store, beside the frames' (what a user extracting over RPC gets instead)."""
    import cryo  # (PyPI cryo: wheels for CPython 3.11 on x86-64 Linux)
    import pyarrow.parquet as pq

    print(f"\ncryo over RPC: blocks 1..{sample} ({load()})")
    scratch = Path(tempfile.mkdtemp(prefix="ethread-bench-cryo-"))
    server, port = start_serving(["--db", str(work / "lmdb"), "--workers", "2",
                                  "--ledger", str(scratch / "credits.ledger"),
                                  "--no-access-log", "--log-level", "warning"])
    try:
        rpc = f"http://127.0.0.1:{port}/v3/ethread-demo-key"
        for dataset, table in (("blocks", "blocks"), ("transactions", "transactions"),
                               ("logs", "logs")):
            out = scratch / dataset
            _, seconds = timed(lambda d=dataset, o=out: cryo.freeze(
                [d], blocks=[f"1:{sample + 1}"], rpc=rpc, output_dir=str(o), verbose=False,
                requests_per_second=1_000_000, max_concurrent_requests=16))
            rows = sum(pq.read_metadata(f).num_rows for f in out.glob("*.parquet"))
            best = max((figures[table] for figures in measured.values() if table in figures),
                       default=0.0)
            line(f"cryo {dataset} (16 concurrent requests)",
                 rate(rows, seconds) + (f"; frames, one process, best source: "
                                        f"{best:,.0f} rows/s = {best * seconds / rows:.1f}x"
                                        if rows and best else ""))
    finally:
        server.terminate()
        server.wait(30)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
