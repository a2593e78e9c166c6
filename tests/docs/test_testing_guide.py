"""docs/testing.md's "from zero to a passing contract test" works as written: its Solidity
contract, compiled by its compile.js with solc-js (offline), and its test file, run by pytest
with nothing but ethread's plugin, pass."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO

pytestmark = pytest.mark.node

GUIDE = REPO / "docs" / "testing.md"
SOLC = REPO / "tests" / "contracts" / "node_modules"


def _block(language: str, containing: str) -> str:
    blocks = re.findall(r"```(\w+)\n(.*?)```", GUIDE.read_text(), flags=re.S)
    return next(body for lang, body in blocks if lang == language and containing in body)


def test_the_guide_from_zero_to_a_passing_contract_test(tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node, "node is needed to compile the guide's contract"
    assert (SOLC / "solc").is_dir(), "run `npm ci` in tests/contracts first (CI does)"
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    (contracts / "Counter.sol").write_text(_block("solidity", "contract Counter"))
    (contracts / "compile.js").write_text(_block("js", "solc.compile"))
    compiled = subprocess.run([node, "contracts/compile.js"], cwd=tmp_path, capture_output=True,
                              text=True, timeout=300, env={**os.environ, "NODE_PATH": str(SOLC)})
    assert compiled.returncode == 0, compiled.stderr
    assert (contracts / "Counter.json").is_file()
    (tmp_path / "test_counter.py").write_text(_block("python", "def test_increment_counts_and_logs"))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-o", "addopts=", "test_counter.py"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 passed" in run.stdout
