"""eth_call: execute a message on the state after a block, in that block's context, as geth
does (defaults: :mod:`.message`). A REVERT answers error code 3 with the decoded reason and
the raw payload; a message geth refuses before running it answers ``err: <reason> (supplied
gas N)``.
"""

from __future__ import annotations

import re

from eth import exceptions as vm_errors

from ..errors import ExecutionFailed, ExecutionReverted
from ..models import BlockOverrides, BlockRef, CallRequest, StateOverride
from ..validation import check_data, check_instance
from .message import CallStates, ExecutableChain, Outcome, Rejected, gas_for, prepare
from .resolve import require_header

__all__ = ["CallStates", "ExecutableChain", "call", "decode_revert_reason", "raise_for_outcome",
           "vm_error_message"]

ERROR_SELECTOR = bytes.fromhex("08c379a0")
PANIC_SELECTOR = bytes.fromhex("4e487b71")
PANIC_REASONS = {
    0x00: "generic panic",
    0x01: "assert(false)",
    0x11: "arithmetic underflow or overflow",
    0x12: "division or modulo by zero",
    0x21: "enum overflow",
    0x22: "invalid encoded storage byte array accessed",
    0x31: "out-of-bounds array access; popping on an empty array",
    0x32: "out-of-bounds access of an array or bytesN",
    0x41: "out of memory",
    0x51: "uninitialized function",
}


def decode_revert_reason(payload: bytes) -> str | None:
    """The reason of an ABI ``Error(string)`` or ``Panic(uint256)`` revert, else None."""
    payload = check_data(payload, "payload")
    if payload[:4] == ERROR_SELECTOR and len(payload) >= 4 + 64:
        body = payload[4:]
        offset = int.from_bytes(body[:32], "big")
        if offset + 32 > len(body):
            return None
        length = int.from_bytes(body[offset:offset + 32], "big")
        raw = body[offset + 32:offset + 32 + length]
        if len(raw) != length:
            return None
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if payload[:4] == PANIC_SELECTOR and len(payload) == 4 + 32:
        code = int.from_bytes(payload[4:], "big")
        return PANIC_REASONS.get(code, f"unknown panic code: {code:#x}")
    return None


def call(backend: ExecutableChain, request: CallRequest, block: BlockRef, states: CallStates | None = None,
         *, state_override: StateOverride = (), block_overrides: BlockOverrides | None = None,
         timeout: float | None = None) -> bytes:
    """Return data of the call, or ExecutionReverted / ExecutionFailed; the overrides apply
    to this call only. Execution stops after ``timeout`` seconds (ExecutionAborted, geth's
    ``--rpc.evmtimeout``)."""
    check_instance(request, CallRequest, "request")
    header = require_header(backend, block) if states is None else states.header(backend, block)
    gas = gas_for(request, header.gas_limit)
    run = prepare(backend, request, block, states=states, state_override=state_override,
                  block_overrides=block_overrides, timeout=timeout, header=header)
    try:
        outcome = run.run(gas, figures=False)  # (the answer is the output or the error)
    except Rejected as exc:
        raise ExecutionFailed(f"err: {exc.message} (supplied gas {gas})") from None
    finally:
        run.release()
    raise_for_outcome(outcome)
    return outcome.output


def raise_for_outcome(outcome: Outcome) -> None:
    """A failed run as geth answers it: REVERT as error 3 with its payload, else the VM error."""
    if outcome.error is None:
        return
    if outcome.reverted:
        payload = outcome.output
        reason = decode_revert_reason(payload)
        message = "execution reverted" + (f": {reason}" if reason is not None else "")
        raise ExecutionReverted(message, "0x" + payload.hex())
    raise ExecutionFailed(vm_error_message(outcome.error))


_VM_ERROR_MESSAGES: dict[type[Exception], str] = {
    vm_errors.OutOfGas: "out of gas",
    vm_errors.StackDepthLimit: "max call depth exceeded",
    vm_errors.InsufficientStack: "stack underflow",
    vm_errors.FullStack: "stack limit reached 1024",
    vm_errors.InvalidJumpDestination: "invalid jump destination",
    vm_errors.WriteProtection: "write protection",
}


def vm_error_message(error: Exception) -> str:
    """The message geth gives for a py-evm execution error (``out of gas``, ...)."""
    if isinstance(error, vm_errors.InvalidInstruction):
        return f"invalid opcode: {_opcode_name(str(error))}"
    for kind, message in _VM_ERROR_MESSAGES.items():
        if isinstance(error, kind):
            return message
    return f"execution failed: {error or type(error).__name__}"


def _opcode_name(detail: str) -> str:
    """geth names the opcode (``CHAINID``); py-evm gives its value (``Invalid opcode 0x46 @ 8``)."""
    from eth.vm import opcode_values

    match = re.search(r"0x([0-9a-fA-F]+)", detail)
    if match is None:
        return detail
    value = int(match.group(1), 16)
    for name, code in vars(opcode_values).items():
        if name.isupper() and code == value:
            return name
    return f"opcode {value:#x} not defined"
