"""eth_simulateV1: the shared Osaka conformance cases (recorded from geth) answered exactly, in
process on every backend that holds state, over HTTP and through the web3 provider; the
method's typed interface; bad input and the limits answered with geth's codes. Then the
package's path (eth_call's lean classes, overlay tries, kept system writes) against the plain
one (``tests/support/plain_simulate.py``: py-evm's own classes and py-trie), byte for byte:
every conformance case, random simulations and a forked chain through both, and the system
calls' shortcuts against running them. (The overlay trie against py-trie:
tests/methods/test_overlay_trie.py.)"""

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
from ethread.methods.simulate import MAX_BLOCKS, _simulation_vm_class, simulate
from ethread.models import CallRequest
from ethread.rpc.dispatcher import Dispatcher
from ethread.simulation import (
    SimulatedBlockCalls,
    SimulatedBlockOverrides,
    SimulateOptions,
)
from tests.support.contracts import load_calldata
from tests.support.paths import conformance_dir
from tests.support.plain_simulate import plain_simulation
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


# -- the package's path against the plain one ---------------------------------------------------


def both_paths(backend: Any, body: bytes) -> tuple[bytes, bytes]:
    """The answer to ``body`` on the plain path and on the fast one (fresh dispatchers: no
    answer is cached between them)."""
    with plain_simulation():
        plain = Dispatcher(backend).handle(body)
    fast = Dispatcher(backend).handle(body)
    assert plain is not None and fast is not None
    return plain, fast


def test_fast_states_log_where_py_evms_do() -> None:
    """The fast state class's logger is the one py-evm's property would make for it (and for
    the subclasses a simulation makes of it, which keep its name)."""
    from eth.vm.forks import BerlinVM, CancunVM, LondonVM, PragueVM
    from eth_utils import get_extended_debug_logger

    from ethread.evm import OsakaVM
    from ethread.methods.overlay_trie import simulation_vm_class as block_vm_class

    for vm_class in (BerlinVM, LondonVM, CancunVM, PragueVM, OsakaVM):
        state_class = block_vm_class(vm_class).get_state_class()
        subclass = _simulation_vm_class(block_vm_class(vm_class)).get_state_class()
        for cls in (state_class, subclass):
            assert cls.logger is get_extended_debug_logger(f"eth.vm.state.{cls.__name__}")


@pytest.mark.parametrize("case", CASES, ids=lambda path: path.stem)
def test_case_through_both_paths(case: Path, osaka_memory: ethread.MemoryBackend) -> None:
    for exchange in read_case(case):
        plain, fast = both_paths(osaka_memory, exchange.request.encode())
        assert fast == plain


SENDER = "0x" + "c0" * 20
STORE = "0x" + "c1" * 20
"""SSTORE(calldata word 0 = slot, calldata word 1 = value), then LOG1 of the slot."""
STORE_CODE = "0x" "602035" "600035" "55" "600035" "6000" "6000" "a1" "00"
REVERTER = "0x" + "c2" * 20
SELF_DESTRUCT = "0x" + "c3" * 20
"""SELFDESTRUCT to the caller."""
FORWARD = "0x" + "c4" * 20
"""CALLs the store contract with its calldata and all its value, then LOG0."""
FORWARD_CODE = ("0x366000600037" "6000" "6000" "36" "6000" "34" "73" + "c1" * 20 + "5a" "f1" "50" "60006000a0" "00")
CODES = {STORE: STORE_CODE, REVERTER: "0x60006000fd", SELF_DESTRUCT: "0x33ff", FORWARD: FORWARD_CODE}
WORD = st.integers(min_value=0, max_value=3).map(lambda n: f"{n:064x}")


def _call(kind: str, slot: str, value: str, wei: int, gas: int | None) -> dict[str, Any]:
    call: dict[str, Any] = {"from": SENDER}
    if kind == "create":
        call["data"] = "0x60" + value[-2:] + "60" + slot[-2:] + "55"  # initcode: SSTORE, empty code
    else:
        call["to"] = {"store": STORE, "revert": REVERTER, "destruct": SELF_DESTRUCT,
                      "forward": FORWARD, "plain": "0x" + "d0" * 20}[kind]
        call["data"] = "0x" + slot + value
    if wei:
        call["value"] = hex(wei)
    if gas is not None:
        call["gas"] = hex(gas)
    return call


CALLS = st.builds(_call, st.sampled_from(["store", "revert", "destruct", "forward", "plain", "create"]),
                  WORD, WORD, st.sampled_from([0, 0, 1, 10**18]),
                  st.sampled_from([None, None, None, 22_000, 60_000, 100_000]))
