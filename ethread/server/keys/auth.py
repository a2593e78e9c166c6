"""API keys: the path segment after ``/v3/`` is the only credential.

Keys are found by the SHA-256 of what the client sent and confirmed with
:func:`hmac.compare_digest`, so timing leaks nothing of a guess; logs see only :func:`mask`.
The ring holds the configured keys and those issued into the key store (:mod:`.keystore`),
replaced while serving by :meth:`KeyRing.update`; a key the store no longer lists as live is
marked :attr:`ApiKey.revoked` and refused at its next charge.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable

from ..config import KeyConfig
from .keystore import KeyRecord, key_id_of


class ApiKey:
    """A known key. ``key_id`` (a digest) is what the ledger stores instead of the key."""

    __slots__ = ("credits_per_second", "daily_credits", "key_id", "label", "masked", "methods",
                 "networks", "revoked")

    def __init__(self, key_id: str, masked: str, daily_credits: int,
                 credits_per_second: float | None, *, label: str = "",
                 networks: frozenset[str] | None = None, methods: frozenset[str] | None = None,
                 ) -> None:
        self.key_id = key_id
        self.masked = masked
        self.daily_credits = daily_credits
        self.credits_per_second = credits_per_second
        self.label = label
        self.networks = networks
        """The networks it may be used on (None: every one)."""
        self.methods = methods
        """The rules of the methods it may call (None: every one; see :mod:`.method_rules`)."""
        self.revoked = False
        """Set when the key store revokes it: its next request is refused."""

    @classmethod
    def from_config(cls, entry: KeyConfig) -> ApiKey:
        """A key of the configuration file or of ``--api-key``."""
        return cls(key_id_of(entry.key), mask(entry.key), entry.daily_credits,
                   entry.credits_per_second, label=entry.label,
                   methods=frozenset(entry.methods) or None)

    @classmethod
    def from_record(cls, record: KeyRecord) -> ApiKey:
        """A key issued into the key store (its text is not known here, only its prefix)."""
        return cls(record.key_id, f"{record.prefix}…", record.daily_credits,
                   record.credits_per_second, label=record.label,
                   networks=frozenset(record.networks) or None,
                   methods=frozenset(record.methods) or None)


def mask(key: str) -> str:
    """The first four characters and the length: enough to recognise, useless to replay."""
    return f"{key[:4]}…({len(key)})" if len(key) > 4 else "…"


class KeyRing:
    """The configured and the issued keys, looked up in constant time."""

    def __init__(self, keys: tuple[KeyConfig, ...],
                 stored: Iterable[KeyRecord] = ()) -> None:
        self._configured: dict[bytes, ApiKey] = {}
        for entry in keys:
            digest = hashlib.sha256(entry.key.encode()).digest()
            self._configured[digest] = ApiKey.from_config(entry)
        self._by_digest: dict[bytes, ApiKey] = dict(self._configured)
        self.update(stored)

    def __len__(self) -> int:
        return len(self._by_digest)

    @property
    def configured(self) -> int:
        """How many keys come from the configuration (the rest were issued into the store)."""
        return len(self._configured)

    def lookup(self, presented: str) -> ApiKey | None:
        """The key matching the presented one (compared in constant time), or None."""
        digest = hashlib.sha256(presented.encode()).digest()
        found = self._by_digest.get(digest)
        if found is None or not hmac.compare_digest(found.key_id, digest.hex()):
            return None
        return found

    def by_id(self, key_id: str) -> ApiKey | None:
        """The live key billed under ``key_id``, or None."""
        try:
            return self._by_digest.get(bytes.fromhex(key_id))
        except ValueError:
            return None

    def update(self, stored: Iterable[KeyRecord]) -> None:
        """Put the key store's keys in place of the issued keys held so far (revoked or
        vanished ones are marked revoked); a configured key keeps its configuration."""
        current = self._by_digest
        fresh = dict(self._configured)
        for record in stored:
            if record.revoked is not None:
                continue
            try:
                digest = bytes.fromhex(record.key_id)
            except ValueError:
                continue
            if digest in fresh:
                continue
            fresh[digest] = current.get(digest) or ApiKey.from_record(record)
        for digest, key in current.items():
            if digest not in fresh:
                key.revoked = True
        self._by_digest = fresh  # one assignment: a lookup sees the old ring or the new


_KEY_IN_PATH = re.compile(r"(/v3/)([^/?#\s\"']+)")


def mask_paths(text: str) -> str:
    """Mask every ``/v3/<key>`` in a log line, for loggers we do not write (uvicorn's)."""
    return _KEY_IN_PATH.sub(lambda m: m.group(1) + mask(m.group(2)), text)
