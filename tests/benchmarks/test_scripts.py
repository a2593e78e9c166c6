"""Every benchmark script starts the way the docs say to run it (``python benchmarks/x.py``,
from any directory) and answers ``--help`` with its usage: a script that cannot import its
helpers is found here, not by the next person who wants its figures. The scripts share
``benchmarks/benchlib`` and never import one another; each keeps what its last run printed
in ``benchmarks/results/``."""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from pathlib import Path

import pytest
from benchlib import report

from tests.support.paths import BENCHMARKS

SCRIPTS = sorted(p for p in BENCHMARKS.glob("*.py") if "__main__" in p.read_text())


def test_the_benchmark_scripts_are_found() -> None:
    assert {"bench_core.py", "bench_load.py", "bench_storage.py"} <= {p.name for p in SCRIPTS}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_a_benchmark_script_runs_from_anywhere(script: Path, tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, str(script), "--help"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert "usage:" in result.stdout
    assert "--no-save" in result.stdout  # it keeps its results through benchlib.report


def test_the_scripts_import_the_library_not_each_other() -> None:
    scripts = {p.stem for p in BENCHMARKS.glob("*.py")}
    for script in BENCHMARKS.glob("*.py"):
        tree = ast.parse(script.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top not in scripts and top != "benchmarks", (script.name, name)


def test_a_run_keeps_what_it_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    report.add_options(parser, "bench_example.py")
    saved = tmp_path / "results" / "bench_example.txt"
    args = parser.parse_args(["--save", str(saved)])
    with report.recorded(args):
        print("method   req/s")
        print("eth_x      123")
    text = saved.read_text()
    header, _, body = text.partition("\n\n")
    assert body == "method   req/s\neth_x      123\n"
    assert "# command: python " in header and "CPUs; load average " in header
    assert "method   req/s" in capsys.readouterr().out  # still printed as before

    assert parser.parse_args(["--no-save"]).save is None
    assert parser.parse_args([]).save == BENCHMARKS / "results" / "bench_example.txt"
    with pytest.raises(RuntimeError), report.recorded(parser.parse_args(["--save", str(saved)])):
        print("half a table")
        raise RuntimeError("the run failed")
    assert saved.read_text() == text  # a failed run leaves the last whole one
