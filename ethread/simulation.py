"""Typed arguments and results of eth_simulateV1: blocks, each with optional overrides and calls
to run; the JSON shapes live in :mod:`ethread.rpc.simulate`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .models import Block, CallRequest, HeaderOverrides, Log, StateOverride, Withdrawal


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulatedBlockOverrides(HeaderOverrides):
    """The header fields one simulated block sets instead of deriving them; None: derived
    (``number`` and ``time``: one and twelve seconds past the block before)."""

    withdrawals: tuple[Withdrawal, ...] | None = None
    """Paid at the end of the block (from Shanghai on)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulatedBlockCalls:
    """One block of a simulation: its overrides and its calls, run in order."""

    block_overrides: SimulatedBlockOverrides | None = None
    state_overrides: StateOverride = ()
    """Applied to the state before the block's first call (and kept for the later blocks)."""
    calls: tuple[CallRequest, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulateOptions:
    """eth_simulateV1's first parameter."""

    block_state_calls: tuple[SimulatedBlockCalls, ...]
    trace_transfers: bool = False
    """Report every ether transfer as an ERC-7528 ``Transfer`` log from 0xeeee...eeee."""
    validation: bool = False
    """Check nonces, fees and the base fee as a real block would (else geth's call defaults:
    a zero base fee, nonces filled in and not checked)."""
    return_full_transactions: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class CallError:
    """Why a simulated call failed while running: a revert (code 3, its payload in ``data``)
    or another EVM error (-32015)."""

    message: str
    code: int
    data: bytes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CallResult:
    """What one simulated call did."""

    return_data: bytes
    logs: tuple[Log, ...]
    """Its logs (and, when traced, its transfers), carrying the simulated block's hash."""
    gas_used: int
    """Gas charged, after refunds and the calldata floor."""
    max_used_gas: int
    """Gas used before refunds (the most the call needed at any point)."""
    status: int
    error: CallError | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulatedBlock:
    """One block as the simulation built it, and the result of each of its calls."""

    block: Block
    """Its transactions are the calls as unsigned transactions, with their senders."""
    calls: tuple[CallResult, ...]
