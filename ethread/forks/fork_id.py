"""EIP-2124 fork identifiers: which rules a node runs, in four bytes.

The hash is a CRC32 over the genesis hash and every activation passed (block numbers, then
timestamps, each 8 big-endian bytes); ``next`` is the first activation ahead (0: none).
Activations are those geth counts: every block-number key of the genesis ``config`` (the DAO
block and EIP-155's included; a merge by total difficulty is none), and every timestamp key;
several forks at one point count once, forks at block 0 or at or before the genesis time not
at all. eth_config (EIP-7910) names a fork by this identifier.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from .schedule import ChainConfig

_EXTRA_BLOCK_KEYS = ("daoForkBlock", "eip155Block")
"""Block keys geth takes into fork identifiers that ethread's schedule folds into others
(the DAO drain, EIP-155 with Spurious Dragon)."""


@dataclass(frozen=True, slots=True)
class ForkId:
    """An EIP-2124 fork identifier."""

    hash: bytes
    """CRC32 of the genesis hash and every activation passed, 4 bytes big-endian."""
    next: int
    """The next activation (block number or timestamp) scheduled, 0 when none is."""


def fork_activations(config: ChainConfig, genesis_time: int
                     ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The block numbers and timestamps a fork identifier counts, each ascending and distinct."""
    merge_by_block = config.source.get("mergeNetsplitBlock") is not None
    blocks = {number for number, name in config.block_forks if name != "paris" or merge_by_block}
    for key in _EXTRA_BLOCK_KEYS:
        value = config.source.get(key)
        if value is not None:
            blocks.add(int(value))
    blocks.discard(0)
    times = {time for time, _ in config.time_forks if time > genesis_time}
    return tuple(sorted(blocks)), tuple(sorted(times))


def fork_id(config: ChainConfig, genesis_hash: bytes, genesis_time: int, head_number: int,
            head_time: int) -> ForkId:
    """The identifier of a node of this chain whose head is at ``head_number`` and ``head_time``."""
    checksum = zlib.crc32(genesis_hash)
    blocks, times = fork_activations(config, genesis_time)
    for activations, reached in ((blocks, head_number), (times, head_time)):
        for activation in activations:
            if activation > reached:
                return ForkId(checksum.to_bytes(4, "big"), activation)
            checksum = zlib.crc32(activation.to_bytes(8, "big"), checksum)
    return ForkId(checksum.to_bytes(4, "big"), 0)


__all__ = ["ForkId", "fork_activations", "fork_id"]
