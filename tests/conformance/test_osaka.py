"""Today's execution-apis suite (``osaka/``: the chain through Osaka, BPO1 and BPO2, answers as
geth 1.17 gives them) against ethread, over HTTP and in process.

Every case folder is in one of two groups:

- owned by another suite (:data:`OWNED_ELSEWHERE`): eth_simulateV1 and the tracers have tests
  of their own, and so have the folders that send transactions or read the pool, each replayed
  against a freshly started ``ethread serve --txpool`` (tests/codec/test_txpool_rpc.py);
- read-only (the rest): replayed against one ``ethread serve --genesis osaka/genesis.json
  --blocks osaka/chain.rlp --no-verify-seals`` shared by all of them (a start imports the
  chain and takes 3.6-4.5 s on the project's 2-core machines, about 2.5 minutes for the 32
  folders one by one), and in process on the memory, LevelDB and LMDB backends.

Answers must equal the recorded ones exactly, except ``speconly`` cases, checked for shape
(``tests/support/rpc_cases.py``, the rules of the shared ``rpc-replay``). A difference ethread keeps on
purpose is listed in :data:`KNOWN_DIFFERENCES` with the difference expected, so that the test
fails if it changes in either direction.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ethread
from tests.support.paths import conformance_dir
from tests.support.rpc_cases import Exchange, first_difference, is_speconly, read_case, shape_difference
from tests.support.server_harness import KEY, ServeProcess, post
from tests.support.storage_backends import built_or_memory

OSAKA = conformance_dir() / "osaka"
CASES = OSAKA / "cases"

OWNED_ELSEWHERE: dict[str, str] = {
    "eth_simulateV1": "eth_simulateV1's tests",
    "debug_traceTransaction": "the tracers' tests",
    "debug_traceBlockByNumber": "the tracers' tests",
    "debug_traceBlockByHash": "the tracers' tests",
    "eth_sendRawTransaction": "the transaction pool's tests",
    "txpool_content": "the transaction pool's tests",
    "txpool_contentFrom": "the transaction pool's tests",
    "txpool_status": "the transaction pool's tests",
    "testing_buildBlockV1": "the transaction pool's tests",
}
"""Case folders replayed by another suite, and which."""


KNOWN_DIFFERENCES: dict[str, str] = {
    "eth_capabilities/get-capabilities":
        # geth's log index keeps a window of 2,350,000 blocks by default and says so; ethread
        # deletes no logs, so it names no strategy for deleting them.
        "$.result.logs.deleteStrategy: missing",
}
"""Case -> the first difference ethread keeps on purpose, and why."""

FOLDERS = sorted(p.name for p in CASES.iterdir() if p.is_dir() and p.name not in OWNED_ELSEWHERE)
READ_ONLY = FOLDERS
IN_PROCESS_BACKENDS = ["memory", "leveldb", "lmdb"]


def case_name(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def cases_of(folders: list[str]) -> list[Path]:
    return sorted(path for folder in folders for path in (CASES / folder).glob("*.io"))


READ_ONLY_CASES = [pytest.param(path, id=case_name(path)) for path in cases_of(READ_ONLY)]


def check_answer(case: Path, exchange: Exchange, answer: Any) -> None:
    """The answer equals the recorded one (has its shape, for a speconly case), or differs
    exactly as :data:`KNOWN_DIFFERENCES` says."""
    compare = shape_difference if is_speconly(case) else first_difference
    assert compare(answer, exchange.expected) == KNOWN_DIFFERENCES.get(case_name(case))


def test_the_suite_is_read_and_split() -> None:
    every = sorted(p.name for p in CASES.iterdir() if p.is_dir())
    assert sum(len(list((CASES / folder).glob("*.io"))) for folder in every) == 180
    assert set(OWNED_ELSEWHERE) <= set(every)
    assert {"eth_config", "eth_capabilities", "eth_baseFee"} <= set(READ_ONLY)
    assert len(READ_ONLY) == 32 and len(READ_ONLY_CASES) == 91
    assert all(case in {case_name(p) for p in cases_of(READ_ONLY)} for case in KNOWN_DIFFERENCES)


def _serve_args() -> list[str]:
    return ["--genesis", str(OSAKA / "genesis.json"), "--blocks", str(OSAKA / "chain.rlp"),
            "--no-verify-seals", "--api-key", KEY, "--ledger", ":memory:", "--no-access-log"]


def replay_over_http(url: str, case: Path) -> None:
    """Post each request of ``case`` to ``url`` and check each answer."""
    exchanges = read_case(case)
    assert exchanges, case
    for exchange in exchanges:
        status, _, answer = post(url, None, raw=exchange.request.encode())
        assert status == 200, answer
        check_answer(case, exchange, answer)


@pytest.fixture(scope="module")
def osaka_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One ``ethread serve`` of the Osaka chain for every read-only folder; its URL."""
    with ServeProcess(_serve_args(), cwd=tmp_path_factory.mktemp("osaka-serve")) as server:
        yield f"http://{server.host}:{server.port}/v3/{KEY}"
        code, err = server.stop()
    assert code == 0, err


@pytest.mark.parametrize("case", READ_ONLY_CASES)
def test_read_only_case_over_http(osaka_server: str, case: Path) -> None:
    replay_over_http(osaka_server, case)


@pytest.fixture(scope="module", params=IN_PROCESS_BACKENDS)
def osaka_backend(request: pytest.FixtureRequest, osaka_memory: ethread.MemoryBackend,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The Osaka chain in each backend that holds state."""
    yield from built_or_memory(request.param, osaka_memory, tmp_path_factory)


@pytest.mark.parametrize("case", READ_ONLY_CASES)
def test_read_only_case_in_process(osaka_backend: Any, case: Path) -> None:
    exchanges = read_case(case)
    assert exchanges, case
    for exchange in exchanges:
        answer = ethread.handle(osaka_backend, exchange.request.encode())
        assert answer is not None
        check_answer(case, exchange, json.loads(answer))


def test_geth_1_16_answers_leave_block_timestamp_out_of_transactions(
        osaka_memory: ethread.MemoryBackend) -> None:
    """The same chain in geth 1.16's style: transaction objects lose ``blockTimestamp``, logs
    in receipts keep theirs, and nothing else changes."""
    for case in cases_of(["eth_getTransactionByHash", "eth_getBlockByNumber",
                          "eth_getBlockReceipts"]):
        for exchange in read_case(case):
            old = json.loads(ethread.handle(osaka_memory, exchange.request.encode(),  # type: ignore[arg-type]
                                            answers=ethread.GETH_1_16))
            assert first_difference(old, _without_transaction_timestamps(exchange.expected)) \
                is None, case_name(case)


def _without_transaction_timestamps(answer: Any) -> Any:
    """A recorded geth 1.17 answer as geth 1.16 gives it."""
    result = answer.get("result")
    if isinstance(result, dict) and "transactionIndex" in result and "input" in result:
        return {**answer, "result": {k: v for k, v in result.items() if k != "blockTimestamp"}}
    if isinstance(result, dict) and isinstance(result.get("transactions"), list):
        transactions = [{k: v for k, v in t.items() if k != "blockTimestamp"}
                        if isinstance(t, dict) else t for t in result["transactions"]]
        return {**answer, "result": {**result, "transactions": transactions}}
    return answer
