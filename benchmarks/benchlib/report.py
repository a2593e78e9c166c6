"""What a script prints about the machine it ran on."""

from __future__ import annotations

import os
import time


def load_average() -> str:
    """The machine's load average now, over 1, 5 and 15 minutes: ``1.23 1.10 0.98``."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def end_line(started: float) -> str:
    """The last line of a long run: the load average at its end, and how long the run took
    since ``started`` (a :func:`time.perf_counter` reading)."""
    return (f"load average at the end {load_average()}; "
            f"the whole run took {time.perf_counter() - started:.0f} s")
