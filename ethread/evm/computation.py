"""What ethread's subclasses of py-evm's computation classes share: an opcode table with some
opcodes wrapped (the eth_call interrupts, the tracers, the gas and access-list watchers), and
the start of py-evm's ``apply_computation`` for the loops that replace py-evm's own (the
eth_call loop and the stepping tracer)."""

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


def start_computation(cls: Any, computation: Any, message: Any, parent_computation: Any) -> bool:
    """py-evm's ``apply_computation`` up to its code loop, on a computation just entered: the
    contracts-created list (new for a transaction, the parent's for a message within one),
    a creating transaction's initcode gas (from Shanghai; the CREATE opcodes charge their
    own), and a precompile run in full. True when that finished the computation (a
    precompile), False when its code is still to run."""
    if computation.is_origin_computation:
        computation.contracts_created = []
        if message.is_create:
            cls.consume_initcode_gas_cost(computation)
    if parent_computation is not None:
        computation.contracts_created = parent_computation.contracts_created
    if message.is_create:
        computation.contracts_created.append(message.storage_address)
    precompile = computation.precompiles.get(message.code_address)
    if precompile is None:
        return False
    if not message.is_delegation:
        precompile(computation)
    return True
