"""The 2048-bit log bloom of receipts and headers (Yellow Paper, section 4.3.1): for the address
and each topic of a log, three bits, each picked by a pair of bytes of the item's keccak.

Blooms are kept as Python integers (bit ``n`` of the bloom is ``1 << n``), so that a receipt's
bloom joins its block's with ``|``; ``to_bytes(256, "big")`` gives the header's field.
"""

from __future__ import annotations

from collections.abc import Iterable

from .keccak import keccak256

__all__ = ["item_bloom", "logs_bloom"]


def item_bloom(item: bytes) -> int:
    """The three bits an address or topic sets."""
    digest = keccak256(item)
    return ((1 << ((digest[0] << 8 | digest[1]) & 2047))
            | (1 << ((digest[2] << 8 | digest[3]) & 2047))
            | (1 << ((digest[4] << 8 | digest[5]) & 2047)))


def logs_bloom(logs: Iterable[tuple[bytes, Iterable[bytes], bytes]]) -> int:
    """The bloom of ``(address, topics, data)`` logs."""
    bloom = 0
    for address, topics, _ in logs:
        bloom |= item_bloom(address)
        for topic in topics:
            bloom |= item_bloom(topic)
    return bloom
