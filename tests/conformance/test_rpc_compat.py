"""One conformance suite for every backend.

The rpc-compat cases were recorded from geth 1.16, so they are answered in its style
(``answers=GETH_1_16``: transaction objects without ``blockTimestamp``); the Osaka suite's
are geth 1.17's (``tests/conformance/test_osaka.py``).

The rpc-compat chain is imported once into memory; the same chain is then copied into LevelDB
and exported (its pre-merge part) to Era1 files. Through one parametrized fixture:

- the execution-apis rpc-compat cases (the interface's ``cases/`` and the rest of the read
  side's ``read-side/``) pass on memory and LevelDB, exact JSON except cases marked
  ``speconly``, checked for shape as the shared ``rpc-replay`` does; on Era1 (history without
  state, blocks 0-35) every case that asks only for that history passes, and only those are
  generated for it (state at the blocks it holds gets its own test: a clear StateUnavailable);
- the methods answer the same on every backend, block by block.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rlp
from eth_utils import keccak

import ethread
from ethread import methods
from ethread.errors import StateUnavailable
from ethread.models import CallRequest, LogFilter
from ethread.rlpcodec.items import split_concatenated
from ethread.rlpcodec.transactions import decode_transaction
from tests.support.paths import conformance_dir
from tests.support.rpc_cases import Exchange, first_difference, is_speconly, read_case, shape_difference
from tests.support.storage_backends import BUILDERS, HISTORY_ONLY, built_or_memory

CASE_DIRS = ("cases", "read-side")
CASES = sorted(path for folder in CASE_DIRS
               for path in (conformance_dir() / "rpc-compat" / folder).rglob("*.io"))
BACKENDS = ["memory", *BUILDERS]
STATE_METHODS = {"eth_call", "eth_getProof", "eth_estimateGas", "eth_createAccessList",
                 "eth_getBalance", "eth_getCode", "eth_getStorageAt", "eth_getTransactionCount",
                 "eth_getStorageValues"}
HEAD_METHODS = {"eth_blockNumber", "eth_blobBaseFee", "eth_gasPrice", "eth_maxPriorityFeePerGas"}
"""Methods that answer about the head without naming a block."""
ERA_HEAD = 35
"""The last proof-of-work block of the rpc-compat chain: where its Era1 export ends."""


def chain_numbers() -> dict[bytes, int]:
    """The block number of every block hash and transaction hash of the rpc-compat chain, read
    from its RLP without importing it (this runs when tests are collected)."""
    numbers: dict[bytes, int] = {}
    for raw in split_concatenated((conformance_dir() / "rpc-compat" / "chain.rlp").read_bytes()):
        header, transactions, *_ = rlp.decode(raw)
        number = int.from_bytes(header[8], "big")
        numbers[keccak(rlp.encode(header))] = number
        for item in transactions:
            numbers[decode_transaction(item)[1]] = number
    return numbers


NUMBERS = chain_numbers()
CHAIN_HEAD = max(NUMBERS.values())


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest, rpc_compat_memory: ethread.MemoryBackend,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from built_or_memory(request.param, rpc_compat_memory, tmp_path_factory)


def within_history(exchange: Exchange, head: int, *, state: bool = False) -> bool:
    """Whether a case asks only about blocks a history-only backend up to ``head`` holds the same
    way: no state (unless ``state``), no moving tags, no block past ``head`` that the full chain
    has."""
    request = json.loads(exchange.request)
    if request["method"] in HEAD_METHODS or (request["method"] in STATE_METHODS and not state):
        return False
    refs: list[Any] = list(request.get("params", []))
    if refs and isinstance(refs[0], dict):
        refs = [refs[0].get(k) for k in ("fromBlock", "toBlock", "blockHash")]
    for ref in refs:
        if ref in ("latest", "safe", "finalized", "pending"):
            return False
        if isinstance(ref, str) and len(ref) == 66:
            number = NUMBERS.get(bytes.fromhex(ref[2:]))
            if number is not None and number > head:
                return False
        elif isinstance(ref, str) and head < _number(ref) <= CHAIN_HEAD:
            return False
    return True


def _number(ref: str) -> int:
    """A hex quantity's value; -1 for anything else (a malformed one is no block either)."""
    try:
        return int(ref, 16) if ref.startswith("0x") else -1
    except ValueError:
        return -1


def case_id(path: Path) -> str:
    return f"{path.parent.parent.name}/{path.parent.name}/{path.stem}"


def test_both_case_folders_are_read() -> None:
    assert len([c for c in CASES if c.parent.parent.name == "cases"]) == 45
    assert len([c for c in CASES if c.parent.parent.name == "read-side"]) == 52


def applies(backend: str, case: Path) -> bool:
    """Whether ``backend`` holds everything ``case`` asks about."""
    return backend not in HISTORY_ONLY or all(within_history(e, ERA_HEAD) for e in read_case(case))


PAIRS = [pytest.param(name, case, id=f"{name}-{case_id(case)}")
         for name in BACKENDS for case in CASES if applies(name, case)]
STATE_CASES = [pytest.param(case, id=case_id(case)) for case in CASES
               if any(json.loads(e.request)["method"] in STATE_METHODS for e in read_case(case))
               and all(within_history(e, ERA_HEAD, state=True) for e in read_case(case))]
"""The cases asking for state at blocks an Era1 archive of the chain holds."""


@pytest.mark.parametrize(("backend", "case"), PAIRS, indirect=["backend"])
def test_rpc_compat_case(case: Path, backend: Any) -> None:
    exchanges = read_case(case)
    assert exchanges
    compare = shape_difference if is_speconly(case) else first_difference
    for exchange in exchanges:
        answer = ethread.handle(backend, exchange.request.encode(), answers=ethread.GETH_1_16)
        assert answer is not None
        diff = compare(json.loads(answer), exchange.expected)
        assert diff is None, diff


