"""API keys: the path segment after ``/v3/`` is the only credential.

Keys are found by the SHA-256 of what the client sent, then confirmed with
:func:`hmac.compare_digest`, so neither the lookup nor the comparison leaks through timing how
much of a guess was right. A key never reaches a log in full: :func:`mask` keeps a prefix
long enough to tell keys apart in an access log and no more.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass

from .config import KeyConfig


@dataclass(frozen=True, slots=True)
class ApiKey:
    """A known key. ``key_id`` (a digest) is what the ledger stores instead of the key."""

    config: KeyConfig
    key_id: str
    masked: str


def key_id(key: str) -> str:
    """The id a key is billed and logged under: the SHA-256 hex of the key, never the key itself.
    """
    return hashlib.sha256(key.encode()).hexdigest()


def mask(key: str) -> str:
    """The first four characters and the length: enough to recognise, useless to replay."""
    return f"{key[:4]}…({len(key)})" if len(key) > 4 else "…"


class KeyRing:
    """The configured keys, looked up in constant time."""

    def __init__(self, keys: tuple[KeyConfig, ...]) -> None:
        self._by_digest: dict[bytes, ApiKey] = {}
        for entry in keys:
            digest = hashlib.sha256(entry.key.encode()).digest()
            self._by_digest[digest] = ApiKey(entry, digest.hex(), mask(entry.key))

    def __len__(self) -> int:
        return len(self._by_digest)

    def lookup(self, presented: str) -> ApiKey | None:
        """The configured key matching the presented one (compared in constant time), or None."""
        digest = hashlib.sha256(presented.encode()).digest()
        found = self._by_digest.get(digest)
        if found is None or not hmac.compare_digest(found.config.key.encode(), presented.encode()):
            return None
        return found

    def keys(self) -> list[ApiKey]:
        """Every configured API key."""
        return list(self._by_digest.values())


_KEY_IN_PATH = re.compile(r"(/v3/)([^/?#\s\"']+)")


def mask_paths(text: str) -> str:
    """Mask every ``/v3/<key>`` in a log line, for loggers we do not write (uvicorn's)."""
    return _KEY_IN_PATH.sub(lambda m: m.group(1) + mask(m.group(2)), text)
