"""MODEXP (precompile 0x05) from Osaka on: EIP-7823's bounds on its inputs and EIP-7883's
prices; and before Osaka with its result corrected (:data:`modexp_eip2565`).

Any length above 1024 bytes makes the call fail with all its gas (checked before pricing);
otherwise the price is ``max(500, complexity * iterations)`` (:func:`gas_cost`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eth.exceptions import VMError
from eth.precompiles.modexp import _compute_modexp_gas_fee_eip_198
from eth.vm.forks.berlin.computation import _compute_modexp_gas_fee_eip_2565

MODEXP_ADDRESS = (5).to_bytes(20, "big")
MAX_INPUT_LENGTH = 1024
"""EIP-7823: the longest base, exponent or modulus, in bytes."""
MIN_GAS = 500
"""EIP-7883: the least a call costs."""


class ModexpInputTooLong(VMError):
    """A length over EIP-7823's bound: the call fails as an exceptional halt (all gas)."""


def _word(data: bytes, start: int, size: int) -> int:
    """The big-endian integer of ``size`` bytes of ``data`` from ``start``, zero past its end."""
    return int.from_bytes(data[start:start + size].ljust(size, b"\x00"), "big")


def lengths(data: bytes) -> tuple[int, int, int]:
    """The base, exponent and modulus lengths an input declares."""
    return _word(data, 0, 32), _word(data, 32, 32), _word(data, 64, 32)


def complexity(base_length: int, modulus_length: int) -> int:
    """EIP-7883's multiplication complexity."""
    longest = max(base_length, modulus_length)
    if longest <= 32:
        return 16
    words = (longest + 7) // 8
    return 2 * words * words


def iterations(exponent_length: int, exponent_head: int) -> int:
    """EIP-7883's iteration count: the exponent's highest set bit, counting 16 per byte past
    the first 32 (``exponent_head`` is the integer of its first 32 bytes at most); at least 1."""
    top_bit = max(exponent_head.bit_length() - 1, 0)
    count = top_bit if exponent_length <= 32 else 16 * (exponent_length - 32) + top_bit
    return max(count, 1)


def gas_cost(data: bytes) -> int:
    """The gas of a call with this input (whose lengths are within the bounds)."""
    base_length, exponent_length, modulus_length = lengths(data)
    head = _word(data, 96 + base_length, min(exponent_length, 32))
    return max(MIN_GAS, complexity(base_length, modulus_length) * iterations(exponent_length, head))


def check_bounds(data: bytes) -> None:
    """Raise :class:`ModexpInputTooLong` when a length is over EIP-7823's bound."""
    for name, length in zip(("base", "exponent", "modulus"), lengths(data), strict=True):
        if length > MAX_INPUT_LENGTH:
            raise ModexpInputTooLong(f"modexp {name} length {length} is over {MAX_INPUT_LENGTH}")


def result(data: bytes) -> bytes:
    """``base ** exponent % modulus`` as ``modulus_length`` bytes (zeros for a zero modulus;
    nothing when base and modulus are both empty)."""
    base_length, exponent_length, modulus_length = lengths(data)
    if base_length == 0 and modulus_length == 0:
        return b""
    base = _word(data, 96, base_length)
    exponent = _word(data, 96 + base_length, exponent_length)
    modulus = _word(data, 96 + base_length + exponent_length, modulus_length)
    if modulus == 0:
        return bytes(modulus_length)
    return pow(base, exponent, modulus).to_bytes(modulus_length, "big")


def _precompile(price: Callable[[bytes], int]) -> Callable[[Any], Any]:
    """MODEXP as py-evm calls a precompile: ``price(data)`` charged, then :func:`result`."""

    def run(computation: Any) -> Any:
        """MODEXP as py-evm calls a precompile: its price charged, then its result."""
        data = computation.msg.data_as_bytes
        computation.consume_gas(price(data), reason="MODEXP Precompile")
        computation.output = result(data)
        return computation

    return run


def _bounded_cost(data: bytes) -> int:
    check_bounds(data)  # (before anything is priced)
    return gas_cost(data)


modexp = _precompile(_bounded_cost)
"""The precompile from Osaka on: bounds, then gas, then the result."""
modexp_eip198 = _precompile(_compute_modexp_gas_fee_eip_198)
"""MODEXP from Byzantium to Istanbul: py-evm's EIP-198 price, with :func:`result` (the empty
base corrected as in :data:`modexp_eip2565`)."""
modexp_eip2565 = _precompile(_compute_modexp_gas_fee_eip_2565)
"""MODEXP from Berlin to Prague: py-evm's EIP-2565 price, with :func:`result`. py-evm's own
answers zero whenever the base is empty, but an empty base is the number 0 and ``0 ** 0 % m``
is ``1 % m``: with a zero exponent and a modulus above 1 the answer is 1 (execution-spec-tests'
``geth-fail-length`` vector, Prague; every fork since Byzantium, see :mod:`ethread.forks.vms`)."""