def test_history_only_backends_serve_enough_cases(rpc_compat_memory: ethread.MemoryBackend) -> None:
    assert rpc_compat_memory.pointer("latest") == CHAIN_HEAD
    header = rpc_compat_memory.header_by_hash(rpc_compat_memory.canonical_hash(ERA_HEAD + 1))  # type: ignore[arg-type]
    assert header is not None and header.difficulty == 0, "the merge is right after ERA_HEAD"
    applicable = [case for case in CASES if applies("era1", case)]
    assert len(applicable) >= 20  # most of the suite asks only for history


@pytest.mark.parametrize("backend", sorted(HISTORY_ONLY), indirect=True)
@pytest.mark.parametrize("case", STATE_CASES)
def test_history_only_backend_refuses_state_cases_clearly(case: Path, backend: Any) -> None:
    """State at a block a history-only backend holds: the clear StateUnavailable error."""
    for exchange in read_case(case):
        if json.loads(exchange.request)["method"] not in STATE_METHODS:
            continue
        answer = json.loads(ethread.handle(backend, exchange.request.encode()))  # type: ignore[arg-type]
        assert answer["error"]["code"] == StateUnavailable.code, answer
        assert "holds history only" in answer["error"]["message"]


def test_every_block_answers_as_in_memory(backend: Any, rpc_compat_memory: ethread.MemoryBackend) -> None:
    head = backend.pointer("latest")
    assert head is not None and head >= 35
    for number in range(head + 1):
        mine = methods.get_block_by_number(backend, number)
        theirs = methods.get_block_by_number(rpc_compat_memory, number)
        assert mine == theirs
        assert methods.get_block_receipts(backend, number) == methods.get_block_receipts(rpc_compat_memory, number)
        assert mine is not None
        for index in range(len(mine.uncles) + 1):
            assert methods.get_uncle_by_block_hash_and_index(backend, mine.hash, index) == \
                methods.get_uncle_by_block_hash_and_index(rpc_compat_memory, mine.hash, index)
        for itx in mine.transactions:
            assert methods.get_transaction_by_hash(backend, itx.hash) == itx
    assert methods.get_block_by_number(backend, head + 1) is None


def test_logs_answer_as_in_memory(backend: Any, rpc_compat_memory: ethread.MemoryBackend) -> None:
    head = backend.pointer("latest")
    emitter = bytes.fromhex("7dcd17433742f4c0ca53122ab541d0ba67fc27df")
    for log_filter in (
        LogFilter(from_block=0, to_block=head),
        LogFilter(from_block=3, to_block=head, addresses=(emitter,)),
        LogFilter(from_block=0, to_block=head, topics=(None, (b"\x00" * 32,))),
    ):
        assert methods.get_logs(backend, log_filter) == methods.get_logs(rpc_compat_memory, log_filter)


def test_state_where_the_backend_keeps_it(backend: Any, rpc_compat_memory: ethread.MemoryBackend) -> None:
    callenv = CallRequest(to=bytes.fromhex("9344b07175800259691961298ca11c824e65032d"))
    address = bytes.fromhex("7dcd17433742f4c0ca53122ab541d0ba67fc27df")
    if backend.__class__.__name__ == "EraBackend":
        with pytest.raises(StateUnavailable):
            methods.call(backend, callenv, 30)
        with pytest.raises(StateUnavailable):
            methods.get_proof(backend, address, [], 30)
        body = b'{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"0x' + \
            b"9344b07175800259691961298ca11c824e65032d" + b'"},"0x1e"]}'
        error = json.loads(ethread.handle(backend, body))["error"]  # type: ignore[arg-type]
        assert error["code"] == -32000 and "state" in error["message"].lower()
        # Every state method answers the same error as eth_call, at any block.
        account = "0x7dcd17433742f4c0ca53122ab541d0ba67fc27df"
        for method, params in (
            ("eth_getBalance", [account, "0x1e"]),
            ("eth_getCode", [account, "latest"]),
            ("eth_getStorageAt", [account, "0x0", "0x1e"]),
            ("eth_getTransactionCount", [account]),
            ("eth_getStorageValues", [{account: ["0x" + "00" * 32]}, "0x1e"]),
            ("eth_getProof", [account, [], "0x1e"]),
            ("eth_estimateGas", [{"to": account}, "0x1e"]),
            ("eth_createAccessList", [{"to": account}, "0x1e"]),
        ):
            request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
            answer = json.loads(ethread.handle(backend, json.dumps(request).encode()))  # type: ignore[arg-type]
            assert answer["error"] == error, method
        return
    for number in (27, 36, 45):
        assert methods.call(backend, callenv, number) == methods.call(rpc_compat_memory, callenv, number)
        proof = methods.get_proof(backend, address, [b"\x00"], number)
        assert proof == methods.get_proof(rpc_compat_memory, address, [b"\x00"], number)
        header = methods.get_block_by_number(backend, number).header  # type: ignore[union-attr]
        ethread.verify_account_proof(header.state_root, proof)
        assert methods.get_balance(backend, address, number) == proof.balance
        assert methods.get_transaction_count(backend, address, number) == proof.nonce
        assert methods.get_storage_at(backend, address, b"\x00", number) == \
            proof.storage_proof[0].value.to_bytes(32, "big")
        code = methods.get_code(backend, address, number)
        assert code == methods.get_code(rpc_compat_memory, address, number)
        assert keccak(code) == proof.code_hash
