"""Progress bars are drawn for someone watching (a terminal, a notebook), never into a log."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from ethread import progress
from ethread.progress import ProgressBar, is_terminal, shows_bars
from tests.support.paths import conformance_dir
from tests.support.server_harness import ETHREAD


class Terminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        if self.closed:
            raise ValueError("I/O operation on closed file")  # as a real stream does
        return True


def test_a_bar_on_a_terminal_is_drawn() -> None:
    stream = Terminal()
    bar = ProgressBar("importing", stream=stream)
    for done in (1, 50, 100):
        bar(done, 100)
    bar.finish()
    assert bar.drawn
    text = stream.getvalue()
    assert "importing" in text and "100/100" in text


def test_a_bar_on_a_file_or_pipe_writes_nothing() -> None:
    stream = io.StringIO()  # a log file, CI output: not a terminal
    bar = ProgressBar("importing", stream=stream)
    for done in (1, 50, 100):
        bar(done, 100)
    assert bar.finish() >= 0
    assert not bar.drawn
    assert stream.getvalue() == ""


def test_closed_and_odd_streams_are_not_terminals() -> None:
    closed = Terminal()
    closed.close()
    assert not is_terminal(closed)
    assert not is_terminal(object())  # type: ignore[arg-type]
    assert is_terminal(Terminal())


def test_shows_bars_follows_the_stream_outside_a_notebook(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "in_notebook", lambda: False)
    assert not shows_bars(io.StringIO())
    assert shows_bars(Terminal())
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert shows_bars()
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert not shows_bars()


def test_a_notebook_shows_bars_whatever_its_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    class ZMQInteractiveShell:  # the class name IPython's kernel shell has
        pass

    class FakeIPython:
        @staticmethod
        def get_ipython() -> ZMQInteractiveShell:
            return ZMQInteractiveShell()

    monkeypatch.setitem(sys.modules, "IPython", FakeIPython)  # type: ignore[arg-type]
    assert progress.in_notebook()
    assert shows_bars(io.StringIO())
    monkeypatch.delitem(sys.modules, "IPython")
    assert not progress.in_notebook()


def test_frames_draw_no_bar_into_a_log(monkeypatch: pytest.MonkeyPatch) -> None:
    from ethread.frames.tables import PROGRESS_FROM, progress_bar

    monkeypatch.setattr(progress, "in_notebook", lambda: False)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert progress_bar(PROGRESS_FROM * 4, True) is None
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    bar = progress_bar(PROGRESS_FROM * 4, True)
    assert bar is not None
    bar.update(PROGRESS_FROM)
    bar.close()
    assert "ethread.frames" in terminal.getvalue()
    assert progress_bar(PROGRESS_FROM * 4, False) is None
    assert progress_bar(PROGRESS_FROM - 1, True) is None


def test_the_command_line_writes_no_bar_lines_into_a_log(tmp_path: Path) -> None:
    """``ethread import`` with stderr redirected (as in CI): the bar's redraws are not there."""
    compat = conformance_dir() / "rpc-compat"
    result = subprocess.run(
        [*ETHREAD, "import", "--db", str(tmp_path / "db"),
         "--genesis", str(compat / "genesis.json"), "--blocks", str(compat / "chain.rlp"),
         "--no-verify-seals"],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "\r" not in result.stderr and "it/s" not in result.stderr
    assert "blocks/s" not in result.stderr
    assert "imported" in result.stdout  # the summary line stays
