"""What one credit debit costs: the SQLite ledger and the Redis ledger, with and without a
rate limit, as one worker sees it (one synchronous charge after another), and how many charge
scripts one Redis runs per second when many clients pipeline them (``redis-benchmark``).

    .venv/bin/python benchmarks/bench_ledger.py [--charges 20000] [--redis redis://HOST:PORT/DB]

Without ``--redis`` a ``redis-server`` is started on a free loopback port in a temporary
directory (and stopped), when one is installed. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

KEY_ID = "0" * 64


@contextlib.contextmanager
def local_redis(scratch: Path) -> Iterator[str | None]:
    binary = shutil.which("redis-server")
    if binary is None:
        yield None
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--dir",
                                str(scratch), "--save", "", "--appendonly", "no"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(10)


def per_charge(spec: str, rate: float | None, charges: int) -> float:
    from ethread.server.credits import open_ledger

    ledger = open_ledger(spec)
    try:
        started = time.perf_counter()
        for _ in range(charges):
            if ledger.charge(KEY_ID, 10**15, rate, 80) is not None:
                raise SystemExit("a charge was refused")
        return (time.perf_counter() - started) / charges
    finally:
        ledger.close()


def scripts_per_second(url: str, rate: float | None) -> str:
    """redis-benchmark running the charge script from 50 pipelining clients."""
    if shutil.which("redis-benchmark") is None:
        return "redis-benchmark not installed"
    import redis

    from ethread.server.ledger_redis import CHARGE

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
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--charges", type=int, default=20_000)
    parser.add_argument("--redis", help="a Redis to measure (default: start one)")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="ethread-ledger-bench-") as scratch:
        sqlite = str(Path(scratch) / "credits.sqlite3")
        for rate in (None, 1e12):
            cost = per_charge(sqlite, rate, args.charges)
            print(f"SQLite, {'with' if rate else 'no'} rate limit: {cost * 1e6:.1f} µs a charge")
        with local_redis(Path(scratch)) if args.redis is None else contextlib.nullcontext(
                args.redis) as url:
            if url is None:
                print("Redis: no redis-server installed and no --redis given")
                return
            for rate in (None, 1e12):
                cost = per_charge(url, rate, args.charges)
                print(f"Redis, {'with' if rate else 'no'} rate limit: {cost * 1e6:.1f} µs a "
                      f"charge (one client); {scripts_per_second(url, rate)} (50 clients)")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
