"""The opcodes Osaka adds to Prague's: CLZ (EIP-7939)."""

from __future__ import annotations

import copy
from typing import Any

from eth.abc import OpcodeAPI
from eth.vm.forks.prague.opcodes import PRAGUE_OPCODES
from eth.vm.opcode import as_opcode

CLZ = 0x1E
"""EIP-7939's opcode value."""
GAS_CLZ = 5
"""CLZ's fixed gas (the "low" tier, as MUL's)."""


def count_leading_zeros(computation: Any) -> None:
    """Replace the top of the stack by its number of leading zero bits (256 for zero)."""
    value = computation.stack_pop1_int()
    computation.stack_push_int(256 - value.bit_length())


OSAKA_OPCODES: dict[int, OpcodeAPI] = {
    **copy.deepcopy(PRAGUE_OPCODES),
    # a plain opcode of fixed gas (py-evm's _FastOpcode), which the lean loop runs too
    CLZ: as_opcode(logic_fn=count_leading_zeros, mnemonic="CLZ", gas_cost=GAS_CLZ),
}
"""Osaka's opcode table: Prague's and CLZ."""
