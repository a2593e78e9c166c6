"""What one credit debit costs, engine by engine side by side: the SQLite ledger as it is, SQLite
with a tuned setting, the memory-mapped ledger (``*.ledger``) and Redis; with and without a
rate limit, as one worker sees it (one synchronous charge after another, and charges made
:data:`TOGETHER` at a time with ``charge_many``, as a worker holding many connections charges
a turn's requests); two processes charging one key at once, one by one and
:data:`TOGETHER` at a time (and whether the ledger then holds exactly the admitted charges);
and how many charge scripts one Redis runs per second when many clients pipeline them
(``redis-benchmark``). The engines take turns within each round, so that a machine whose load
changes from minute to minute weighs on each alike.

    .venv/bin/python benchmarks/bench_ledger.py [--charges 20000] [--rounds 5]
                                                [--redis redis://HOST:PORT/DB]

Without ``--redis`` a ``redis-server`` is started on a free loopback port in a temporary
directory (and stopped), when one is installed. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchlib import report
from benchlib.processes import free_port, wait_for_port

KEY_ID = "0" * 64


@contextlib.contextmanager
def local_redis(scratch: Path) -> Iterator[str | None]:
    binary = shutil.which("redis-server")
    if binary is None:
        yield None
        return
    port = free_port()
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--dir",
                                str(scratch), "--save", "", "--appendonly", "no"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, process, 20)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(10)


SQLITE_TUNED = ("PRAGMA wal_autocheckpoint=10000",)
"""What "SQLite tuned" adds to the ledger's own settings: checkpoints ten times rarer. (Only
settings that keep its promises: ``synchronous=OFF`` is faster still but an operating-system
crash can then corrupt the file, not only lose the last debits.)"""

TOGETHER = 6
"""Charges made at once in the ``charge_many`` columns: about what one turn of a worker's loop
reads at 16 connections over 2 workers."""

CONTENDER = """
import sys, time
from ethread.server.billing.credits import open_ledger
spec, charges, limit, start_at = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
together = int(sys.argv[5])
ledger = open_ledger(spec)
rate = float(sys.argv[6]) if len(sys.argv) > 6 else None
charge = (%r, limit, rate, 80, 0)
while time.time() < start_at:
    pass
started = time.perf_counter()
if together == 1:
    admitted = sum(ledger.charge(*charge) is None for _ in range(charges))
