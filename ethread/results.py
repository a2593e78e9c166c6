"""What the node-describing methods answer: eth_capabilities, eth_config and eth_feeHistory.

Models like those of :mod:`ethread.models`, held here because eth_config's answer carries
:class:`~ethread.evm.blobs.BlobParams`, which sit above the models.
"""

from __future__ import annotations

from dataclasses import dataclass

from .evm.blobs import BlobParams
from .models import Address, Hash32


@dataclass(frozen=True, slots=True, kw_only=True)
class Availability:
    """Whether one kind of data is served, and from which block."""

    disabled: bool
    oldest_block: int | None
    """The oldest block it is served for (None when disabled)."""
    retention_blocks: int | None = None
    """The window of latest blocks kept when older ones are deleted as the chain grows;
    None when nothing is deleted."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Capabilities:
    """eth_capabilities' answer."""

    head_number: int
    head_hash: Hash32
    state: Availability
    tx: Availability
    """Transactions found by hash."""
    logs: Availability
    receipts: Availability
    blocks: Availability
    state_proofs: Availability


@dataclass(frozen=True, slots=True, kw_only=True)
class ForkConfig:
    """One fork as eth_config describes it."""

    activation_time: int
    """When the fork activates; 0 when it is active at genesis."""
    blob_schedule: BlobParams | None
    """Blob target, max and update fraction; None for a fork without blobs."""
    chain_id: int
    fork_id: bytes
    """The EIP-2124 fork hash (4 bytes) of a node once the fork is active."""
    precompiles: tuple[tuple[str, Address], ...]
    """(EIP-7910 name, address) of each precompile."""
    system_contracts: tuple[tuple[str, Address], ...]
    """(EIP-7910 name, address) of each system contract."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ChainForks:
    """eth_config's answer."""

    current: ForkConfig | None
    """The fork active at the head (None before Shanghai)."""
    next: ForkConfig | None
    """The fork scheduled right after it, if any."""
    last: ForkConfig | None
    """The latest fork scheduled, when there is a next one (else None)."""


@dataclass(frozen=True, slots=True)
class FeeHistory:
    """eth_feeHistory's answer. ``base_fee_per_gas`` and ``base_fee_per_blob_gas`` have one
    entry more than blocks: the fee of the block after the newest. ``reward`` is None when no
    percentiles were asked."""

    oldest_block: int
    reward: tuple[tuple[int, ...], ...] | None
    base_fee_per_gas: tuple[int, ...]
    gas_used_ratio: tuple[float, ...]
    base_fee_per_blob_gas: tuple[int, ...]
    blob_gas_used_ratio: tuple[float, ...]


EMPTY_HISTORY = FeeHistory(0, None, (), (), (), ())
"""eth_feeHistory's answer when there is no block to describe."""


__all__ = ["EMPTY_HISTORY", "Availability", "Capabilities", "ChainForks", "FeeHistory", "ForkConfig"]
