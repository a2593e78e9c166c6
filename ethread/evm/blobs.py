"""A fork's blob parameters (EIP-7840's ``blobSchedule`` entry, EIP-7892's BPO forks)."""

from __future__ import annotations

from dataclasses import dataclass

GAS_PER_BLOB = 131072


@dataclass(frozen=True, slots=True)
class BlobParams:
    """How many blobs a block targets and may hold, and how fast the blob base fee moves."""

    target: int
    """Blobs per block the fee aims at."""
    max: int
    """Blobs per block at most."""
    update_fraction: int
    """The blob base fee's update fraction (``baseFeeUpdateFraction``)."""

    @property
    def target_gas(self) -> int:
        return self.target * GAS_PER_BLOB

    @property
    def max_gas(self) -> int:
        return self.max * GAS_PER_BLOB
