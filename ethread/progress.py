"""How long work reports how far it has got.

Imports, exports, verification and index building take a ``progress`` callable and call it
with (items done, items in all) as they go, often enough to draw a bar and seldom enough to
cost nothing. The command line draws them with tqdm (:class:`ProgressBar`); a library caller
passes what it likes, or None.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO, TypeAlias

Progress: TypeAlias = Callable[[int, int], None]
"""Called with (done, total)."""


class ProgressBar:
    """A :data:`Progress` drawn on a terminal by tqdm: ``label: 42%|####  | 420/1000
    [00:02<00:03, 210 blocks/s]``, redrawn at most 10 times a second so that drawing does not
    slow what it measures. The command line (``import``, ``export``, ``verify`` and the
    imports of ``serve``) shows its work with it."""

    def __init__(self, label: str, unit: str = "blocks", stream: TextIO | None = None) -> None:
        self.label = label
        self.unit = unit
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self._bar: Any = None  # drawn from the first report on: no work, no bar

    def __call__(self, done: int, total: int) -> None:
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
