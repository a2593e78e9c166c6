"""What ethread's subclasses of py-evm's computation classes share: an opcode table with some
opcodes wrapped (the eth_call interrupts, the tracers, the gas watcher)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def wrapped_opcodes(opcodes: Mapping[int, Any],
                    wrappers: Mapping[int, Callable[[Any], Any]]) -> dict[int, Any]:
    """A copy of a computation class's opcode table in which each opcode that ``wrappers``
    names and the fork has is replaced by ``wrapper(opcode)``."""
    table = dict(opcodes)
    for value, wrap in wrappers.items():
        if value in table:
            table[value] = wrap(table[value])
    return table
