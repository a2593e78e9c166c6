"""A pytest plugin for bench_testchain.py (``-p benchlib.testchain_cputime``): the CPU time
each test takes (setup, call and teardown) in the test process, plus the CPU time the chain's
own process spent meanwhile when ``BENCH_CHAIN_PID`` names one (anvil). Written as JSON ({test
name: seconds}) to the file ``BENCH_CPU_REPORT`` names.

On a machine shared with other jobs, wall time measures the load as much as the chain; CPU
time is what the work itself cost. A process's CPU time is read from /proc in clock ticks
(10 ms), so anvil's share is coarse per test and fair only in sums.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchlib.processes import process_cpu_seconds

_times: dict[str, float] = {}


def _chain_cpu() -> float:
    pid = os.environ.get("BENCH_CHAIN_PID")
    if not pid:
        return 0.0
    return process_cpu_seconds(int(pid))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Iterator[None]:
    own, chain = time.process_time(), _chain_cpu()
    yield
    _times[item.name] = time.process_time() - own + _chain_cpu() - chain


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    report = os.environ.get("BENCH_CPU_REPORT")
    if report:
        Path(report).write_text(json.dumps(_times))
