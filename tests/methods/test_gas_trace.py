"""Gas estimation's shortcut (ethread.methods.gas_trace): when the run at the upper bound shows
that a message's path cannot depend on its gas, the search takes the least gas from that run
instead of executing each step. These tests hold the shortcut to what it must be: for many
generated programs (storage writes with refunds and EIP-2200's sentry, memory, hashing, logs,
transient storage, calldata under Prague's floor, creations, reverts), the least gas it
predicts is exactly the edge between failing and succeeding runs, and the search answers the
same with and without it, on forks before and after the sentry and the calldata floor."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ethread
from ethread.devchain import DevChain, ForkSchedule
from ethread.errors import EthreadError
from ethread.methods.estimate import _search
from ethread.methods.gas_trace import least_gas, traced_run
from ethread.methods.message import Rejected, execution, gas_cap
from ethread.models import AccountOverride, CallRequest

CONTRACT = bytes.fromhex("00000000000000000000000000000000c0de0001")
SENDER = bytes.fromhex("5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e")
FORKS = ("petersburg", "istanbul", "london", "cancun", "prague")


def push(value: int) -> bytes:
    size = max(1, (value.bit_length() + 7) // 8)
    return bytes([0x5F + size]) + value.to_bytes(size, "big")


@dataclass(frozen=True)
class Program:
    code: bytes
    storage: tuple[tuple[int, int], ...]
    calldata: bytes
    priced: bool
    value: int
    create: bool


def _step(fork_index: int) -> st.SearchStrategy[bytes]:
    slot = st.integers(0, 5)
    word = st.sampled_from([0, 1, 2, 255, 2**256 - 1])
    offset = st.integers(0, 3000)
    steps = [
        st.builds(lambda v, k: push(v) + push(k) + b"\x55", word, slot),  # SSTORE
        st.builds(lambda k: push(k) + b"\x54\x50", slot),  # SLOAD; POP
        st.builds(lambda v, o: push(v) + push(o) + b"\x52", word, offset),  # MSTORE
        st.builds(lambda n, o: push(n) + push(o) + b"\x20\x50", st.integers(0, 200), offset),  # KECCAK
        st.builds(lambda t, n, o: push(t) + push(n) + push(o) + b"\xa1", word, st.integers(0, 100), offset),
        st.just(push(0) + b"\x35\x50"),  # CALLDATALOAD(0); POP
    ]
    if fork_index >= FORKS.index("cancun"):
        steps.append(st.builds(lambda v, k: push(v) + push(k) + b"\x5d", word, slot))  # TSTORE
    return st.one_of(*steps)


ENDINGS = [b"\x00", push(32) + push(0) + b"\xf3", push(0) + push(0) + b"\xfd", b"\xfe"]


def programs(fork_index: int) -> st.SearchStrategy[Program]:
    return st.builds(
        lambda steps, end, storage, calldata, priced, value, create: Program(
            b"".join(steps) + end, tuple(storage.items()), calldata, priced, value, create),
        st.lists(_step(fork_index), max_size=12),
        st.sampled_from(ENDINGS),
        st.dictionaries(st.integers(0, 5), st.integers(1, 3), max_size=4),
        st.binary(max_size=300),
        st.booleans(),
        st.sampled_from([0, 0, 7]),
        st.booleans(),
    )


_chains: dict[str, ethread.MemoryBackend] = {}


def chain_at(fork: str) -> ethread.MemoryBackend:
    if fork not in _chains:
        backend = ethread.MemoryBackend()
        DevChain(backend, forks=ForkSchedule.from_genesis(fork))
        _chains[fork] = backend
    return _chains[fork]


def request_for(program: Program, london: bool) -> tuple[CallRequest, tuple[AccountOverride, ...]]:
    storage = tuple((k.to_bytes(32, "big"), v.to_bytes(32, "big")) for k, v in sorted(program.storage))
    overrides = (AccountOverride(address=SENDER, balance=10**18),)
    if not program.create:
        overrides = (AccountOverride(address=CONTRACT, code=program.code, state=storage), *overrides)
    fees: dict[str, int] = {}
    if program.priced:
        fees = {"max_fee_per_gas": 10**10, "max_priority_fee_per_gas": 10**9} if london else {"gas_price": 10**10}
    if program.create:
        return CallRequest(sender=SENDER, data=program.code + program.calldata, value=program.value,
                           **fees), overrides
    return CallRequest(sender=SENDER, to=CONTRACT, data=program.calldata, value=program.value,
                       **fees), overrides


def search(backend: ethread.MemoryBackend, request: CallRequest, overrides: tuple[AccountOverride, ...],
           predict: bool) -> tuple[str, object]:
    block = ethread.methods.get_block_by_number(backend, "latest")
    assert block is not None
    try:
        with execution(backend, request, "latest", state_override=overrides) as run:
            return "estimate", _search(run, request, gas_cap(block.header.gas_limit), predict)
    except EthreadError as exc:
        return type(exc).__name__, (str(exc), getattr(exc, "data", None))


def fails(run: object, gas: int) -> bool:
    try:
        return run.run(gas).error is not None  # type: ignore[attr-defined]
    except Rejected as exc:
        assert exc.intrinsic
        return True


@pytest.mark.parametrize("fork", FORKS)
def test_predicted_least_gas_is_the_edge_and_the_search_agrees(fork: str) -> None:
    backend = chain_at(fork)
    london = FORKS.index(fork) >= FORKS.index("london")

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(programs(FORKS.index(fork)))
    def check(program: Program) -> None:
        request, overrides = request_for(program, london)
        with execution(backend, request, "latest", state_override=overrides) as run:
            hi = int(run.state.execution_context.gas_limit)
            try:
                outcome, trace = traced_run(run, hi)
            except Rejected:
                outcome = None
            if outcome is not None and outcome.error is None:
                least = least_gas(run, hi, outcome, trace)
                assert least is not None  # nothing gas-dependent in these programs
                assert not fails(run, least)
                assert fails(run, least - 1)
        assert search(backend, request, overrides, True) == search(backend, request, overrides, False)

    check()


def test_gas_dependent_programs_are_searched_by_execution() -> None:
    backend = chain_at("prague")
    # GAS; PUSH2 30000; LT; PUSH1 9; JUMPI; STOP; JUMPDEST; SSTORE(0, 1); STOP: stores only with
    # more than 30,000 gas left, so with less gas it takes the other path and still succeeds.
    code = bytes.fromhex("5a61753010600957005b600160005500")
    request = CallRequest(sender=SENDER, to=CONTRACT)
    overrides = (AccountOverride(address=CONTRACT, code=code),)
    with execution(backend, request, "latest", state_override=overrides) as run:
        hi = int(run.state.execution_context.gas_limit)
        outcome, trace = traced_run(run, hi)
        assert outcome.error is None and trace.gas_dependent
        assert least_gas(run, hi, outcome, trace) is None
        assert outcome.gas_used > 21_000 + 20_000  # the store ran
        assert not fails(run, 21_100)  # the short path: the search must execute, not predict
    kind, estimate = search(backend, request, overrides, True)
    assert kind == "estimate"
    assert (kind, estimate) == search(backend, request, overrides, False)
