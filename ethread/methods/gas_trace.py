"""What one successful run of a message tells about the same message with less gas.

An execution depends on its gas only through what reads the gas left or the sender's balance
(which the gas limit lowers): GAS, the calls and creates (which hand on all but 1/64 of the
gas left), BALANCE, SELFBALANCE and SELFDESTRUCT. A run that executes none of these fails
with a smaller limit exactly when one of py-evm's two gas checks would stop it: a charge
larger than the gas left (the limit is below the gas used before refunds or, from Prague,
the calldata floor), or an SSTORE with 2,300 gas or less left (EIP-2200's sentry). So
:class:`GasTrace` records whether any of those opcodes ran and the least gas left at any
SSTORE, and :func:`least_gas` turns that into the least limit with which the message succeeds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eth.vm import opcode_values

from ..evm.hooks import Slot, watched_class
from ..forks.validity import floor_data_gas
from .message import Outcome, PreparedMessage

SSTORE_SENTRY = 2_300
"""EIP-2200: an SSTORE with this much gas left, or less, runs out of gas."""

GAS_DEPENDENT_OPCODES = (
    opcode_values.GAS, opcode_values.CALL, opcode_values.CALLCODE, opcode_values.DELEGATECALL,
    opcode_values.STATICCALL, opcode_values.CREATE, opcode_values.CREATE2,
    opcode_values.BALANCE, opcode_values.SELFBALANCE, opcode_values.SELFDESTRUCT,
)
"""Opcodes after which a run's path may differ with its gas limit (see the module docstring)."""


@dataclass(slots=True)
class GasTrace:
    """What the watched opcodes saw during one run."""

    gas_dependent: bool = False
    """A gas-dependent opcode ran: nothing about other limits follows from this run."""
    least_left_at_sstore: int | None = None
    """The least gas left when an SSTORE started (None: no SSTORE ran)."""


_recording: Slot[GasTrace] = Slot()


def traced_run(run: PreparedMessage, gas: int) -> tuple[Outcome, GasTrace]:
    """``run.run(gas)`` with its gas-dependent opcodes and SSTOREs watched."""
    with _recording.holding(GasTrace()) as trace:
        outcome = run.run(gas, traced(run.state.computation_class))
    return outcome, trace


def least_gas(run: PreparedMessage, gas: int, outcome: Outcome, trace: GasTrace) -> int | None:
    """The least gas limit the message succeeds with, from its run with ``gas`` (None: unknown)."""
    if trace.gas_dependent or outcome.error is not None:
        return None
    least = outcome.peak_gas_used  # every charge of the run fits; at least the intrinsic gas
    if run.rules.calldata_floor:
        least = max(least, floor_data_gas(run.message.request.data))
    if trace.least_left_at_sstore is not None and run.rules.sstore_sentry:
        # With g gas every SSTORE starts with (gas - g) less left than in this run.
        least = max(least, gas - trace.least_left_at_sstore + SSTORE_SENTRY + 1)
    return least


def _note_dependent(computation: Any) -> None:
    trace = _recording.value
    if trace is not None:
        trace.gas_dependent = True


def _note_sstore(computation: Any) -> None:
    trace = _recording.value
    if trace is not None:
        left = computation.get_gas_remaining()
        if trace.least_left_at_sstore is None or left < trace.least_left_at_sstore:
            trace.least_left_at_sstore = left


_WATCHERS = (*((value, _note_dependent) for value in GAS_DEPENDENT_OPCODES),
             (opcode_values.SSTORE, _note_sstore))


def traced(computation_class: type) -> type:
    """``computation_class`` with the gas-dependent opcodes and SSTORE watched."""
    return watched_class(computation_class, _WATCHERS, prefix="GasTraced")
