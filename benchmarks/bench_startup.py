"""How long a fresh interpreter takes to ``import ethread`` and to print ``ethread --help``,
beside the plain interpreter and the peers.

Each row is a new process of this Python (wall time from start to exit, the median and the
least of ``--runs`` runs, in turn with the other rows so that the machine's load falls on all
alike):

- ``python -c pass``: the floor every row pays (the interpreter and its site packages);
- ``import ethread``: the package alone, its names imported when first read;
- ``ethread --help``: the command's parser, every subcommand listed;
- what ``import ethread`` loaded before its names were lazy (the methods, the codec, chain
  import, the memory backend: py-evm through them), for the side-by-side;
- a first name read (``ethread.MemoryBackend``) and ``from ethread import frames`` with a
  table function touched (pyarrow);
- ``import web3``, the usual peer a script imports instead (when installed).

The targets (issue 35): ``import ethread`` at or under 0.4 s and ``ethread --help`` at or
under 0.5 s on the 2-core machine. PYTHONPATH decides which ethread is measured.

    python benchmarks/bench_startup.py [--runs 15]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import time

from benchlib import report
from benchlib.serve import MAIN

ROWS: list[tuple[str, list[str]]] = [
    ("python -c pass (the plain interpreter)", ["-c", "pass"]),
    ("import ethread", ["-c", "import ethread"]),
    ("ethread --help", ["-c", MAIN, "--help"]),
    ("what import ethread loaded before (eager)",
     ["-c", "import ethread.methods, ethread.codec.jsonrpc, ethread.chain.importer, "
            "ethread.backends.memory"]),
    ("import ethread; ethread.MemoryBackend", ["-c", "import ethread; ethread.MemoryBackend"]),
    ("from ethread import frames; frames.pyarrow()", ["-c", "from ethread import frames; "
                                                   "frames.pyarrow()"]),
]
PEERS: list[tuple[str, list[str]]] = [("import web3 (the peer)", ["-c", "import web3"])]


def once(argv: list[str]) -> float:
    """Seconds a fresh interpreter running ``argv`` takes from start to exit."""
    began = time.perf_counter()
    subprocess.run([sys.executable, *argv], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - began


def run_benchmark(args: argparse.Namespace) -> None:
    rows = list(ROWS)
    if importlib.util.find_spec("web3") is not None:
        rows += PEERS
    where = subprocess.run([sys.executable, "-c", "import ethread; print(ethread.__file__)"],
                           check=True, capture_output=True, text=True).stdout.strip()
    print(f"ethread from {where}; {sys.executable}; {args.runs} runs a row, interleaved")
    for _, argv in rows:  # warm the file cache: the first run of each reads its modules
        once(argv)
    times: dict[str, list[float]] = {name: [] for name, _ in rows}
    for _ in range(args.runs):
        for name, argv in rows:
            times[name].append(once(argv))
    floor = statistics.median(times[rows[0][0]])
    print(f"{'':46}{'median':>9}{'least':>9}{'above python':>15}")
    for name, _ in rows:
        median = statistics.median(times[name])
        print(f"{name:46}{median:>8.3f}s{min(times[name]):>8.3f}s{median - floor:>+14.3f}s")
    targets = (("import ethread", 0.4), ("ethread --help", 0.5))
    for name, limit in targets:
        median = statistics.median(times[name])
        print(f"{name}: median {median:.3f} s, target {limit} s: "
              f"{'met' if median <= limit else 'NOT met'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15, help="runs of each row (default 15)")
    report.run(parser, __file__, run_benchmark)


if __name__ == "__main__":
    main()
