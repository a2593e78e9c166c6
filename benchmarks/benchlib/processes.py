"""Processes a benchmark starts: a free port, waiting for one, stopping a process, and what a
process costs (CPU seconds and resident memory, read from /proc)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[Any], timeout: float) -> bool:
    """Whether ``port`` accepts a connection within ``timeout`` seconds while ``process`` runs
    (False as soon as it exits)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return True
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                return False
            time.sleep(0.02)


def stop_process(process: subprocess.Popen[Any], sig: int = signal.SIGINT,
                 timeout: float = 20) -> None:
    """Stop a server the benchmark started: ``sig`` (a graceful stop), then SIGKILL if it has
    not exited within ``timeout`` seconds."""
    if process.poll() is None:
        process.send_signal(sig)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def process_cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) a live process has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) used so far by a process and every live descendant (the
    workers of ``ethread serve --workers``), from /proc; 0.0 where /proc is not there."""
    total = 0.0
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            total += process_cpu_seconds(current)
            for task in Path(f"/proc/{current}/task").iterdir():
                stack.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, IndexError, ValueError):
            continue
    return total


def rss_mb(pid: int) -> float:
    """A live process's resident memory in MiB, from /proc (0.0 when /proc does not say)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def start_reporting(command: list[str], stderr: int | None = subprocess.DEVNULL,
                    ) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    """A server process that prints one JSON line about itself (its port, what it serves)
    when it is ready: the process, and that line read."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line:
        process.wait(10)
        raise SystemExit("the benchmark server did not start")
    info: dict[str, Any] = json.loads(line)
    return process, info
