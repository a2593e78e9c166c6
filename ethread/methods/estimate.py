"""eth_estimateGas: the least gas limit with which a message succeeds, found as geth finds it.

geth's search (``eth/gasestimator``): the upper bound is the block's gas limit (or the gas the
caller names), lowered to what the sender's balance can pay at its fee cap and to the gas cap;
a plain transfer to an account without code is tried at 21,000 first; one run at the upper
bound decides whether the message can succeed at all; its gas used before refunds plus the
call stipend, times 64/63, is tried next; then a bisection skewed to the low side stops once
the bounds are within 1.5% of each other. When the run at the upper bound shows that the
message's path cannot depend on its gas (:mod:`.gas_trace`), the later steps compare against
the least gas known from that run instead of executing.
"""

from __future__ import annotations

from eth.exceptions import OutOfGas

from ..errors import ExecutionFailed
from ..evm.blobs import GAS_PER_BLOB
from ..forks.validity import TX_GAS
from ..models import BlockOverrides, BlockRef, CallRequest, StateOverride
from ..validation import check_instance
from .call import raise_for_outcome
from .gas_trace import least_gas, traced_run
from .message import (
    CallStates,
    ExecutableChain,
    Outcome,
    PreparedMessage,
    Rejected,
    execution,
    gas_cap,
)
from .resolve import require_header

ERROR_RATIO = 0.015
"""How far above the least gas an estimate may be (geth's ``estimateGasErrorRatio``)."""
CALL_STIPEND = 2_300


def estimate_gas(backend: ExecutableChain, request: CallRequest, block: BlockRef,
                 states: CallStates | None = None, *, state_override: StateOverride = (),
                 block_overrides: BlockOverrides | None = None,
                 timeout: float | None = None) -> int:
    """The gas limit to give the message, or geth's error; the search stops after ``timeout`` s."""
    check_instance(request, CallRequest, "request")
    header = require_header(backend, block)
    cap = gas_cap(header.gas_limit)
    with execution(backend, request, block, states=states, state_override=state_override,
                   block_overrides=block_overrides, timeout=timeout) as run:
        return _search(run, request, cap)


def _search(run: PreparedMessage, request: CallRequest, cap: int, predict: bool = True) -> int:
    """geth's search; ``predict=False`` executes every step (to check the prediction)."""
    hi = int(run.state.execution_context.gas_limit)
    if request.gas is not None and min(request.gas, cap) >= TX_GAS:
        hi = min(request.gas, cap)
    if run.rules.tx_gas_cap is not None:
        hi = min(hi, run.rules.tx_gas_cap)  # EIP-7825, as geth's estimator caps it
    hi = _fundable(run, request, hi)
    hi = min(hi, cap)
    if not request.data and request.to is not None and not run.state.get_code(request.to):
        try:
            failed = _attempt(run, TX_GAS)[0]
        except ExecutionFailed:
            failed = True  # the run at the upper bound below answers why
        if not failed:
            return TX_GAS
    failed, outcome, least = _attempt(run, hi, watched=predict)
    if failed:
        if outcome is not None and not isinstance(outcome.error, OutOfGas):
            raise_for_outcome(outcome)
        raise ExecutionFailed(f"gas required exceeds allowance ({hi})")
    assert outcome is not None

    def fails(gas: int) -> bool:
        if least is not None:
            return gas < least
        return _attempt(run, gas)[0]

    lo = outcome.gas_used - 1
    optimistic = (outcome.peak_gas_used + CALL_STIPEND) * 64 // 63
    if optimistic < hi:
        if fails(optimistic):
            lo = optimistic
        else:
            hi = optimistic
    while lo + 1 < hi:
        if (hi - lo) / hi < ERROR_RATIO:
            break
        mid = lo + (hi - lo) // 2
        if mid > lo * 2:
            mid = lo * 2  # most messages need little more than they use: look low first
        if fails(mid):
            lo = mid
        else:
            hi = mid
    return hi


def _fundable(run: PreparedMessage, request: CallRequest, hi: int) -> int:
    """The upper bound lowered to the gas the sender can pay for at its fee cap."""
    message = run.message
    if message.fee_cap == 0:
        return hi
    available = run.state.get_balance(message.sender)
    if request.value >= available:
        raise ExecutionFailed("insufficient funds for transfer")
    available -= request.value
    hashes = request.blob_versioned_hashes
    if hashes and run.rules.blob is not None:
        blob_cost = len(hashes) * GAS_PER_BLOB * (message.blob_fee_cap or 0)
        if blob_cost >= available:
            raise ExecutionFailed("insufficient funds for gas * price + value")
        available -= blob_cost
    return min(hi, int(available) // message.fee_cap)


def _attempt(run: PreparedMessage, gas: int,
             watched: bool = False) -> tuple[bool, Outcome | None, int | None]:
    """Whether the message fails with ``gas``, how it ran, and (``watched``) the least gas it
    succeeds with when the run shows it. Too little gas for the intrinsic cost counts as
    failing; any other refusal is the answer, as geth's is."""
    try:
        outcome, trace = traced_run(run, gas) if watched else (run.run(gas), None)
    except Rejected as exc:
        if exc.intrinsic:
            return True, None, None
        raise ExecutionFailed(f"failed with {gas} gas: {exc.message}") from None
    if outcome.error is not None:
        return True, outcome, None
    return False, outcome, None if trace is None else least_gas(run, gas, outcome, trace)
