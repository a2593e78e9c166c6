"""Where things are, for tests in any folder of the tree: the repository, the npm folders
(``tests/js``: ethers.js, viem and anvil; ``tests/contracts``: solc-js and the Solidity test
contracts), the examples and the benchmarks, and the external conformance data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent.parent
REPO = TESTS.parent
JS = TESTS / "js"
CONTRACTS = TESTS / "contracts"
EXAMPLES = REPO / "examples"
BENCHMARKS = REPO / "benchmarks"


def conformance_dir() -> Path:
    """The external conformance data: $ETHREAD_CONFORMANCE, else ../shared/conformance.

    Missing data is an error, not a skip: a suite that silently ran nothing would pass.
    """
    path = Path(os.environ.get("ETHREAD_CONFORMANCE", REPO.parent / "shared" / "conformance"))
    if not (path / "rpc-compat" / "chain.rlp").is_file():
        pytest.fail(f"conformance data not found at {path}; set ETHREAD_CONFORMANCE")
    return path
