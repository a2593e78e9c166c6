"""The Era folder's sidecar index: build time, rate and size on many synthetic files, with 1
and 2 worker processes, and an interrupted build resumed. Prints figures; asserts no times.

    python benchmarks/bench_era_index.py [--set NAME:FILESxBLOCKSxTXS ...] [--workdir DIR]
                                         [--fresh] [--save PATH | --no-save]

Each ``--set`` is a folder of FILES Era1 files (one per epoch, as a mainnet folder has 1,897
of them up to the merge), each holding BLOCKS blocks at the start of its epoch, each block
TXS transactions of every type (``benchlib.synthetic_history.era1_epochs``: transfers, swaps,
creations, blob and set-code transactions, about 1.3 logs a transaction, signatures from
which a sender is always recovered). The default sets are ``many:1897x4x16`` (the count of
files is what matters: per-file costs) and ``dense:4x256x150`` (blocks as full as today's
mainnet). Folders are kept in ``--workdir`` (default ``ethread-bench-eraindex`` in the
temporary folder) for later runs.

For each set: the index built from nothing with 1 worker, then with 2 (back to back); then a
2-worker build killed (SIGKILL, the builder and its workers) about half way and resumed
with 2 workers; then one file of the next epoch added and indexed alone. The resumed index
is checked equal, row for row, to the one built in one go. The machine is shared: the load
average is printed beside the figures. The last results are kept in
``benchmarks/results/bench_era_index.txt`` (``benchlib.report``).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import report
from benchlib.index_progress import complete_files
from benchlib.synthetic_history import era1_epochs

from ethread.backends.era_index import BuildReport, HistoryIndex
from ethread.era1.accumulator import EPOCH_SIZE
from ethread.era1.archive import archive_paths, open_archive

TABLES = ("files", "blocks", "txs", "log_address", "log_topic", "log_blocks")


def parse_set(text: str) -> tuple[str, int, int, int]:
    """``NAME:FILESxBLOCKSxTXS`` as (name, files, blocks a file, transactions a block)."""
    try:
        name, shape = text.split(":")
        files, blocks, txs = (int(part) for part in shape.split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME:FILESxBLOCKSxTXS") from None
    if not (name and files >= 1 and 1 <= blocks <= EPOCH_SIZE and txs >= 0):
        raise argparse.ArgumentTypeError(f"{text!r}: files >= 1, 1 <= blocks <= {EPOCH_SIZE}")
    return name, files, blocks, txs


def index_size(path: Path) -> int:
    """Bytes of the index on disk: the database and its write-ahead log."""
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def digest(path: Path) -> str:
    """sha256 of every row of the index, table by table in key order (files without their
    modification times, which differ between copies)."""
    db = sqlite3.connect(path)
    h = hashlib.sha256()
    for table in TABLES:
        columns = "name, start, count, size, tail" if table == "files" else "*"
        for row in sorted(db.execute(f"SELECT {columns} FROM {table}")):
            h.update(repr(row).encode())
    db.close()
    return h.hexdigest()[:16]


def fresh_index(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", ".lock"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def build(folder: Path, index: Path, workers: int) -> BuildReport:
    files = [open_archive(p) for p in archive_paths(folder)]
    built = HistoryIndex(index)
    try:
        return built.build(files, workers=workers)
    finally:
        built.close()
        for era in files:
            era.close()


def killed_build(folder: Path, index: Path, workers: int, files: int) -> int:
    """Start a build in another process, SIGKILL it and its workers when about half the
    files are complete; returns how many were."""
    child = subprocess.Popen([sys.executable, __file__, "--child-build", str(folder), str(index),
                              str(workers)], start_new_session=True)
    try:
        while child.poll() is None and complete_files(index) < max(1, files // 2):
            time.sleep(0.05)
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    time.sleep(0.5)  # the forkserver and the workers see their parent gone and exit
    return complete_files(index)


def load() -> str:
    return f"load average {report.load_average()}"


def run_set(name: str, files: int, blocks: int, txs: int, workdir: Path, fresh: bool) -> None:
    folder = workdir / f"{name}-{files}x{blocks}x{txs}"
    marker = folder / "complete"
    if fresh and folder.exists():
        shutil.rmtree(folder)
    if not marker.exists():
        began = time.monotonic()
        shutil.rmtree(folder, ignore_errors=True)
        era1_epochs(folder / "era1", files, blocks, txs)
        marker.write_text("made\n")
        print(f"[{name}] made {files} files in {time.monotonic() - began:.0f}s")
    era1 = folder / "era1"
    archive_bytes = sum(p.stat().st_size for p in archive_paths(era1))
    print(f"== {name}: {files:,} Era1 files x {blocks} blocks x {txs} transactions "
        f"({files * blocks:,} blocks, {files * blocks * txs:,} transactions, "
        f"{archive_bytes:,} bytes of archive)")
    rows = []
    digests = {}
    for workers in (1, 2):
        index = folder / f"index-{workers}.sqlite"
        fresh_index(index)
        before = load()
        report = build(era1, index, workers)
        size = index_size(index)
        digests[workers] = digest(index)
        rows.append((f"build, {workers} worker{'s' if workers > 1 else ''}", report, size,
                     before))
    index = folder / "index-resumed.sqlite"
    fresh_index(index)
    done_before = killed_build(era1, index, 2, files)
    before = load()
    resumed = build(era1, index, 2)
    rows.append((f"resume after kill -9 ({done_before} files done)", resumed, index_size(index),
                 before))
    digests[0] = digest(index)
    extra = folder / "era1-next"
    shutil.rmtree(extra, ignore_errors=True)
    era1_epochs(extra, 1, blocks, txs, first_epoch=files + 1)
    added = next(extra.iterdir())
    target = era1 / added.name
    shutil.copy(added, target)
    try:
        before = load()
        rows.append(("one new file added", build(era1, index, 2), index_size(index), before))
    finally:
        target.unlink()
        shutil.rmtree(extra)
    print(f"{'':<38} {'files':>6} {'blocks':>8} {'txs':>9} {'seconds':>8} {'files/s':>8} "
        f"{'txs/s':>7} {'cpu s':>6} {'cores':>5} {'index bytes':>12} {'B/block':>8} {'B/tx':>6}"
        f"  at start")
    for label, report, size, at in rows:
        seconds = max(report.seconds, 1e-9)
        held = files + 1 if label.startswith("one new") else files  # files in the index
        print(f"{label:<38} {len(report.indexed):>6} {report.blocks:>8,} "
            f"{report.transactions:>9,} {report.seconds:>8.1f} "
            f"{len(report.indexed) / seconds:>8.1f} {report.transactions / seconds:>7,.0f} "
            f"{report.cpu_seconds:>6.1f} {report.cpu_seconds / seconds:>5.2f} {size:>12,} "
            f"{size / (held * blocks):>8.0f} {size / max(1, held * blocks * txs):>6.0f}"
            f"  {at}")
    same = digests[1] == digests[2] == digests[0]
    print(f"index rows: 1 worker {digests[1]}, 2 workers {digests[2]}, resumed {digests[0]}: "
        f"{'identical' if same else 'DIFFERENT'}; speedup of 2 workers "
        f"{rows[0][1].seconds / max(rows[1][1].seconds, 1e-9):.2f}x")
    print(f"(cpu s: CPU time of the work on the blocks in all workers, the writer's not counted; "
        f"cores: cpu s over seconds, the cores the build got; index bytes: the whole index "
        f"after the build, per block and transaction it holds; {load()} at the end)")


def main() -> int:
    if sys.argv[1:2] == ["--child-build"]:  # the build killed_build starts, and kills
        folder, index, workers = sys.argv[2:5]
        build(Path(folder), Path(index), int(workers))
        return 0
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--set", dest="sets", action="append", type=parse_set,
                        help="NAME:FILESxBLOCKSxTXS (repeatable; default many:1897x4x16 and "
                        "dense:4x256x150)")
    parser.add_argument("--workdir", type=Path,
                        default=Path(tempfile.gettempdir()) / "ethread-bench-eraindex")
    parser.add_argument("--fresh", action="store_true", help="make the folders again")
    report.run(parser, __file__, run_benchmark)
    return 0


def run_benchmark(args: argparse.Namespace) -> None:
    sets = args.sets or [parse_set("many:1897x4x16"), parse_set("dense:4x256x150")]
    print(f"bench_era_index on {os.cpu_count()} CPUs, {load()}")
    for name, files, blocks, txs in sets:
        print()
        run_set(name, files, blocks, txs, args.workdir, args.fresh)


if __name__ == "__main__":
    sys.exit(main())
