"""eth_simulateV1's fast path (``ethread.methods.block_vm``) gives the plain path's answers
byte for byte: every conformance case, random simulations and a forked chain through both
paths, and the system calls' shortcuts against running them. (The overlay trie against
py-trie: tests/methods/test_overlay_trie.py.)"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ethread
import ethread.methods.simulate
from ethread.rpc.dispatcher import Dispatcher
from tests.support.paths import conformance_dir
from tests.support.rpc_cases import read_case

SIMULATE = sys.modules["ethread.methods.simulate"]
"""The module (``ethread.methods.simulate`` names the function once the package is read)."""
OSAKA = conformance_dir() / "osaka"
CASES = sorted((OSAKA / "cases" / "eth_simulateV1").glob("*.io"))


def both_paths(backend: Any, body: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[bytes, bytes]:
    """The answer to ``body`` on the plain path and on the fast one (fresh dispatchers: no
    answer is cached between them)."""
    answers = []
    for fast in (False, True):
        monkeypatch.setattr(SIMULATE, "FAST", fast)
        answer = Dispatcher(backend).handle(body)
        assert answer is not None
        answers.append(answer)
    return answers[0], answers[1]


# -- the trie ----------------------------------------------------------------------------------


def test_fast_states_log_where_py_evms_do() -> None:
    """The fast state class's logger is the one py-evm's property would make for it (and for
    the subclasses a simulation makes of it, which keep its name)."""
    from eth.vm.forks import BerlinVM, CancunVM, LondonVM, PragueVM
    from eth_utils import get_extended_debug_logger

    from ethread.evm import OsakaVM
    from ethread.methods.block_vm import block_vm_class

    for vm_class in (BerlinVM, LondonVM, CancunVM, PragueVM, OsakaVM):
        state_class = block_vm_class(vm_class).get_state_class()
        subclass = SIMULATE._simulation_vm_class(block_vm_class(vm_class)).get_state_class()
        for cls in (state_class, subclass):
            assert cls.logger is get_extended_debug_logger(f"eth.vm.state.{cls.__name__}")


# -- whole simulations -------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=lambda path: path.stem)
def test_case_through_both_paths(case: Path, osaka_memory: ethread.MemoryBackend,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    for exchange in read_case(case):
        plain, fast = both_paths(osaka_memory, exchange.request.encode(), monkeypatch)
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
def test_random_simulations_through_both_paths(osaka_memory: ethread.MemoryBackend,
                                               monkeypatch: pytest.MonkeyPatch, blocks: list[Any],
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
    plain, fast = both_paths(osaka_memory, body, monkeypatch)
    assert fast == plain


def test_a_forked_chain_through_both_paths(monkeypatch: pytest.MonkeyPatch) -> None:
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
             "data": "0x" + contracts.load_calldata(1).hex()},
            {"from": sender, "to": "0x" + demo.log_emitter.hex(),
             "data": "0x" + contracts.log_calldata([b"\x01" * 32], b"hi").hex()},
            {"from": sender, "to": "0x" + "42" * 20, "value": "0x1"},
        ]
        params = [{"blockStateCalls": [{"calls": calls}, {"calls": calls[1:2]}],
                   "traceTransfers": True}, "latest"]
        answers = []
        for fast in (False, True):
            monkeypatch.setattr(SIMULATE, "FAST", fast)
            answers.append(json.dumps(EthreadProvider(chain).make_request(
                "eth_simulateV1", params)))  # type: ignore[arg-type]
    assert '"result"' in answers[0], answers[0][:300]
    assert answers[1] == answers[0]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(simulations=st.lists(st.tuples(st.lists(BLOCK, min_size=1, max_size=3), st.booleans()),
                            min_size=2, max_size=4))
def test_system_writes_kept_between_simulations(osaka_memory: ethread.MemoryBackend,
                                                monkeypatch: pytest.MonkeyPatch,
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
        monkeypatch.setattr(SIMULATE, "FAST", False)
        plain = Dispatcher(osaka_memory).handle(body)
        monkeypatch.setattr(SIMULATE, "FAST", True)
        assert kept.handle(body) == plain
        plain_blocks_built |= (b'"result"' in plain
                               and any(not block.get("stateOverrides") for block in blocks))
    if plain_blocks_built:
        assert len(kept.context.call_states.tables.system_writes) > 0
