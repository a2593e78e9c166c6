"""Tracing's fast paths give the plain path's answers byte for byte.

The plain path (``tests/support/plain_replay.py``) replays each request's block from scratch
on py-evm's own classes, every tracer on py-evm's loop. The fast paths: blocks replayed on
eth_call's lean classes, a tracer without steps on the lean loop, a dispatcher's kept replays
(the next transaction of a block starts where the last request stopped, an earlier one from
the state noted before it), and answers kept by the codec. Both answer every debug_trace*
conformance case, and every transaction of the chain tests/differential/test_anvil_traces.py compares
with anvil under every tracer, in several orders (forward, backward, shuffled: each order
takes the kept replays a different way), over debug_trace* and trace_* alike.
"""

from __future__ import annotations

import json
import random
from typing import Any, TypeVar

import pytest

import ethread
from ethread.devchain import contracts
from ethread.methods.tracing import ReplayStates, TraceOptions, trace_transaction
from ethread.rpc.dispatcher import Dispatcher
from tests.support.paths import conformance_dir
from tests.support.plain_replay import on_path, plain_trace_transaction
from tests.support.router import CONFIGS, RouterChain
from tests.support.rpc_cases import read_case

T = TypeVar("T")
OSAKA = conformance_dir() / "osaka"
CASES = sorted((OSAKA / "cases").glob("debug_trace*/*.io"))

MORE_CONFIGS: dict[str, Any] = {
    **CONFIGS,
    "callTracer-onlyTopCall": {"tracer": "callTracer", "tracerConfig": {"onlyTopCall": True}},
    "4byteTracer": {"tracer": "4byteTracer"},
    "noopTracer": {"tracer": "noopTracer"},
    "flatCallTracer": {"tracer": "flatCallTracer",
                       "tracerConfig": {"convertParityErrors": True}},
    "prestateTracer-noCode": {"tracer": "prestateTracer",
                              "tracerConfig": {"disableCode": True, "includeEmpty": True}},
    "muxTracer": {"tracer": "muxTracer", "tracerConfig": {"callTracer": {"withLog": True},
                                                          "4byteTracer": {}}},
    "muxTracer-steps": {"tracer": "muxTracer", "tracerConfig": {"callTracer": {},
                                                                "prestateTracer": {}}},
    "structLogs-lean": {"disableStack": True, "disableStorage": True},
    "structLogs-limit": {"limit": 2000},
}


def _answers(backend: Any, bodies: list[bytes], fast: bool,
             dispatcher: Dispatcher | None = None) -> list[bytes]:
    dispatcher = dispatcher or Dispatcher(backend)
    out = []
    with on_path(fast):
        for body in bodies:
            answer = dispatcher.handle(body)
            assert answer is not None
            out.append(answer)
    return out


def _body(method: str, *params: Any, ident: int = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method,
                       "params": list(params)}).encode()


# -- the conformance cases ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def osaka() -> ethread.MemoryBackend:
    backend = ethread.MemoryBackend()
    ethread.import_chain(backend, OSAKA / "genesis.json", OSAKA / "chain.rlp", verify_seals=False)
    return backend


def test_the_cases_are_found() -> None:
    assert len(CASES) == 11


def test_conformance_cases_through_both_paths(osaka: ethread.MemoryBackend) -> None:
    bodies = [exchange.request.encode() for case in CASES for exchange in read_case(case)]
    expected = _answers(osaka, bodies, False)
    assert _answers(osaka, bodies, True) == expected
    # one dispatcher for all of them, each asked twice (kept replays, then kept answers),
    # and in reverse (the kept replays taken back to earlier positions)
    dispatcher = Dispatcher(osaka)
    assert _answers(osaka, bodies, True, dispatcher) == expected
    assert _answers(osaka, bodies, True, dispatcher) == expected
    backwards = list(reversed(bodies))
    assert _answers(osaka, backwards, True, Dispatcher(osaka)) == expected[::-1]


# -- the chain compared with anvil -------------------------------------------------------------


@pytest.fixture(scope="module")
def router_chain() -> tuple[ethread.MemoryBackend, list[str]]:
    return build_router_chain()


def build_router_chain() -> tuple[ethread.MemoryBackend, list[str]]:
    """tests/differential/test_anvil_traces.py's chain, and two more blocks of the router's transactions
    whose storage writes each later transaction reads."""
    deployed = RouterChain.deployed()
    chain = deployed.chain
    backend = chain.backend
    for _ in range(2):
        deployed.send_calls()
        chain.send(chain.accounts[1], deployed.storage, data=contracts.store_calldata({3: 4}),
                   gas=200_000)
        chain.mine()
    hashes = ["0x" + itx.hash.hex() for n in (1, 2, 3) for itx in chain.block(n).transactions]
    return backend, hashes


