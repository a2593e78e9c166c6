"""The Osaka suite's debug_trace* cases (geth 1.17's answers), in process and over HTTP.

The cases are ``speconly``: checked for shape as the shared ``rpc-replay`` checks them. Since
ethread executes the chain as geth does, the struct logs are also compared value for value,
which is stronger than the shape.

One case cannot pass the shape rule as written, even with geth's own answer:
``trace-block-storage-snapshot-timing`` compares every step with the first step of the first
transaction, and geth (``eth/tracers/logger/logger.go``, ``toLegacyJSON``) writes ``storage``
on SLOAD and SSTORE steps only, so its SSTORE steps carry a key the first step lacks. For
that case each step is checked against the expected step of its own kind (with or without
``storage``), and the values exactly.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ethread
from tests.support.paths import conformance_dir
from tests.support.rpc_cases import first_difference, is_speconly, read_case, shape_difference
from tests.support.server_harness import post, serve_in_thread, url_of

CASES = sorted((conformance_dir() / "osaka" / "cases").glob("debug_trace*/*.io"))
STORAGE_STEPS = "trace-block-storage-snapshot-timing"


def test_the_trace_cases_are_found() -> None:
    assert len(CASES) == 11


@pytest.fixture(scope="module")
def osaka() -> ethread.MemoryBackend:
    folder = conformance_dir() / "osaka"
    backend = ethread.MemoryBackend()
    ethread.import_chain(backend, folder / "genesis.json", folder / "chain.rlp", verify_seals=False)
    return backend


@pytest.fixture(scope="module")
def osaka_url(osaka: ethread.MemoryBackend) -> Iterator[str]:
    with serve_in_thread(osaka) as thread:
        yield url_of(thread)


def _check(case: Path, answer: Any, expected: Any) -> None:
    if case.stem == STORAGE_STEPS:
        assert first_difference(answer, expected) is None, first_difference(answer, expected)
        return
    compare = shape_difference if is_speconly(case) else first_difference
    diff = compare(answer, expected)
    assert diff is None, diff
    if "result" in expected:  # the values too: ethread's execution is geth's
        diff = first_difference(answer["result"], expected["result"])
        assert diff is None, diff
    else:
        assert answer["error"] == expected["error"], answer


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.parent.name}/{c.stem}")
def test_trace_case_in_process(case: Path, osaka: ethread.MemoryBackend) -> None:
    for exchange in read_case(case):
        answer = ethread.handle(osaka, exchange.request.encode())
        assert answer is not None
        _check(case, json.loads(answer), exchange.expected)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.parent.name}/{c.stem}")
def test_trace_case_over_http(case: Path, osaka_url: str) -> None:
    for exchange in read_case(case):
        status, _, answer = post(osaka_url, json.loads(exchange.request))
        assert answer is not None, status
        _check(case, answer, exchange.expected)
