"""Snappy framing (the streaming format, with CRC-checked chunks) through cramjam, whose framed
encoder gives the Go encoder's bytes: an exported Era1 file matches other clients' exactly.
"""

from __future__ import annotations

import cramjam


class SnappyError(ValueError):
    """Data that is not a valid snappy frame stream (bad chunk, CRC mismatch, truncation)."""


def compress(data: bytes) -> bytes:
    """Snappy-framed compression, as Era1 files store their records."""
    return bytes(cramjam.snappy.compress(data))


def decompress(data: bytes | memoryview) -> bytes:
    """Undo :func:`compress`; raises :class:`SnappyError` on corrupted data."""
    try:
        return bytes(cramjam.snappy.decompress(bytes(data)))
    except cramjam.DecompressionError as exc:
        raise SnappyError(str(exc)) from None
