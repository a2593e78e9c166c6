"""eth_simulateV1: the shared Osaka conformance cases (recorded from geth) answered exactly, in
process on every backend that holds state, over HTTP and through the web3 provider; the
method's typed interface; bad input and the limits answered with geth's codes."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ethread
from ethread.errors import SimulationRefused
from ethread.methods.simulate import MAX_BLOCKS, simulate
from ethread.models import CallRequest
from ethread.simulation import (
    SimulatedBlockCalls,
    SimulatedBlockOverrides,
    SimulateOptions,
)
from tests.support.paths import conformance_dir
from tests.support.rpc_cases import Exchange, first_difference, is_speconly, read_case, shape_difference
from tests.support.server_harness import post, serve_in_thread, url_of
from tests.support.storage_backends import BUILDERS, HISTORY_ONLY, built_or_memory

OSAKA = conformance_dir() / "osaka"
CASES = sorted((OSAKA / "cases" / "eth_simulateV1").glob("*.io"))
STATE_BACKENDS = ["memory", *sorted(set(BUILDERS) - HISTORY_ONLY)]

A = bytes.fromhex("c0" + "00" * 19)
B = bytes.fromhex("c1" + "00" * 19)
C = bytes.fromhex("c2" + "00" * 19)
LOOP = bytes.fromhex("5b600056")
"""JUMPDEST PUSH1 0 JUMP: runs until the gas or the time runs out."""


@pytest.fixture(scope="module", params=STATE_BACKENDS)
def state_backend(request: pytest.FixtureRequest, osaka_memory: ethread.MemoryBackend,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from built_or_memory(request.param, osaka_memory, tmp_path_factory)


def compare(case: Path, got: Any, want: Any) -> str | None:
    return (shape_difference if is_speconly(case) else first_difference)(got, want)


def answer(backend: Any, exchange: Exchange) -> Any:
    raw = ethread.handle(backend, exchange.request.encode())
    assert raw is not None
    return json.loads(raw)


def test_every_case_is_read() -> None:
    assert len(CASES) == 68
    assert all(read_case(case) for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda path: path.stem)
def test_case(case: Path, state_backend: Any) -> None:
    for exchange in read_case(case):
        difference = compare(case, answer(state_backend, exchange), exchange.expected)
        assert difference is None, difference


def test_case_count(osaka_memory: ethread.MemoryBackend, capsys: pytest.CaptureFixture[str]) -> None:
    """How many cases answer exactly (printed; every one must)."""
    failing = []
    for case in CASES:
        for exchange in read_case(case):
            difference = compare(case, answer(osaka_memory, exchange), exchange.expected)
            if difference is not None:
                failing.append(f"{case.stem}: {difference}")
    with capsys.disabled():
        print(f"\neth_simulateV1: {len(CASES) - len(failing)} of {len(CASES)} Osaka cases answered "
              "exactly" + "".join(f"\n  {line}" for line in failing))
    assert not failing


def test_cases_over_http(osaka_memory: ethread.MemoryBackend) -> None:
    with serve_in_thread(osaka_memory) as server:
        url = url_of(server)
        for case in CASES:
            for exchange in read_case(case):
                status, _, body = post(url, None, raw=exchange.request.encode())
                assert status == 200
                difference = compare(case, body, exchange.expected)
                assert difference is None, f"{case.stem}: {difference}"


def test_answer_size_bound(osaka_memory: ethread.MemoryBackend) -> None:
    """A simulation's answer obeys the service's answer bound like any other (-32003)."""
    case = OSAKA / "cases" / "eth_simulateV1" / (
        "ethSimulate-add-more-non-defined-BlockStateCalls-than-fit-but-now-with-fit.io")
    with serve_in_thread(osaka_memory, limits={"max_response_bytes": 50_000}) as server:
        status, _, body = post(url_of(server), None, raw=read_case(case)[0].request.encode())
    assert status == 200
    assert body["error"]["code"] == -32003, body


def test_through_the_web3_provider(osaka_memory: ethread.MemoryBackend) -> None:
    from web3 import Web3

    from ethread.web3 import EthreadProvider

    case = OSAKA / "cases" / "eth_simulateV1" / "ethSimulate-simple.io"
    exchange = read_case(case)[0]
    params = json.loads(exchange.request)["params"]
    w3 = Web3(EthreadProvider(osaka_memory))
    response = w3.provider.make_request("eth_simulateV1", params)  # type: ignore[arg-type]
    assert first_difference(json.loads(Web3.to_json(response["result"])),
                            exchange.expected["result"]) is None


def test_history_only_backend_refuses_clearly(osaka_memory: ethread.MemoryBackend,
                                              tmp_path: Path) -> None:
    for name in sorted(HISTORY_ONLY):
        backend = BUILDERS[name](osaka_memory, tmp_path / name)
        request = {"jsonrpc": "2.0", "id": 1, "method": "eth_simulateV1",
                   "params": [{"blockStateCalls": [{}]}, "0x1"]}
        body = json.loads(ethread.handle(backend, json.dumps(request).encode()) or b"null")
        assert body["error"]["code"] == -32000, body


# -- the typed interface -----------------------------------------------------------------------


def test_typed_results_and_the_backend_untouched(osaka_memory: ethread.MemoryBackend) -> None:
    head = osaka_memory.pointer("latest")
    generation = osaka_memory.generation()
    before = ethread.methods.get_balance(osaka_memory, B, "latest")
    options = SimulateOptions(
        block_state_calls=(
            SimulatedBlockCalls(
                state_overrides=(ethread.models.AccountOverride(address=A, balance=10**18),),
                calls=(CallRequest(sender=A, to=B, value=1000),)),
            SimulatedBlockCalls(block_overrides=SimulatedBlockOverrides(number=(head or 0) + 5)),
        ),
        trace_transfers=True)
    blocks = simulate(osaka_memory, options)
    assert [b.block.number for b in blocks] == [(head or 0) + n for n in range(1, 6)]
    first = blocks[0]
    assert first.calls[0].status == 1 and first.calls[0].gas_used == 21_000
    transfer = first.calls[0].logs[0]
    assert transfer.address == b"\xee" * 20 and transfer.block_hash == first.block.hash
    assert int.from_bytes(transfer.data, "big") == 1000
    assert [b.block.header.parent_hash for b in blocks[1:]] == [b.block.hash for b in blocks[:-1]]
    assert all(b.block.header.timestamp - a.block.header.timestamp == 12
               for a, b in itertools.pairwise(blocks))
    # nothing of the simulation reached the backend
    assert osaka_memory.pointer("latest") == head
    assert osaka_memory.generation() == generation
    assert ethread.methods.get_balance(osaka_memory, B, "latest") == before


def test_gas_budget_across_blocks(osaka_memory: ethread.MemoryBackend) -> None:
    """One gas budget for all calls of all blocks (geth's RPC gas cap): the first call spends
    it, the next block's call is left none."""
    loop = (ethread.models.AccountOverride(address=C, code=LOOP),)
    (spent,) = simulate(osaka_memory, SimulateOptions(block_state_calls=(
        SimulatedBlockCalls(state_overrides=loop, calls=(CallRequest(sender=A, to=C),)),)),
        gas_cap=1_000_000)
    assert spent.calls[0].gas_used == 1_000_000
    assert spent.block.transactions[0].transaction.gas == 1_000_000
    with pytest.raises(SimulationRefused) as refused:
        simulate(osaka_memory, SimulateOptions(block_state_calls=(
            SimulatedBlockCalls(state_overrides=loop, calls=(CallRequest(sender=A, to=C),)),
            SimulatedBlockCalls(calls=(CallRequest(sender=A, to=B),)),
        )), gas_cap=1_000_000)
    assert refused.value.code == -38013
    assert refused.value.message == "err: intrinsic gas too low: have 0, want 21000 (supplied gas 0)"


def test_capped_gas_is_named(osaka_memory: ethread.MemoryBackend) -> None:
    loop = (ethread.models.AccountOverride(address=C, code=LOOP),)
    blocks = simulate(osaka_memory, SimulateOptions(block_state_calls=(
        SimulatedBlockCalls(state_overrides=loop, calls=(CallRequest(sender=A, to=C),)),)),
        gas_cap=100_000)
    error = blocks[0].calls[0].error
    assert error is not None
    assert error.message == "out of gas (gas limit was capped by the RPC server's global gas cap)"


def test_time_limit_covers_the_simulation(osaka_memory: ethread.MemoryBackend) -> None:
    loop = (ethread.models.AccountOverride(address=C, code=LOOP),)
    with pytest.raises(SimulationRefused) as refused:
        simulate(osaka_memory, SimulateOptions(block_state_calls=(
            SimulatedBlockCalls(state_overrides=loop, calls=(CallRequest(sender=A, to=C),)),)),
            gas_cap=10**9, timeout=0.05)
    assert refused.value.code == -32603
    assert refused.value.message.startswith("execution aborted (timeout = ")


# -- bad input and limits over the codec --------------------------------------------------------


def rpc(backend: Any, *params: Any) -> Any:
    request = {"jsonrpc": "2.0", "id": 7, "method": "eth_simulateV1", "params": list(params)}
    raw = ethread.handle(backend, json.dumps(request).encode())
    assert raw is not None
    return json.loads(raw)


@pytest.mark.parametrize(("params", "code", "message"), [
    ([], -32602, "missing value for required argument 0"),
    (["x"], -32602, "invalid argument 0: json: cannot unmarshal string into Go value of type ethapi.simOpts"),
    ([{"blockStateCalls": {}}], -32602, "invalid argument 0: json: cannot unmarshal object"),
    ([{"blockStateCalls": []}], -32602, "empty input"),
    ([{"blockStateCalls": [{}], "validation": "yes"}], -32602, "invalid argument 0: json: cannot unmarshal string"),
    ([{"blockStateCalls": [{"calls": [{"to": "0x12"}]}]}], -32602, "invalid argument 0:"),
    ([{"blockStateCalls": [{"calls": [{"value": "0xzz"}]}]}], -32602, "invalid argument 0:"),
    ([{"blockStateCalls": [{"blockOverrides": {"withdrawals": [{"index": "0x0"}]}}]}], -32602,
     "invalid argument 0: missing required field 'validatorIndex' for Withdrawal"),
    ([{"blockStateCalls": [{}] * (MAX_BLOCKS + 1)}], -38026, "too many blocks"),
    ([{"blockStateCalls": [{"blockOverrides": {"number": "0xffff"}}]}], -38026, "too many blocks"),
    ([{"blockStateCalls": [{"blockOverrides": {"number": "0x1"}}]}], -38020,
     "block numbers must be in order: 1 <= 54"),
    ([{"blockStateCalls": [{"calls": [{}] * 5001}]}], -38026, "too many calls in block: 5001 > 5000"),
    ([{"blockStateCalls": [{"calls": [{"to": "0x" + "c1" * 20, "gas": "0x1"}]}]}], -38013,
     "err: intrinsic gas too low: have 1, want 21000 (supplied gas 1)"),
    ([{"blockStateCalls": [{"blockOverrides": {"gasLimit": "0x5208"},
                            "calls": [{"to": "0x" + "c1" * 20, "gas": "0x5209"}]}]}],
     -38015, "block gas limit reached: remaining: 21000, required: 21001"),
    ([{"blockStateCalls": [{"calls": [{"gasPrice": "0x1", "maxFeePerGas": "0x1"}]}]}], -32000,
     "both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified"),
    ([{"blockStateCalls": [{"calls": [{"maxFeePerGas": "0x1", "maxPriorityFeePerGas": "0x2"}]}]}],
     -32602, "err: max priority fee per gas higher than max fee per gas"),
    ([{"blockStateCalls": [{"calls": [{"from": "0x" + "c0" + "00" * 19, "nonce": "0x5"}]}],
       "validation": True}], -38011,
     "err: nonce too high: address 0xC000000000000000000000000000000000000000, tx: 5 state: 0"),
    ([{"blockStateCalls": [{"calls": [{"from": "0x" + "c0" + "00" * 19}]}], "validation": True}],
     -38012, "err: max fee per gas less than block base fee"),
    ([{"blockStateCalls": [{"calls": [{"data": "0x" + "00" * 50000}]}]}], -38025,
     "err: max initcode size exceeded: code size 50000 limit 49152"),
    ([{"blockStateCalls": [{}]}, "0x999"], -32000, "header not found"),
])
def test_refusals(osaka_memory: ethread.MemoryBackend, params: list[Any], code: int,
                  message: str) -> None:
    body = rpc(osaka_memory, *params)
    assert "error" in body, body
    assert body["error"]["code"] == code, body
    assert body["error"]["message"].startswith(message), body


def test_nonce_refusals_under_validation(osaka_memory: ethread.MemoryBackend) -> None:
    funded = {"0x" + A.hex(): {"balance": "0xde0b6b3a7640000", "nonce": "0x5"}}
    call = {"from": "0x" + A.hex(), "to": "0x" + B.hex(), "maxFeePerGas": "0x3b9aca00", "nonce": "0x1"}
    low = rpc(osaka_memory, {"validation": True,
                             "blockStateCalls": [{"stateOverrides": funded, "calls": [call]}]})
    assert low["error"] == {"code": -38010, "message": "err: nonce too low: address "
                            "0xC000000000000000000000000000000000000000, tx: 1 state: 5 (supplied gas 50000000)"}
    # without validation the nonce is not checked: the call runs
    unchecked = rpc(osaka_memory, {"blockStateCalls": [{"stateOverrides": funded, "calls": [call]}]})
    assert unchecked["result"][0]["calls"][0]["status"] == "0x1"


def test_full_transactions_as_geth_writes_unsigned_ones(osaka_memory: ethread.MemoryBackend) -> None:
    """A call with a gas price is a legacy transaction; unsigned (v = 0), geth derives its chain
    id as (v - 35) / 2 in 64 bits. The others are dynamic-fee ones carrying the chain's id."""
    funded = {"0x" + A.hex(): {"balance": "0xde0b6b3a7640000"}}
    body = rpc(osaka_memory, {"returnFullTransactions": True, "blockStateCalls": [{
        "stateOverrides": funded,
        "calls": [{"from": "0x" + A.hex(), "to": "0x" + B.hex(), "gasPrice": "0x1"},
                  {"from": "0x" + A.hex(), "to": "0x" + B.hex()}]}]})
    legacy, dynamic = body["result"][0]["transactions"]
    assert (legacy["type"], legacy["chainId"], legacy["v"]) == ("0x0", "0x7fffffffffffffee", "0x0")
    assert (dynamic["type"], dynamic["chainId"]) == ("0x2", hex(osaka_memory.chain_config().chain_id))
    assert legacy["from"] == dynamic["from"] == "0x" + A.hex()
    assert dynamic["nonce"] == "0x1" and int(dynamic["gas"], 16) == 50_000_000 - 21_000


HEXISH = st.sampled_from(["0x", "0x0", "0x1", "0x5208", "0xffffffffffffffff", "0x" + "f" * 64, "0xzz",
                          "0x" + "c0" + "00" * 19, "0x" + "01" + "00" * 31, "0x60006000fd", "latest", None,
                          1, True, [], {}])
CALL = st.dictionaries(st.sampled_from(["from", "to", "data", "input", "gas", "gasPrice", "value", "nonce",
                                        "maxFeePerGas", "maxPriorityFeePerGas", "maxFeePerBlobGas",
                                        "blobVersionedHashes", "accessList", "authorizationList",
                                        "chainId"]), HEXISH, max_size=5)
OVERRIDES = st.dictionaries(st.sampled_from(["number", "time", "gasLimit", "feeRecipient", "prevRandao",
                                             "baseFeePerGas", "blobBaseFee", "beaconRoot", "withdrawals",
                                             "difficulty"]), HEXISH, max_size=3)
ACCOUNTS = st.dictionaries(st.sampled_from(["0x" + "c0" + "00" * 19, "0x" + "00" * 19 + "01", "0xzz"]),
                           st.dictionaries(st.sampled_from(["balance", "nonce", "code", "state", "stateDiff",
                                                            "movePrecompileToAddress"]), HEXISH, max_size=3),
                           max_size=2)
BLOCK = st.fixed_dictionaries({}, optional={"calls": st.lists(CALL, max_size=3), "blockOverrides": OVERRIDES,
                                            "stateOverrides": ACCOUNTS})
OPTIONS = st.fixed_dictionaries({"blockStateCalls": st.lists(BLOCK, max_size=3)},
                                optional={"validation": st.booleans(), "traceTransfers": st.booleans(),
                                          "returnFullTransactions": st.booleans()})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(options=OPTIONS | HEXISH)
def test_random_simulations_answer_cleanly(osaka_memory: ethread.MemoryBackend, options: Any) -> None:
    """Whatever the options, an answer or an error geth would word: never an internal fault."""
    body = rpc(osaka_memory, options)
    assert ("result" in body) != ("error" in body)
    if "error" in body:
        error = body["error"]
        assert isinstance(error["code"], int) and isinstance(error["message"], str)
        assert error["message"] != "internal error", body
        assert error["code"] != -32603 or error["message"].startswith("err: "), body