def _orders(hashes: list[T]) -> list[list[T]]:
    shuffled = list(hashes)
    random.Random(7).shuffle(shuffled)
    return [hashes, hashes[::-1], shuffled]


@pytest.mark.parametrize("name", sorted(MORE_CONFIGS))
def test_router_transactions_through_both_paths(router_chain: Any, name: str) -> None:
    backend, hashes = router_chain
    config = MORE_CONFIGS[name]
    for order in _orders(hashes):
        bodies = [_body("debug_traceTransaction", h, config) for h in order]
        expected = _answers(backend, bodies, False)
        assert all("error" not in json.loads(answer) for answer in expected)
        # a dispatcher of its own (its replays and answers start empty), asked each twice
        dispatcher = Dispatcher(backend)
        assert _answers(backend, bodies, True, dispatcher) == expected
        assert _answers(backend, bodies, True, dispatcher) == expected


def test_blocks_and_parity_methods_through_both_paths(router_chain: Any) -> None:
    backend, hashes = router_chain
    bodies = []
    for number in ("0x1", "0x2", "0x3"):
        for config in ({"tracer": "callTracer"}, {}, {"tracer": "prestateTracer"}):
            bodies.append(_body("debug_traceBlockByNumber", number, config))
        bodies.append(_body("trace_block", number))
        bodies.append(_body("trace_replayBlockTransactions", number, ["trace", "stateDiff"]))
    for order in _orders(hashes):
        for tx_hash in order:
            bodies.append(_body("trace_transaction", tx_hash))
            bodies.append(_body("trace_replayTransaction", tx_hash, ["trace", "stateDiff"]))
            bodies.append(_body("trace_get", tx_hash, ["0x0"]))
    expected = _answers(backend, bodies, False)
    assert _answers(backend, bodies, True, Dispatcher(backend)) == expected


def test_kept_replays_are_bounded_and_go_back(router_chain: Any) -> None:
    backend, hashes = router_chain
    options = TraceOptions(tracer="callTracer")
    states = ReplayStates(max_replays=8, max_bytes=10**9)
    plain = [plain_trace_transaction(backend, bytes.fromhex(h[2:]), options) for h in hashes]
    for order in _orders(list(range(len(hashes)))):
        for index in order:
            found = trace_transaction(backend, bytes.fromhex(hashes[index][2:]), options,
                                      states=states)
            assert found == plain[index]
    assert 0 < len(states) <= 3 and states.weight > 0
    small = ReplayStates(max_replays=8, max_bytes=1)  # (nothing fits: each request builds)
    for position, tx_hash in enumerate(hashes):
        found = trace_transaction(backend, bytes.fromhex(tx_hash[2:]), options, states=small)
        assert found == plain[position]
    assert len(small) == 0


def test_a_replay_that_failed_is_not_kept(router_chain: Any) -> None:
    from ethread.errors import ExecutionFailed

    backend, hashes = router_chain
    states = ReplayStates()
    router_call = bytes.fromhex(hashes[4][2:])  # (block 2's first: the router's calls, logs)
    with pytest.raises(ExecutionFailed, match="execution timeout"):
        trace_transaction(backend, router_call, TraceOptions(tracer="callTracer", timeout=1e-9),
                          states=states)
    assert len(states) == 0  # (its state stopped part-way through the transaction)
    options = TraceOptions(tracer="callTracer")
    for tx_hash in (hashes[5], hashes[4]):
        expected = plain_trace_transaction(backend, bytes.fromhex(tx_hash[2:]), options)
        assert trace_transaction(backend, bytes.fromhex(tx_hash[2:]), options, states=states) == expected
    assert len(states) == 1


def test_kept_replays_shared_by_threads(router_chain: Any) -> None:
    from concurrent.futures import ThreadPoolExecutor

    backend, hashes = router_chain
    options = TraceOptions(tracer="callTracer", tracer_config={"withLog": True})
    expected = {h: plain_trace_transaction(backend, bytes.fromhex(h[2:]), options)
                for h in hashes}
    states = ReplayStates()
    asked = [h for order in _orders(hashes) for h in order] * 2
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(lambda h: trace_transaction(backend, bytes.fromhex(h[2:]), options,
                                                          states=states), asked))
    assert found == [expected[h] for h in asked]
