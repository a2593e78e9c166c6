"""What a credit ledger is: the protocol both engines implement, their errors, and the
arithmetic of days and rate buckets they share.

The engines are :mod:`.ledger_mapped` (a memory-mapped file, ``*.ledger``: the processes of
one machine, the default), :mod:`.ledger_sqlite` (any other path, or ``:memory:``) and
:mod:`.ledger_redis` (``redis://``: a fleet); :func:`ethread.server.billing.credits.open_ledger` picks
one from the ``ledger`` setting with :func:`ledger_engine`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol
from urllib.parse import urlsplit

DAILY_LIMIT_REACHED = "daily credit limit reached"
RATE_LIMIT_EXCEEDED = "rate limit exceeded"
LEDGER_UNAVAILABLE = "credit ledger unavailable"
REDIS_SCHEMES = ("redis", "rediss")
MAPPED_SUFFIX = ".ledger"


def utc_day(now: float) -> str:
    """The UTC date (YYYY-MM-DD) the usage at ``now`` counts against."""
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d")


def next_midnight(now: float) -> float:
    """The Unix time of the next 00:00 UTC, when every balance is full again."""
    moment = datetime.fromtimestamp(now, UTC)
    midnight = (moment + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight.timestamp()


def seconds_to_reset(now: float) -> int:
    """Seconds until the daily balances reset (next UTC midnight), at least 1."""
    return max(1, math.ceil(next_midnight(now) - now))


def is_redis_url(spec: str) -> bool:
    """Whether a ledger spec names a Redis server (``redis://`` and the like) rather than a file.
    """
    return spec.split("://", 1)[0].lower() in REDIS_SCHEMES and "://" in spec


def ledger_engine(spec: str) -> str:
    """Which engine a ledger spec names: ``"redis"`` for ``redis://`` (or ``rediss://``),
    ``"mapped"`` for a path ending in ``.ledger``, else ``"sqlite"`` (``*.sqlite3`` or any other
    path, and ``:memory:``)."""
    if is_redis_url(spec):
        return "redis"
    if spec.lower().endswith(MAPPED_SUFFIX) and spec != MAPPED_SUFFIX:
        return "mapped"
    return "sqlite"


class LedgerError(RuntimeError):
    """The ledger cannot be opened or reached at start (a bad file, no Redis server)."""


class LedgerUnavailable(LedgerError):
    """The ledger failed while debiting (locked too long, Redis gone): the request is refused
    rather than served unpaid."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request was not admitted, and when trying again can succeed."""

    reason: str
    retry_after: int


Charge = tuple[str, int, "float | None", int, int]
"""One request's charge: key id, daily limit, rate (None: no rate limit), cost, need (the
arguments of :meth:`Ledger.charge`)."""


class Ledger(Protocol):
    """Daily usage and per-second buckets per key id, shared by whoever opens the same one."""

    def charge(self, key_id: str, daily_limit: int, rate: float | None, cost: int,
               need: int = 0) -> Refusal | None:
        """Take ``cost`` if the key's rate bucket holds at least ``need`` (0: it is not in
        debt) and today's usage stays within ``daily_limit``, atomically; otherwise take
        nothing and say why. A batch needs its cost but for its dearest call, so that one
        request can leave a key in debt by at most one call, whatever its size."""

    def charge_many(self, charges: Sequence[Charge]) -> list[Refusal | None]:
        """:meth:`charge` for each of ``charges`` in order, as one transaction of the ledger
        (one lock, one round trip), each one seeing those before it. A ledger that fails
        part-way refuses the rest with :data:`LEDGER_UNAVAILABLE`; one that cannot tell which
        were taken raises :class:`LedgerUnavailable` (the caller refuses them all: a debit may
        then have been taken for a request that is not answered, never the reverse)."""

    def refund(self, key_id: str, cost: int) -> None:
        """Give back ``cost`` credits of today's usage (never below zero): a charged request
        whose answer could not be sent (its client left first). The rate bucket keeps what it
        took; a refund just after midnight UTC lands on the new day, at most the cost of the
        requests in flight then."""

    def used(self, key_id: str) -> int:
        """Credits the key has spent today (UTC)."""

    def close(self) -> None:
        """Release the ledger's connection or file."""
        ...


def unavailable() -> Refusal:
    """The refusal of a request the ledger failed to charge."""
    return Refusal(LEDGER_UNAVAILABLE, 1)


def rate_level(tokens: float, at: float, rate: float, now: float) -> float:
    """A bucket of ``rate`` credits per second, last seen holding ``tokens`` at ``at``: what
    it holds ``now``. It may be negative (a key in debt after one dear call)."""
    return min(rate, tokens + max(0.0, now - at) * rate)


def rate_refusal(short: float, rate: float) -> Refusal:
    """Refused for the rate: the bucket is ``-short`` credits short of what was needed."""
    return Refusal(RATE_LIMIT_EXCEEDED, max(1, math.ceil(-short / rate)))


def shown_ledger(spec: str) -> str:
    """The ledger as it may be printed: a Redis URL without its password."""
    parts = urlsplit(spec)
    if not is_redis_url(spec) or parts.password is None:
        return spec
    netloc = f"{parts.username or ''}:***@{parts.hostname}"
    if parts.port is not None:
        netloc += f":{parts.port}"
    return parts._replace(netloc=netloc).geturl()


def check_redis_url(url: str) -> str | None:
    """What is wrong with a ``redis://HOST:PORT/DB`` address, or None when it is usable."""
    parts = urlsplit(url)
    if not parts.hostname:
        return "a Redis ledger needs a host: redis://HOST:PORT/DB"
    try:
        _ = parts.port
    except ValueError:
        return "the port of the Redis ledger is not a port number"
    database = parts.path.strip("/")
    if database and not database.isdigit():
        return "the database of a Redis ledger is a number: redis://HOST:PORT/DB"
    return None
