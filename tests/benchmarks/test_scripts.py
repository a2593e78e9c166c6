"""Every benchmark script starts the way the docs say to run it (``python benchmarks/x.py``,
from any directory) and answers ``--help`` with its usage: a script that cannot import its
helpers is found here, not by the next person who wants its figures. The scripts share
``benchmarks/benchlib`` and never import one another."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

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
