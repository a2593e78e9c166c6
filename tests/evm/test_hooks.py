"""The EVM's one hook point (``ethread.evm.hooks``): a tracer attached to a run hears each
frame entered and left, the ether each moves, each log and each self-destruct, in the order
they happen; a call py-evm refuses before it runs is a frame that ends with geth's error; a
watched opcode's watcher runs before it, on the lean loop as on py-evm's; geth's names and
error texts."""

from __future__ import annotations

from typing import Any

import pytest
from eth.exceptions import InvalidInstruction, OutOfGas, Revert
from eth.vm.forks import PragueVM

import ethread
from ethread.devchain import PRAGUE_FORKS, DevChain
from ethread.evm.hooks import (
    CALL,
    SELFDESTRUCT,
    Tracer,
    opcode_name,
    vm_error_text,
    watched_class,
)
from ethread.evm.lean_interpreter import lean_vm_class
from ethread.methods.tracing import trace_call
from ethread.models import CallRequest

TOPIC = (0x2A).to_bytes(32, "big")
LOGGER = bytes.fromhex("602a60006000a100")
"""LOG1 of topic 0x2a and no data."""


def calls_with_value(callee: bytes, value: int) -> bytes:
    """CALL ``callee`` with ``value`` wei and no data, then STOP."""
    return bytes.fromhex(f"60006000600060006a{value:022x}73") + callee + bytes.fromhex("5af15000")


class Recorder(Tracer):
    """Every event, as a tuple, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def on_enter(self, depth: int, kind: int, sender: bytes, to: bytes, data: bytes, gas: int,
                 value: int | None) -> None:
        self.events.append(("enter", depth, kind, sender, to, value))

    def on_exit(self, depth: int, output: bytes, gas_used: int, error: str | None,
                reverted: bool) -> None:
        self.events.append(("exit", depth, error, reverted))

    def on_transfer(self, sender: bytes, recipient: bytes, value: int) -> None:
        self.events.append(("transfer", sender, recipient, value))

    def on_log(self, address: bytes, topics: tuple[bytes, ...], data: bytes, index: int) -> None:
        self.events.append(("log", address, topics, data, index))

    def result(self) -> list[tuple[Any, ...]]:
        return self.events


@pytest.fixture(scope="module")
def chain() -> DevChain:
    chain = DevChain(ethread.MemoryBackend(), forks=PRAGUE_FORKS)
    chain.mine()
    return chain


def traced(chain: DevChain, to: bytes, value: int) -> list[tuple[Any, ...]]:
    sender = chain.accounts[0].address
    request = CallRequest(sender=sender, to=to, value=value, gas=1_000_000)
    return trace_call(chain.backend, request, "latest", tracer=Recorder())  # type: ignore[arg-type, return-value]


def test_frames_transfers_and_logs_in_order(chain: DevChain) -> None:
    logger = chain.deploy_runtime(chain.accounts[0], LOGGER)
    caller = chain.deploy_runtime(chain.accounts[0], calls_with_value(logger, 5))
    chain.mine()
    sender = chain.accounts[0].address
    assert traced(chain, caller, 10) == [
        ("enter", 0, CALL, sender, caller, 10),
        ("transfer", sender, caller, 10),
        ("enter", 1, CALL, caller, logger, 5),
        ("transfer", caller, logger, 5),
        ("log", logger, (TOPIC,), b"", 0),
        ("exit", 1, None, False),
        ("exit", 0, None, False),
    ]


def test_a_self_destruct_moves_the_balance_in_a_frame_of_its_own(chain: DevChain) -> None:
    destructs = chain.deploy_runtime(chain.accounts[0], bytes.fromhex("33ff"))  # to the caller
    chain.mine()
    sender = chain.accounts[0].address
    events = traced(chain, destructs, 7)
    assert events[2:] == [
        ("enter", 1, SELFDESTRUCT, destructs, sender, 7),
        ("transfer", destructs, sender, 7),
        ("exit", 1, None, False),
        ("exit", 0, None, False),
    ]


def test_a_refused_call_is_a_frame_ending_with_geths_error(chain: DevChain) -> None:
    logger = chain.deploy_runtime(chain.accounts[0], LOGGER)
    poor = chain.deploy_runtime(chain.accounts[0], calls_with_value(logger, 10**20))
    chain.mine()
    events = traced(chain, poor, 0)
    assert events[1:3] == [("enter", 1, CALL, poor, logger, 10**20),
                           ("exit", 1, "insufficient balance for transfer", True)]
    assert not [event for event in events if event[0] in ("transfer", "log")]


WATCHED: list[int] = []


def _note(computation: Any) -> None:
    WATCHED.append(computation.code.program_counter)


@pytest.mark.parametrize("lean", [True, False], ids=["lean loop", "py-evm's loop"])
def test_a_watcher_runs_before_each_watched_opcode(lean: bool) -> None:
    """JUMPDEST, then three JUMPIs back to it while a counter runs down: the watcher of JUMPI
    runs three times, each before the opcode runs (the counter just past it), then the loop
    ends with the same gas as without the watcher."""
    from eth.constants import BLANK_ROOT_HASH
    from eth.db.atomic import AtomicDB
    from eth.vm.message import Message
    from eth.vm.transaction_context import BaseTransactionContext

    code = bytes.fromhex("6003" "5b" "6001" "90" "03" "80" "6002" "57" "00")
    state_class = (lean_vm_class(PragueVM) if lean else PragueVM).get_state_class()
    base = state_class.computation_class
    watched = watched_class(base, ((0x57, _note),))
    assert watched_class(base, ((0x57, _note),)) is watched  # (made once)
    results = []
    for cls in (base, watched):
        WATCHED.clear()
        state = state_class(AtomicDB(), _context(), BLANK_ROOT_HASH)
        message = Message(gas=100_000, to=b"\x01" * 20, sender=b"\x02" * 20, value=0,
                          data=b"", code=code)
        computation = cls.apply_computation(state, message,
                                            BaseTransactionContext(gas_price=1, origin=b"\x02" * 20))
        assert computation.is_success
        results.append((computation.get_gas_remaining(), list(WATCHED)))
    assert results[0][1] == []
    assert results[1] == (results[0][0], [11, 11, 11])  # (JUMPI at 10, read: the counter past it)


def _context() -> Any:
    from eth.vm.execution_context import ExecutionContext

    return ExecutionContext(coinbase=b"\x00" * 20, timestamp=1, block_number=1, difficulty=0,
                            mix_hash=b"\x00" * 32, gas_limit=10**7, prev_hashes=(),
                            chain_id=1, base_fee_per_gas=0, excess_blob_gas=0)


def test_geths_names_and_error_texts() -> None:
    assert opcode_name(0x56) == "JUMP" and opcode_name(0x0C) == "opcode 0xc not defined"
    assert vm_error_text(Revert(b"")) == "execution reverted"
    assert vm_error_text(OutOfGas("Out of gas: Needed 5")) == "out of gas"
    assert vm_error_text(InvalidInstruction("Invalid opcode 0xfe")) == "invalid opcode: INVALID"
