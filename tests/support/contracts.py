"""What the tests read of the dev chain's hand-assembled contracts
(:mod:`ethread.devchain.contracts`), which the package itself never needs."""

from __future__ import annotations

from collections.abc import Sequence

from ethread.devchain.contracts import ENV_FIELDS, assemble

FORWARDER = assemble(
    20, "CALLDATASIZE", "SUB", 20, 0, "CALLDATACOPY",
    0, 0, 20, "CALLDATASIZE", "SUB", 0, 0, 0, "CALLDATALOAD", 96, "SHR", "GAS", "CALL",
    "POP", "STOP")
"""Calls the address in its calldata's first 20 bytes with the rest of the calldata, and stops
whatever the call did (the tracing tests' forwarder)."""


def load_calldata(slot: int) -> bytes:
    """Calldata that makes :data:`~ethread.devchain.contracts.STORAGE` return ``slot``'s value."""
    return slot.to_bytes(32, "big")


def decode_env(output: bytes, fields: Sequence[str] = ENV_FIELDS) -> dict[str, int]:
    """The words an environment echo returned, by field name."""
    if len(output) != 32 * len(fields):
        raise ValueError(f"expected {32 * len(fields)} bytes, got {len(output)}")
    return {
        name: int.from_bytes(output[32 * i:32 * i + 32], "big") for i, name in enumerate(fields)
    }
