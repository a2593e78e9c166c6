"""EIP-1559's base fee (London on): the base fee of the block after a parent."""

from __future__ import annotations

from ..models import Header
from .schedule import ChainConfig

INITIAL_BASE_FEE = 1_000_000_000
"""The base fee of London's first block (and of a block after a parent without one)."""
ELASTICITY_MULTIPLIER = 2
"""A block may use this many times its gas target."""
BASE_FEE_CHANGE_DENOMINATOR = 8
"""The base fee moves by at most 1/8 a block."""


def next_base_fee(config: ChainConfig, parent: Header) -> int:
    """The base fee of the block after ``parent`` (EIP-1559)."""
    if not config.rules(parent.number, parent.timestamp).base_fee or parent.base_fee_per_gas is None:
        return INITIAL_BASE_FEE
    base_fee = parent.base_fee_per_gas
    target = parent.gas_limit // ELASTICITY_MULTIPLIER
    if parent.gas_used == target:
        return base_fee
    if parent.gas_used > target:
        delta = base_fee * (parent.gas_used - target) // target // BASE_FEE_CHANGE_DENOMINATOR
        return base_fee + max(delta, 1)
    delta = base_fee * (target - parent.gas_used) // target // BASE_FEE_CHANGE_DENOMINATOR
    return max(base_fee - delta, 0)