ACCOUNT = st.fixed_dictionaries({}, optional={
    "balance": st.sampled_from(["0x0", "0x1", "0xde0b6b3a76400000"]),
    "nonce": st.sampled_from(["0x0", "0x5"]),
    "state": st.dictionaries(WORD.map(lambda w: "0x" + w), WORD.map(lambda w: "0x" + w), max_size=2),
})
BLOCK = st.fixed_dictionaries({"calls": st.lists(CALLS, max_size=4)}, optional={
    "stateOverrides": st.dictionaries(st.sampled_from([SENDER, STORE, SELF_DESTRUCT]), ACCOUNT, max_size=2),
    "blockOverrides": st.fixed_dictionaries({}, optional={
        "feeRecipient": st.sampled_from([SENDER, STORE, "0x" + "00" * 20]),
        "baseFeePerGas": st.sampled_from(["0x0", "0x7"]),
        "withdrawals": st.lists(st.fixed_dictionaries({
            "index": st.just("0x0"), "validatorIndex": st.just("0x1"),
            "address": st.sampled_from([SENDER, STORE, "0x" + "e0" * 20]),
            "amount": st.sampled_from(["0x0", "0x3"])}), max_size=2),
        "number": st.sampled_from([hex(n) for n in range(57, 62)]),
    }),
})


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blocks=st.lists(BLOCK, min_size=1, max_size=3), transfers=st.booleans(),
       validation=st.sampled_from([False, False, True]), full=st.booleans())
def test_random_simulations_through_both_paths(osaka_memory: ethread.MemoryBackend, blocks: list[Any],
                                               transfers: bool, validation: bool, full: bool) -> None:
    """Contracts that store, log, revert, self-destruct, create and call on, with values,
    overrides, withdrawals and gaps: the same answer (or the same refusal) on both paths."""
    first = blocks[0].setdefault("stateOverrides", {})
    for address, code in CODES.items():
        first.setdefault(address, {})["code"] = code
    first.setdefault(SENDER, {}).setdefault("balance", "0xde0b6b3a76400000")
    if validation:  # (a call must pay the base fee then)
        for block in blocks:
            for call in block["calls"]:
                call["maxFeePerGas"] = "0x3b9aca00"
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "eth_simulateV1", "params": [
        {"blockStateCalls": blocks, "traceTransfers": transfers, "validation": validation,
         "returnFullTransactions": full}, "latest"]}).encode()
    plain, fast = both_paths(osaka_memory, body)
    assert fast == plain


def test_a_forked_chain_through_both_paths() -> None:
    """On a dev chain forked from a node (state read from the remote block where the chain
    has not written it): slots written over remote storage, remote code run, logs, a
    transfer; the same answer on both paths."""
    from ethread.devchain import DevChain, contracts
    from ethread.web3 import EthreadProvider
    from tests.support.server_harness import KEY, demo_network, serve_in_thread, shared_demo

    demo = shared_demo()
    with serve_in_thread(networks=[demo_network()]) as thread:
        chain = DevChain.fork(f"http://127.0.0.1:{thread.port}/v3/{KEY}",
                              backend=ethread.MemoryBackend())
        sender = "0x" + chain.accounts[0].address.hex()
        calls = [
            {"from": sender, "to": "0x" + demo.storage.hex(),
             "data": "0x" + contracts.store_calldata({0: 7, 3: 0, 9: 1}).hex()},
            {"from": sender, "to": "0x" + demo.storage.hex(),
             "data": "0x" + load_calldata(1).hex()},
            {"from": sender, "to": "0x" + demo.log_emitter.hex(),
             "data": "0x" + contracts.log_calldata([b"\x01" * 32], b"hi").hex()},
            {"from": sender, "to": "0x" + "42" * 20, "value": "0x1"},
        ]
        params = [{"blockStateCalls": [{"calls": calls}, {"calls": calls[1:2]}],
                   "traceTransfers": True}, "latest"]
        with plain_simulation():
            answers = [json.dumps(EthreadProvider(chain).make_request(
                "eth_simulateV1", params))]  # type: ignore[arg-type]
        answers.append(json.dumps(EthreadProvider(chain).make_request(
            "eth_simulateV1", params)))  # type: ignore[arg-type]
    assert '"result"' in answers[0], answers[0][:300]
    assert answers[1] == answers[0]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(simulations=st.lists(st.tuples(st.lists(BLOCK, min_size=1, max_size=3), st.booleans()),
                            min_size=2, max_size=4))
def test_system_writes_kept_between_simulations(osaka_memory: ethread.MemoryBackend,
                                                simulations: list[tuple[list[Any], bool]]) -> None:
    """Simulations answered one after another by one dispatcher on the fast path, whose blocks
    without state overrides start from the system writes it kept for the same header (made
    by an earlier simulation, or by this one), answer as the plain path does afresh."""
    from ethread.codec.response_cache import ResponseCache

    kept = Dispatcher(osaka_memory, cache=ResponseCache(max_entries=0))
    plain_blocks_built = False
    for number, (blocks, deployed) in enumerate(simulations):
        if deployed:  # (else the first block has no state overrides either)
            first = blocks[0].setdefault("stateOverrides", {})
            for address, code in CODES.items():
                first.setdefault(address, {})["code"] = code
            first.setdefault(SENDER, {}).setdefault("balance", "0xde0b6b3a76400000")
        body = json.dumps({"jsonrpc": "2.0", "id": number, "method": "eth_simulateV1",
                           "params": [{"blockStateCalls": blocks}, "latest"]}).encode()
        with plain_simulation():
            plain = Dispatcher(osaka_memory).handle(body)
        assert kept.handle(body) == plain
        plain_blocks_built |= (b'"result"' in plain
                               and any(not block.get("stateOverrides") for block in blocks))
    if plain_blocks_built:
        assert len(kept.context.call_states.tables.system_writes) > 0
