"""A message run directly on the VM's state (the path eth_call, eth_estimateGas and
eth_createAccessList take) answers exactly what the same message run as a spoofed py-evm
transaction answers: output, gas used before and after refunds, the error and its text, and
the refusals, on every fork from Frontier to Prague.

The probe contract reads what the transaction envelope changes before the code runs: the
sender's balance after buying gas, the gas price, the gas left after the intrinsic gas, the
value, and the address a CREATE gets (the contract's nonce); it writes and clears a slot (a
refund) and logs. Creations read their own address (the sender's nonce).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from ethread.devchain.contracts import assemble
from ethread.errors import ExecutionFailed
from ethread.forks import fork_at_least
from ethread.methods.call import call
from ethread.methods.message import CallStates, execution, gas_for
from ethread.models import AccessListEntry, CallRequest
from tests.support.call_outcomes import FORKS, outcome_of, probe_chain, probe_requests


@pytest.mark.parametrize("fork", FORKS)
def test_direct_run_answers_what_the_transaction_envelope_answers(fork: str) -> None:
    backend, chain, probe = probe_chain(fork)
    header = backend.header_by_hash(backend.canonical_hash(1))  # type: ignore[arg-type]
    assert header is not None
    outcomes = set()
    for request in probe_requests(fork, chain, probe):
        try:
            with execution(backend, request, "latest", states=CallStates()) as run:
                gas = gas_for(request, header.gas_limit)
                direct = outcome_of(run, gas, as_transaction=False)
                reference = outcome_of(run, gas, as_transaction=True)
                again = outcome_of(run, gas, as_transaction=False)  # nothing left behind
        except ExecutionFailed as exc:  # refused before a run: the same for both paths
            outcomes.add(("refused", str(exc)))
            continue
        assert direct == reference == again, (fork, request)
        outcomes.add(direct[0] if direct[0] == "rejected" else direct[3])
    # successes, failures (a revert, out of gas) and refusals all ran
    assert {"NoneType", "OutOfGas", "rejected"} <= outcomes, outcomes
    assert ("Revert" if fork_at_least(fork, "byzantium") else "InvalidInstruction") in outcomes


def test_probe_sees_the_gas_bought_and_the_creation_its_nonce() -> None:
    """The direct run buys gas and increments the nonce before the code runs, as geth does."""
    backend, chain, probe = probe_chain("prague")
    funded = chain.accounts[1].address
    price = 10**9 * 50
    balance = chain.balance(funded)
    request = CallRequest(to=probe, data=b"\x01", sender=funded, gas=100_000, gas_price=price)
    words = call(backend, request, "latest", CallStates())
    seen = [int.from_bytes(words[i:i + 32], "big") for i in range(0, len(words), 32)]
    assert seen[0] == balance - 100_000 * price
    assert seen[1] == price
    assert 0 < seen[2] < 100_000 - 21_000
    free = call(backend, CallRequest(to=probe, data=b"\x01"), "latest", CallStates())
    assert int.from_bytes(free[32:64], "big") == 0  # an unpriced call runs at price zero


def test_a_tag_follows_the_chain_through_the_state_cache() -> None:
    """The header a tag names is kept with the state cache only while the chain stays the
    same: a call on ``latest`` after a new block runs on that block."""
    backend, chain, _ = probe_chain("prague")
    number = CallRequest(data=assemble("NUMBER", 0, "MSTORE", 32, 0, "RETURN"))
    states = CallStates()
    first = int.from_bytes(call(backend, number, "latest", states), "big")
    assert int.from_bytes(call(backend, number, "latest", states), "big") == first
    chain.mine()
    assert int.from_bytes(call(backend, number, "latest", states), "big") == first + 1
    assert int.from_bytes(call(backend, number, first, states), "big") == first
    with pytest.raises(Exception, match="header not found"):
        call(backend, number, first + 5, states)


WARMTH = assemble(
    "GAS", "ADDRESS", "BALANCE", "POP", "GAS", "SWAP1", "SUB", 0, "MSTORE",       # the callee
    "GAS", "CALLER", "BALANCE", "POP", "GAS", "SWAP1", "SUB", 32, "MSTORE",       # the sender
    "GAS", b"\x99" * 20, "BALANCE", "POP", "GAS", "SWAP1", "SUB", 64, "MSTORE",   # listed
    "GAS", 0, "SLOAD", "POP", "GAS", "SWAP1", "SUB", 96, "MSTORE",                # a listed slot
    128, 0, "RETURN",
)
"""Returns what reading the callee's, the sender's and a listed account's balance and a listed
slot cost: what the run warmed before the code ran."""


@pytest.mark.parametrize("fork", ["homestead", "berlin", "london", "cancun", "prague"])
def test_direct_run_warms_what_the_transaction_envelope_warms(fork: str) -> None:
    """The direct run builds a message call's computation without the executor's layers; it
    warms the same accounts and slots (from Berlin) as py-evm's ``build_computation``."""
    from eth.vm.forks.berlin.state import BerlinTransactionExecutor

    from ethread.methods.message import BERLIN_BUILD, FRONTIER_BUILD, PY_EVM_BUILD, _executor_traits

    backend, chain, _ = probe_chain(fork)
    warmth = chain.deploy_runtime(chain.accounts[0], WARMTH)
    chain.mine()
    listed = (AccessListEntry(address=b"\x99" * 20, storage_keys=()),
              AccessListEntry(address=warmth, storage_keys=(b"\x00" * 32,)))
    requests = [CallRequest(to=warmth), CallRequest(to=warmth, sender=chain.accounts[1].address)]
    if fork_at_least(fork, "berlin"):
        requests.append(CallRequest(to=warmth, access_list=listed))
    costs = []
    for request in requests:
        with execution(backend, request, "latest", states=CallStates()) as run:
            direct = outcome_of(run, 1_000_000, as_transaction=False)
            assert direct == outcome_of(run, 1_000_000, as_transaction=True), (fork, request)
            executor = type(run.state.get_transaction_executor())
            berlin = fork_at_least(fork, "berlin")
            assert _executor_traits(executor)[1] == (BERLIN_BUILD if berlin else FRONTIER_BUILD)
        words = bytes.fromhex(direct[0])
        costs.append([int.from_bytes(words[i:i + 32], "big") for i in range(0, 128, 32)])
    if fork_at_least(fork, "berlin"):  # warm 100, cold 2,600 (a slot 2,100); 6-7 the rest
        assert [c[:2] for c in costs[:2]] == [[106, 106]] * 2
        assert costs[2][2:] == [107, 107] and costs[0][2:] == [2607, 2107]

    class OwnBuild(BerlinTransactionExecutor):
        def build_computation(self, message: Any, transaction: Any) -> Any:
            return super().build_computation(message, transaction)

    assert _executor_traits(OwnBuild)[1] == PY_EVM_BUILD


