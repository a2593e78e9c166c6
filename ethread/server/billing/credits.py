"""What each call costs, and admission of a request against a key's balance and rate.

Prices are the method table's (docs/server.md, "Credits"); any other method costs
:data:`DEFAULT_COST`, an invalid call nothing. Balances are per key per UTC day, in a shared
:class:`Ledger` whose check and debit are one atomic step: concurrent requests never overspend,
and a refused request is not charged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ...codec.envelope import Call
from ...errors import EthreadError
from ...rpc.row import DEFAULT_PRICE
from ...rpc.table import TABLE
from .ledger import (
    DAILY_LIMIT_REACHED,
    LEDGER_UNAVAILABLE,
    RATE_LIMIT_EXCEEDED,
    Charge,
    Ledger,
    LedgerUnavailable,
    Refusal,
    ledger_engine,
    unavailable,
)

if TYPE_CHECKING:
    from ..metrics import Metrics

CREDITS: dict[str, int] = {name: row.price for name, row in TABLE.items()}
"""Each method's price, as its row in the method table declares it
(:attr:`ethread.rpc.row.Method.price`)."""
DEFAULT_COST = DEFAULT_PRICE
REFUSAL_REASONS = {DAILY_LIMIT_REACHED: "daily_limit", RATE_LIMIT_EXCEEDED: "rate_limit",
                   LEDGER_UNAVAILABLE: "ledger_unavailable"}
"""The metrics' name of each ledger refusal."""
REPORT_EVERY_SECONDS = 10
"""A failing ledger is logged at most this often (each refused request would flood the log)."""
_log = logging.getLogger(__name__)


def cost_of(method: str) -> int:
    """The credits one call of ``method`` costs."""
    return CREDITS.get(method, DEFAULT_COST)


def request_cost(calls: Sequence[Call | EthreadError]) -> tuple[int, int]:
    """What a request of ``calls`` costs, and what the key's rate bucket must hold to admit it:
    every call of a batch counts against the rate but one, so that a request leaves the key in
    debt by at most one call, whatever its size."""
    if len(calls) == 1:  # most requests: spare the lists
        call = calls[0]
        return (cost_of(call.method) if isinstance(call, Call) else 0), 0
    costs = [cost_of(c.method) for c in calls if isinstance(c, Call)]
    cost = sum(costs)
    return cost, (cost - max(costs) if costs else 0)


def open_ledger(spec: str) -> Ledger:
    """The ledger ``spec`` names (see :func:`~.ledger.ledger_engine`): ``redis://HOST:PORT/DB``
    (or ``rediss://``), a memory-mapped ``*.ledger`` file, else a SQLite file path or
    ``:memory:``. Raises :class:`~.ledger.LedgerError` when it cannot be used."""
    engine = ledger_engine(spec)
    if engine == "redis":
        from .ledger_redis import RedisLedger

        return RedisLedger(spec)
    if engine == "mapped":
        from .ledger_mapped import MappedLedger

        _warn_of_a_sqlite_ledger_beside(Path(spec))
        return MappedLedger(spec)
    from .ledger_sqlite import SQLiteLedger

    return SQLiteLedger(spec)


def _warn_of_a_sqlite_ledger_beside(path: Path) -> None:
    """A new ``X.ledger`` next to an ``X.sqlite3`` is most likely a server that used the SQLite
    ledger (the default before the mapped one) and now starts from full balances: say so."""
    old = path.with_suffix(".sqlite3")
    if not path.exists() and old.exists():
        _log.warning(
            "starting a new credit ledger %s with every balance full; the SQLite ledger %s "
            "beside it is not read (pass --ledger %s to keep using it)", path, old, old)


class Billing:
    """Admission of a request for a key: the rate limit and the daily balance, one atomic
    charge on the ledger. A ledger that fails mid-request refuses the request (the service
    does not give away work it cannot account for)."""

    def __init__(self, ledger: Ledger, metrics: Metrics | None = None) -> None:
        self.ledger = ledger
        self.metrics = metrics
        """Where the ledger's latency, failures, charges and refusals are counted (None:
        nowhere, and nothing is timed)."""
        self._quiet_until = 0.0

    def charge(self, key_id: str, daily_limit: int, rate: float | None, cost: int,
               need: int = 0) -> Refusal | None:
        """Charge ``cost`` credits to a key on the ledger; the refusal (rate limit, daily limit,
        ledger unavailable) or None when admitted."""
        metrics = self.metrics
        started = time.perf_counter() if metrics is not None else 0.0
        failed = False
        try:
            refusal = self.ledger.charge(key_id, daily_limit, rate, cost, need)
        except LedgerUnavailable as exc:
            self._failed(exc)
            failed = True
            refusal = unavailable()
        if metrics is not None:
            metrics.ledger(time.perf_counter() - started, failed)
            self._count(metrics, refusal, cost)
        return refusal

    def charge_many(self, charges: Sequence[Charge]) -> list[Refusal | None]:
        """:meth:`charge` for several requests in one ledger transaction; a ledger that fails
        refuses every one of them."""
        metrics = self.metrics
        started = time.perf_counter() if metrics is not None else 0.0
        failed = False
        try:
            outcomes = self.ledger.charge_many(charges)
        except LedgerUnavailable as exc:
            self._failed(exc)
            failed = True
            outcomes = [unavailable()] * len(charges)
        if metrics is not None:
            metrics.ledger(time.perf_counter() - started, failed)
            for refusal, charge in zip(outcomes, charges, strict=True):
                self._count(metrics, refusal, charge[3])
        return outcomes

    def refund(self, key_id: str, cost: int) -> None:
        """Give ``cost`` credits back to a key (:meth:`Ledger.refund`): its request was charged
        but its answer could not be sent. A ledger that fails keeps them (logged, as a failed
        charge is): the refund is not worth holding a closing connection for."""
        try:
            self.ledger.refund(key_id, cost)
        except LedgerUnavailable as exc:
            self._failed(exc)
            return
        if self.metrics is not None:
            self.metrics.refunded(cost)

    @staticmethod
    def _count(metrics: Metrics, refusal: Refusal | None, cost: int) -> None:
        if refusal is None:
            metrics.charged(cost)
        else:
            metrics.refused(REFUSAL_REASONS.get(refusal.reason, "other"))

    def _failed(self, exc: LedgerUnavailable) -> None:
        """Tell the operator the ledger failed (at most every :data:`REPORT_EVERY_SECONDS`):
        meanwhile every request is refused with 503."""
        now = time.monotonic()
        if now >= self._quiet_until:
            self._quiet_until = now + REPORT_EVERY_SECONDS
            _log.error("%s: requests are refused with 503 until it answers (said at most "
                       "every %d s)", exc, REPORT_EVERY_SECONDS)
