"""What one message run comes to, as a comparable tuple: shared by the tests that run the same
messages two ways (the direct path against the transaction envelope, ethread's lean VM
classes against py-evm's)."""

from __future__ import annotations

from typing import Any

from ethread.methods.message import Rejected


def outcome_of(run: Any, gas: int, as_transaction: bool) -> tuple[Any, ...]:
    """(output, gas used, peak gas, error class, error text) of ``run`` with ``gas``, or the
    refusal (message, intrinsic gas) when the message is rejected before it runs."""
    try:
        outcome = run.run(gas, as_transaction=as_transaction)
    except Rejected as exc:
        return ("rejected", exc.message, exc.intrinsic)
    error = outcome.error
    return (outcome.output.hex(), outcome.gas_used, outcome.peak_gas_used,
            type(error).__name__, str(error) if error is not None else None)