@pytest.mark.parametrize("fork", FORKS)
def test_a_run_without_figures_answers_the_same_output_and_error(fork: str) -> None:
    """eth_call's run skips refunds, the calldata floor and the gas used: its output, error
    and refusals are those of the run that works them out, and its gas figures are 0."""
    backend, chain, probe = probe_chain(fork)
    header = backend.header_by_hash(backend.canonical_hash(1))  # type: ignore[arg-type]
    assert header is not None
    compared = 0
    for request in probe_requests(fork, chain, probe):
        try:
            with execution(backend, request, "latest", states=CallStates()) as run:
                gas = gas_for(request, header.gas_limit)
                try:
                    full = run.run(gas)
                    bare = run.run(gas, figures=False)
                except ExecutionFailed as exc:
                    with pytest.raises(type(exc), match=re.escape(str(exc))):
                        run.run(gas, figures=False)
                    continue
        except ExecutionFailed:
            continue
        assert (bare.output, type(bare.error), str(bare.error)) == (
            full.output, type(full.error), str(full.error))
        assert (bare.gas_used, bare.peak_gas_used) == (0, 0) and full.gas_used > 0
        compared += 1
    assert compared >= 6


@pytest.mark.parametrize("fork", ["frontier", "homestead", "istanbul", "berlin", "shanghai", "prague"])
def test_intrinsic_gas_kept_by_the_data_shape_is_py_evms(fork: str) -> None:
    """The intrinsic gas kept by (rule, creation, data length, zero bytes) is what py-evm's
    rule answers for every message: calls and creations of the same data, data of the same
    length with other zero counts, and an access list (never kept)."""
    import random

    from ethread.methods import message as message_module

    backend, _, probe = probe_chain(fork)
    rng = random.Random(fork)
    datas = [b"", b"\x00", b"\x01", b"\x00\x01", b"\x01\x01", b"\x00\x00"]
    datas += [bytes(rng.choice((0, 0, 7)) for _ in range(rng.randrange(1, 90))) for _ in range(30)]
    states = CallStates()  # (one owner: what one message keeps, the next reads)
    for data in datas:
        for to in (probe, None):
            request = CallRequest(to=to, data=data)
            with execution(backend, request, "latest", states=states) as run:
                envelope = run._envelope(1_000_000)
                rule = message_module._intrinsic_gas_of(type(run.vm), envelope.type_id)
                assert envelope.intrinsic_gas == rule(envelope), (fork, data.hex(), to)
    if fork_at_least(fork, "berlin"):
        listed = CallRequest(to=probe, data=b"\x01", access_list=(
            AccessListEntry(address=probe, storage_keys=(b"\x00" * 32,)),))
        plain = CallRequest(to=probe, data=b"\x01")
        with execution(backend, listed, "latest", states=CallStates()) as run:
            with_list = run._envelope(1_000_000).intrinsic_gas
        with execution(backend, plain, "latest", states=CallStates()) as run:
            assert run._envelope(1_000_000).intrinsic_gas == with_list - 2400 - 1900
