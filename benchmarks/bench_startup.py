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

With ``--before PATH`` (a checkout of an older ethread, e.g. ``main`` before the names were
lazy), ``import ethread`` and ``ethread --help`` of that checkout are measured in the same run,
side by side.

The targets (issue 35): ``import ethread`` at or under 0.4 s and ``ethread --help`` at or
under 0.5 s on the 2-core machine. PYTHONPATH decides which ethread is measured.

    python benchmarks/bench_startup.py [--runs 15] [--before ../main]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import report
from benchlib.serve import MAIN

ROWS: list[tuple[str, list[str]]] = [
    ("python -c pass (the plain interpreter)", ["-c", "pass"]),
    ("import ethread", ["-c", "import ethread"]),
    ("ethread --help", ["-c", MAIN, "--help"]),
    ("what import ethread loaded before (eager)",
     ["-c", "import ethread.methods, ethread.rpc.dispatcher, ethread.chain.importer, "
            "ethread.backends.memory"]),
    ("import ethread; ethread.MemoryBackend", ["-c", "import ethread; ethread.MemoryBackend"]),
    ("from ethread import frames; frames.pyarrow()", ["-c", "from ethread import frames; "
                                                   "frames.pyarrow()"]),
]
PEERS: list[tuple[str, list[str]]] = [("import web3 (the peer)", ["-c", "import web3"])]


Row = tuple[str, list[str], dict[str, str] | None]


NEUTRAL = tempfile.mkdtemp(prefix="bench-startup-")
"""The folder every row runs in: no ethread/ in it, so PYTHONPATH alone decides which ethread
each row imports (``python -c`` puts the current folder first on the path)."""


def this_environment() -> dict[str, str]:
    """This process's environment with PYTHONPATH's entries made absolute (the rows run in
    :data:`NEUTRAL`)."""
    paths = [str(Path(p).resolve()) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def once(argv: list[str], env: dict[str, str] | None = None) -> float:
    """Seconds a fresh interpreter running ``argv`` (with ``env``) takes from start to exit."""
    began = time.perf_counter()
    subprocess.run([sys.executable, *argv], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=env or this_environment(), cwd=NEUTRAL)
    return time.perf_counter() - began


def run_benchmark(args: argparse.Namespace) -> None:
    rows: list[Row] = [(name, argv, None) for name, argv in ROWS]
    if importlib.util.find_spec("web3") is not None:
        rows += [(name, argv, None) for name, argv in PEERS]
    if args.before is not None:
        before = {**os.environ, "PYTHONPATH": str(args.before.resolve())}
        rows += [(f"import ethread ({args.before})", ["-c", "import ethread"], before),
                 (f"ethread --help ({args.before})", ["-c", MAIN, "--help"], before)]
    where = subprocess.run([sys.executable, "-c", "import ethread; print(ethread.__file__)"],
                           check=True, capture_output=True, text=True, cwd=NEUTRAL,
                           env=this_environment()).stdout.strip()
    print(f"ethread from {where}; {sys.executable}; {args.runs} runs a row, interleaved")
    for _, argv, env in rows:  # warm the file cache: the first run of each reads its modules
        once(argv, env)
    times: dict[str, list[float]] = {name: [] for name, _, _ in rows}
    for _ in range(args.runs):
        for name, argv, env in rows:
            times[name].append(once(argv, env))
    floor = statistics.median(times[rows[0][0]])
    print(f"{'':52}{'median':>9}{'least':>9}{'above python':>15}")
    for name, _, _ in rows:
        median = statistics.median(times[name])
        print(f"{name:52}{median:>8.3f}s{min(times[name]):>8.3f}s{median - floor:>+14.3f}s")
    targets = (("import ethread", 0.4), ("ethread --help", 0.5))
    for name, limit in targets:
        median = statistics.median(times[name])
        print(f"{name}: median {median:.3f} s, target {limit} s: "
              f"{'met' if median <= limit else 'NOT met'}")


def main() -> None:
    parser = report.parser(__doc__)
    parser.add_argument("--runs", type=int, default=15, help="runs of each row (default 15)")
    parser.add_argument("--before", type=Path, metavar="PATH",
                        help="a checkout of an older ethread to measure beside this one")
    report.run(parser, __file__, run_benchmark)


if __name__ == "__main__":
    main()
