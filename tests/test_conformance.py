"""The execution-apis rpc-compat cases, through ethread.handle, exact JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ethread

from .conftest import conformance_dir
from .rpc_cases import first_difference, read_case

CASES = sorted((conformance_dir() / "rpc-compat" / "cases").rglob("*.io"))


def test_the_cases_are_there() -> None:
    assert len(CASES) >= 45


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_rpc_compat_case(case: Path, rpc_compat_memory: ethread.MemoryBackend) -> None:
    exchanges = read_case(case)
    assert exchanges
    for exchange in exchanges:
        answer = ethread.handle(rpc_compat_memory, exchange.request.encode())
        assert answer is not None
        diff = first_difference(json.loads(answer), exchange.expected)
        assert diff is None, diff
