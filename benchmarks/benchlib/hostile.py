"""Requests of the hardening probes of issue 10, shared by probes.py and soak.py."""

from __future__ import annotations

from typing import Any

ENDLESS = {"data": "0x5b600056", "gas": "0x7fffffffffffffff"}
"""eth_call arguments of a contract creation that loops until its gas runs out (JUMPDEST,
PUSH1 0, JUMP): it runs into the call time limit."""
RETURN_ONE = {"data": "0x600160005260206000f3"}
"""eth_call arguments of a creation that returns the word 1 at once."""


def nested(depth: int) -> Any:
    """``"0x1"`` inside ``depth`` lists: params as deep as a parser allows, or deeper."""
    value: Any = "0x1"
    for _ in range(depth):
        value = [value]
    return value