else:
    admitted = sum(outcome is None for _ in range(charges // together)
                   for outcome in ledger.charge_many([charge] * together))
print(admitted, time.perf_counter() - started)
ledger.close()
"""


def open_engine(spec: str, tuned: bool = False) -> Any:
    from ethread.server.billing.credits import open_ledger

    ledger = open_ledger(spec)
    if tuned:
        for pragma in SQLITE_TUNED:
            ledger._db.execute(pragma)
    return ledger


def per_charge(spec: str, rate: float | None, charges: int, tuned: bool = False,
               together: int = 1) -> float:
    """Seconds a charge, one process charging one key ``charges`` times (``together`` at a
    time with ``charge_many`` when more than 1)."""
    ledger = open_engine(spec, tuned)
    try:
        started = time.perf_counter()
        if together == 1:
            for _ in range(charges):
                if ledger.charge(KEY_ID, 10**15, rate, 80) is not None:
                    raise SystemExit("a charge was refused")
        else:
            turn = [(KEY_ID, 10**15, rate, 80, 0)] * together
            for _ in range(charges // together):
                if any(outcome is not None for outcome in ledger.charge_many(turn)):
                    raise SystemExit("a charge was refused")
            charges = charges // together * together
        return (time.perf_counter() - started) / charges
    finally:
        ledger.close()


def two_processes(spec: str, rate: float | None, charges: int,
                  together: int = 1) -> tuple[float, str]:
    """Two processes charge one key ``charges`` times each at the same instant (``together``
    at a time), against a balance of 3/4 of what they try: seconds a charge as each process
    sees it (the mean of the two), and whether the ledger holds exactly the sum of the
    admitted charges."""
    charges = charges // together * together
    key = f"two-{time.monotonic_ns()}"
    limit = 80 * charges * 3 // 2
    start_at = str(time.time() + 1.0)
    extra = [repr(rate)] if rate else []
    script = CONTENDER % key
    children = [subprocess.Popen([sys.executable, "-c", script, spec, str(charges), str(limit),
                                  start_at, str(together), *extra], stdout=subprocess.PIPE,
                                 text=True)
                for _ in range(2)]
    admitted, seconds = 0, 0.0
    for child in children:
        out, _ = child.communicate(timeout=600)
        if child.returncode != 0:
            raise SystemExit(f"a charging process failed on {spec}")
        count, took = out.split()
        admitted += int(count)
        seconds += float(took) / charges / 2
    ledger = open_engine(spec)
    try:
        used = ledger.used(key)
    finally:
        ledger.close()
    exact = used == admitted * 80 and admitted * 80 <= limit
    verdict = (f"exact ({admitted} admitted)" if exact
               else f"WRONG: {used} spent for {admitted} admitted, limit {limit}")
    return seconds, verdict


def scripts_per_second(url: str, rate: float | None) -> str:
    """redis-benchmark running the charge script from 50 pipelining clients."""
    if shutil.which("redis-benchmark") is None:
        return "redis-benchmark not installed"
    import redis

    from ethread.server.billing.ledger_redis import CHARGE

    client = redis.Redis.from_url(url)
    try:
        sha = client.script_load(CHARGE)
        host = client.connection_pool.connection_kwargs["host"]
        port = client.connection_pool.connection_kwargs["port"]
    finally:
        client.close()
    done = subprocess.run(
        ["redis-benchmark", "-h", str(host), "-p", str(port), "-n", "100000", "-c", "50",
         "-P", "16", "-q", "EVALSHA", sha, "0", "bench:", "__rand_int__", str(10**15), "80",
         repr(rate) if rate else "0"], capture_output=True, text=True, timeout=300)
    line = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
    return line.rsplit(": ", 1)[-1]


def main() -> None:
    parser = report.parser(__doc__)
    parser.add_argument("--charges", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5,
                        help="rounds, each measuring every engine once in turn (medians shown)")
    parser.add_argument("--redis", help="a Redis to measure (default: start one)")
    report.run(parser, __file__, run_benchmark)


def run_benchmark(args: argparse.Namespace) -> None:
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="ethread-ledger-bench-") as scratch, \
            local_redis(Path(scratch)) if args.redis is None else contextlib.nullcontext(
                args.redis) as url:
        engines: list[tuple[str, str, bool]] = [
            ("SQLite (as before)", str(Path(scratch) / "credits.sqlite3"), False),
            ("SQLite tuned", str(Path(scratch) / "tuned.sqlite3"), True),
            ("mapped file (*.ledger)", str(Path(scratch) / "bench.ledger"), False),
        ]
        if url is not None:
            engines.append(("Redis", url, False))
        else:
            print("Redis: no redis-server installed and no --redis given")
        timings: dict[tuple[str, str], list[float]] = {}
        verdicts: dict[tuple[str, str], set[str]] = {}
        for _ in range(args.rounds):
            for name, spec, tuned in engines:
                for rate in (None, 1e12):
                    plain = "with rate limit" if rate else "no rate limit"
                    timings.setdefault((name, plain), []).append(
                        per_charge(spec, rate, args.charges, tuned))
                timings.setdefault((name, f"{TOGETHER} at once"), []).append(
                    per_charge(spec, None, args.charges, tuned, TOGETHER))
                for together, column in ((1, "2 processes"),
                                         (TOGETHER, f"2 processes, {TOGETHER} at once")):
                    seconds, verdict = two_processes(spec, None, args.charges // 2, together)
                    timings.setdefault((name, column), []).append(seconds)
                    verdicts.setdefault((name, "2 processes"), set()).add(
                        "exact" if verdict.startswith("exact") else verdict)
        columns = ("no rate limit", "with rate limit", f"{TOGETHER} at once", "2 processes",
                   f"2 processes, {TOGETHER} at once")
        print(f"µs a charge, median of {args.rounds} rounds (min-max); {TOGETHER} at once: "
              f"charge_many of {TOGETHER}; 2 processes: one key charged by both at once, µs a "
              f"charge as each sees it")
        print(f"| engine | {' | '.join(columns)} | 2 processes: spent = admitted |")
        print(f"|---|{'---|' * len(columns)}---|")
        for name, _, _ in engines:
            cells = []
            for column in columns:
                values = sorted(v * 1e6 for v in timings[(name, column)])
                cells.append(f"{statistics.median(values):.1f} ({values[0]:.1f}-{values[-1]:.1f})")
            print(f"| {name} | {' | '.join(cells)} | "
                  f"{', '.join(sorted(verdicts[(name, '2 processes')]))} |")
        if url is not None:
            for rate in (None, 1e12):
                print(f"Redis, {'with' if rate else 'no'} rate limit, 50 pipelining clients: "
                      f"{scripts_per_second(url, rate)}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
