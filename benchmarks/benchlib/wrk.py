"""wrk (C, Debian's ``wrk``) driven by a Lua script: a load generator far cheaper than any
Python client, so that the figures measure the server alone."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

SCALE = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def installed() -> bool:
    return shutil.which("wrk") is not None


def threads(concurrency: int) -> int:
    """wrk's threads for ``concurrency`` connections: one at c=1, two above."""
    return 1 if concurrency == 1 else 2


def run(script: str, port: int, concurrency: int, seconds: float, *options: str) -> str:
    """What wrk prints after ``seconds`` (at least 1) of ``script`` against the server on
    ``port`` with ``concurrency`` connections; ``options`` go before the script."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as file:
        file.write(script)
    try:
        done = subprocess.run(
            ["wrk", "-t", str(threads(concurrency)), "-c", str(concurrency),
             "-d", f"{max(1, round(seconds))}s", *options, "-s", file.name,
             f"http://127.0.0.1:{port}"],
            capture_output=True, text=True, timeout=seconds + 60)
    finally:
        os.unlink(file.name)
    return done.stdout + done.stderr


def rate(output: str) -> float | None:
    """Requests/s, as wrk counts them (answers over the whole ``-d``)."""
    found = re.search(r"Requests/sec:\s+([\d.]+)", output)
    return float(found.group(1)) if found else None


def latency_ms(output: str, percent: int) -> float | None:
    """A percentile of the latency distribution (wrk ``--latency``), in milliseconds."""
    found = re.search(rf"\s{percent}%\s+([\d.]+)(us|ms|s)", output)
    return float(found.group(1)) * SCALE[found.group(2)] if found else None


def failures(output: str) -> int:
    """Answers that were not 2xx or 3xx, and socket errors of every kind."""
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)",
                       output)
    failed = int(bad.group(1)) if bad else 0
    if errors:
        failed += sum(int(g) for g in errors.groups())
    return failed
