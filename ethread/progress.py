"""How long work reports how far it has got: a ``progress`` callable hears (items done, items in
all). The command line draws it with tqdm (:class:`ProgressBar`) only on a terminal or in a
notebook (:func:`shows_bars`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO, TypeAlias

Progress: TypeAlias = Callable[[int, int], None]
"""Called with (done, total)."""


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is an open terminal (False for files, pipes and closed streams)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or closed
        return False


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (IPython is not imported to find out)."""
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    shell = get_ipython() if callable(get_ipython) else None
    return type(shell).__name__ == "ZMQInteractiveShell"


def shows_bars(stream: TextIO | None = None) -> bool:
    """Whether a progress bar should be drawn on ``stream`` (default: stderr): a notebook or a terminal."""
    return in_notebook() or is_terminal(sys.stderr if stream is None else stream)


class ProgressBar:
    """A :data:`Progress` drawn by tqdm at most 10 times a second, where :func:`shows_bars`."""

    def __init__(self, label: str, unit: str = "blocks", stream: TextIO | None = None) -> None:
        self.label = label
        self.unit = unit
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self.drawn = is_terminal(self.stream)
        """Whether the bar is drawn at all (the stream is a terminal)."""
        self._bar: Any = None  # drawn from the first report on: no work, no bar

    def __call__(self, done: int, total: int) -> None:
        """Report ``done`` of ``total`` items; the bar appears with the first report."""
        if not self.drawn:
            return
        bar = self._bar
        if bar is None:
            from tqdm import tqdm

            bar = self._bar = tqdm(desc=self.label, unit=f" {self.unit}", file=self.stream,
                                   total=total, mininterval=0.1, dynamic_ncols=True)
        elif bar.total != total:
            bar.total = total
        if done != bar.n:
            bar.update(done - bar.n)

    def finish(self) -> float:
        """End the bar's line; returns the seconds since the bar was made."""
        if self._bar is not None:
            self._bar.close()
        return time.monotonic() - self.started
