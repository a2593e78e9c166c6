"""What a script prints about the machine, and the file that keeps its last results.

Every script takes ``--save PATH`` (default ``benchmarks/results/<script>.txt``) and
``--no-save``, and runs its measurements inside :func:`recorded`: what it prints there goes to
the terminal as before and, when the run ends without an exception, also to that file, under
a header naming the date, the command line, the machine's CPU count and load average (at the
start and at the end) and ethread's commit. A file therefore always holds one whole run, the
last one, and ``git diff`` on it shows what a change did to the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO, TypeVar, cast

from benchlib import REPO, RESULTS

T = TypeVar("T")


def load_average() -> str:
    """The machine's load average now, over 1, 5 and 15 minutes: ``1.23 1.10 0.98``."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def end_line(started: float) -> str:
    """The last line of a long run: the load average at its end, and how long the run took
    since ``started`` (a :func:`time.perf_counter` reading)."""
    return (f"load average at the end {load_average()}; "
            f"the whole run took {time.perf_counter() - started:.0f} s")


def parser(doc: str | None) -> argparse.ArgumentParser:
    """A benchmark's command line, its help the script's docstring as written."""
    return argparse.ArgumentParser(description=doc,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


def add_options(parser: argparse.ArgumentParser, script: str) -> None:
    """``--save PATH`` and ``--no-save``; ``script``: the script's ``__file__``."""
    default = RESULTS / f"{Path(script).stem}.txt"
    parser.add_argument("--save", type=Path, metavar="PATH", default=default,
                        help="where to keep what this run prints, with the date, the machine's "
                             f"load and the command line (default: {default.relative_to(REPO)})")
    parser.add_argument("--no-save", dest="save", action="store_const", const=None,
                        help="keep no file of this run")


def run(parser: argparse.ArgumentParser, script: str,
        benchmark: Callable[[argparse.Namespace], T]) -> T:
    """What a script's main ends with: its command line parsed (with :func:`add_options`'s),
    and ``benchmark(args)`` run :func:`recorded`. ``script``: the script's ``__file__``."""
    add_options(parser, script)
    args = parser.parse_args()
    with recorded(args):
        return benchmark(args)


class _Tee:
    """stdout, with a copy of everything written to it."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.copy = io.StringIO()

    def write(self, text: str) -> int:
        self.copy.write(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


@contextlib.contextmanager
def recorded(args: argparse.Namespace) -> Iterator[None]:
    """What is printed inside, kept in ``args.save`` (unless None) once the block ends without
    an exception; see the module's docstring."""
    if args.save is None:
        yield
        return
    started = datetime.now(UTC)
    load = load_average()
    clock = time.perf_counter()
    original = sys.stdout
    tee = _Tee(original)
    sys.stdout = cast(TextIO, tee)
    try:
        yield
    finally:
        sys.stdout = original
    header = [
        f"# {_script()}: what its last run printed",
        f"# date: {started:%Y-%m-%d %H:%M} UTC; the run took {time.perf_counter() - clock:.0f} s",
        f"# command: {_command()}",
        f"# machine: {os.cpu_count()} CPUs; load average {load} at the start, "
        f"{load_average()} at the end",
        f"# checkout: {_commit()}",
    ]
    path = Path(args.save)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text("\n".join(header) + "\n\n" + tee.copy.getvalue())
    partial.replace(path)
    print(f"(saved in {_shown(path)})")


def _shown(path: Path) -> str:
    resolved = path.resolve()
    return str(resolved.relative_to(REPO)) if resolved.is_relative_to(REPO) else str(path)


def _script() -> str:
    return _shown(Path(sys.argv[0]))


def _command() -> str:
    return shlex.join(["python", _script(), *sys.argv[1:]])


def _commit() -> str:
    """The checkout's commit, and whether the checkout has changes beyond the results files."""
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10, check=True).stdout
        changed = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain",
                                  "--untracked-files=no", "--", ".", ":!benchmarks/results"],
                                 capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return "(not a git checkout)"
    return head.strip() + (" with uncommitted changes" if changed.strip() else "")
