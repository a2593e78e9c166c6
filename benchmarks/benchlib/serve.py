"""``ethread`` as a subprocess: the command of whichever ethread this Python imports
(PYTHONPATH decides, so a script can measure another checkout), and ``ethread serve`` on a
port the kernel picks, read from the banner it prints."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Sequence

MAIN = "import sys; from ethread.cli import main; sys.exit(main())"
"""A ``python -c`` program that is the ``ethread`` command."""
ETHREAD = [sys.executable, "-c", MAIN]
"""The ``ethread`` command of whichever ethread this Python imports."""
KEY = "bench-key-0000000000000000"
"""The API key the load benchmarks' servers take."""
HEALTH = re.compile(r"health: http://[^:/]+:(\d+)/health")


def ethread_command(*args: str) -> list[str]:
    return [*ETHREAD, *args]


def start_serving(args: Sequence[str], timeout: float = 180) -> tuple[subprocess.Popen[str], int]:
    """``ethread serve --port 0 ARGS`` and the port it bound, read from the health line of its
    banner; what it writes after that is read and dropped. Raises RuntimeError (with what the
    server wrote to stderr) when it exits or stays silent first."""
    process = subprocess.Popen(
        [*ETHREAD, "serve", "--port", "0", *args], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert process.stdout is not None and process.stderr is not None
    deadline = time.monotonic() + timeout
    port = None
    while port is None and time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            process.wait(10)
            raise RuntimeError("ethread serve did not start: " + process.stderr.read())
        found = HEALTH.search(line)
        if found:
            port = int(found.group(1))
    if port is None:
        process.kill()
        raise RuntimeError(f"ethread serve printed no health line within {timeout:.0f} s")
    for stream in (process.stdout, process.stderr):
        threading.Thread(target=stream.read, daemon=True).start()
    return process, port
