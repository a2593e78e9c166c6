"""Which keccak-256 implementation this process hashes with.

eth-hash picks pycryptodome before pysha3 when both are installed, though pysha3's keccak
(``safe-pysha3``) costs a fraction of pycryptodome's a call (docs/testing.md).
:func:`use_fastest_keccak` switches eth-hash to pysha3 when it is installed and
``ETH_HASH_BACKEND`` is unset. It runs when this module is first imported: every module that
hashes imports it, ``import ethread`` alone does not.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

EMPTY_KECCAK = bytes.fromhex("c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470")
"""keccak-256 of no bytes, the check eth-hash itself makes of a backend."""


def use_fastest_keccak() -> str:
    """Make eth-hash's shared hasher pysha3's when that is installed and ``ETH_HASH_BACKEND``
    names no backend; the backend in use: ``"pysha3"``, or ``"auto"`` when eth-hash chooses."""
    if os.environ.get("ETH_HASH_BACKEND"):
        return "auto"
    try:
        from eth_hash.backends.pysha3 import backend
    except ImportError:
        return "auto"
    if backend.keccak256(b"") != EMPTY_KECCAK:  # pragma: no cover - a broken build
        return "auto"
    from eth_hash.auto import keccak

    # eth-hash calls both positionally; only the parameter's name differs from its own
    # annotation (prehash, in_data), the reason for the ignores.
    keccak.hasher = backend.keccak256  # type: ignore[assignment]
    keccak.preimage = backend.preimage  # type: ignore[assignment]
    return "pysha3"


BACKEND = use_fastest_keccak()
"""The keccak-256 backend eth-hash hashes with in this process (``ethread.KECCAK_BACKEND``)."""

def _pysha3() -> Any:
    """pysha3's keccak-256 constructor, or None when it is not installed."""
    try:
        from sha3 import keccak_256  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - without pysha3, eth-hash's choice
        return None
    return keccak_256


_KECCAK_256 = _pysha3()


def _direct_keccak() -> Callable[[bytes], bytes]:
    keccak_256 = _KECCAK_256
    if keccak_256 is None:  # pragma: no cover - without pysha3, eth-hash's choice
        from eth_hash.auto import keccak

        return keccak

    def keccak256(data: bytes) -> bytes:
        """keccak-256 of ``data``, 32 bytes, hashed by pysha3 without eth-hash between."""
        digest: bytes = keccak_256(data).digest()
        return digest

    return keccak256


keccak256 = _direct_keccak()
"""keccak-256 of bytes through pysha3 directly when it is installed: cheaper than a call
through eth-hash, for readers that hash once per row (bulk frames, ``ere`` blooms)."""


def keccak_spans(data: bytes, starts: Iterable[int], ends: Iterable[int]) -> bytes:
    """The keccak-256 digests of ``data[starts[i]:ends[i]]``, back to back (32 bytes each), in
    one call (each span sliced as bytes: cheaper for pysha3 than a memoryview)."""
    spans = zip(starts, ends, strict=True)
    if _KECCAK_256 is None:  # pragma: no cover - without pysha3, eth-hash's choice
        return b"".join([keccak256(bytes(data[lo:hi])) for lo, hi in spans])
    new, digest = _KECCAK_256, _KECCAK_256.digest
    return b"".join([digest(new(data[lo:hi])) for lo, hi in spans])
