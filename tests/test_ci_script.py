"""`.ci/run` names test files and tests by path (the web3.py 8 run, evm-trace's run): each
must still exist, or CI stops with pytest's "file or directory not found" after the main run."""

from __future__ import annotations

import re

from tests.support.paths import REPO


def test_every_test_path_ci_names_exists() -> None:
    script = (REPO / ".ci" / "run").read_text()
    named = set(re.findall(r"(tests/[\w/]+\.py)(?:::(\w+))?", script))
    assert named, "no test paths found in .ci/run"
    missing = []
    for path, test in named:
        file = REPO / path
        if not file.is_file():
            missing.append(path)
        elif test and f"def {test}(" not in file.read_text():
            missing.append(f"{path}::{test}")
    assert not missing, f".ci/run names tests that do not exist: {missing}"
