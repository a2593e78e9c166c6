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
        """The blob gas per block the fee aims at."""
        return self.target * GAS_PER_BLOB

    @property
    def max_gas(self) -> int:
        """The blob gas a block may hold at most."""
        return self.max * GAS_PER_BLOB


BLOB_BASE_COST = 2**13
"""EIP-7918: the execution gas a blob's reserve price is pegged to."""
MIN_BLOB_BASE_FEE = 1


def fake_exponential(factor: int, numerator: int, denominator: int) -> int:
    """EIP-4844's integer approximation of ``factor * e ** (numerator / denominator)``."""
    i = 1
    output = 0
    accum = factor * denominator
    while accum > 0:
        output += accum
        accum = (accum * numerator) // (denominator * i)
        i += 1
    return output // denominator


def blob_base_fee(blob: BlobParams, excess_blob_gas: int) -> int:
    """The blob base fee (wei per blob gas) at this excess blob gas."""
    return fake_exponential(MIN_BLOB_BASE_FEE, excess_blob_gas, blob.update_fraction)


def excess_blob_gas_after(blob: BlobParams, reserve_price: bool, parent_excess: int,
                          parent_used: int, parent_base_fee: int) -> int:
    """The excess blob gas of the block after a parent with these fields, under the child's
    ``blob``; with ``reserve_price`` (EIP-7918, Osaka on), while the parent's blob price is
    below ``BLOB_BASE_COST`` times its base fee, it grows by used * (max - target) / max."""
    total = parent_excess + parent_used
    if total < blob.target_gas:
        return 0
    if reserve_price and (BLOB_BASE_COST * parent_base_fee
                          > GAS_PER_BLOB * blob_base_fee(blob, parent_excess)):
        return parent_excess + parent_used * (blob.max - blob.target) // blob.max
    return total - blob.target_gas
