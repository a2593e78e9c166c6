"""Each worker's link with the key store: new and revoked keys in, usage counts out.

A task polls the store's change counter every :data:`~.keystore.POLL_SECONDS` and reloads
the keys when it moved; every :data:`~.keystore.FLUSH_SECONDS` it sends the usage counts and
flushes the metrics. A failing store leaves the keys as they were (reported at most every
:data:`REPORT_EVERY` seconds) and keeps up to :data:`MAX_PENDING_COUNTS` counts for the next try.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable

from ..billing.ledger import utc_day
from ..execution import Execution
from ..observe import Observer
from .auth import KeyRing
from .keystore import FLUSH_SECONDS, POLL_SECONDS, KeyStore

log = logging.getLogger("ethread.server")

REPORT_EVERY = 10.0
MAX_PENDING_COUNTS = 100_000


class KeySync:
    """Keeps a worker's :class:`KeyRing` in step with the store and writes its counts."""

    def __init__(self, store: KeyStore, ring: KeyRing, observer: Observer) -> None:
        self.store = store
        self.ring = ring
        self.observer = observer
        self.version = -1
        self._unsent: dict[tuple[str, str, str], int] = {}
        self._quiet_until = 0.0
        self._loading = threading.Lock()
        """One reload at a time, so an older read never replaces a newer one."""

    def load(self) -> None:
        """Read the keys if the store's counter moved."""
        with self._loading:
            version = self.store.version()
            if version != self.version:
                self.ring.update(self.store.records())
                self.version = version

    def take(self) -> dict[tuple[str, str, str], int]:
        """The counts to send, those a failed send left included (on the loop's thread)."""
        counts = self.observer.take_usage()
        if self._unsent:
            for slot, n in self._unsent.items():
                counts[slot] = counts.get(slot, 0) + n
            self._unsent = {}
        return counts

    def send(self, counts: dict[tuple[str, str, str], int]) -> None:
        """Add ``counts`` to the store (in a thread); kept for the next try if it fails."""
        if not counts:
            return
        try:
            self.store.add_usage(utc_day(time.time()), counts)
        except Exception:
            if len(counts) <= MAX_PENDING_COUNTS:
                self._unsent = counts
            raise

    async def run(self, execution: Execution,
                  after_poll: Callable[[], None] | None = None) -> None:
        """Poll and flush until cancelled; ``after_poll`` runs on the loop after each poll (the
        service ends what revoked keys still hold open there)."""
        next_flush = time.monotonic() + FLUSH_SECONDS
        while True:
            await asyncio.sleep(POLL_SECONDS)
            try:
                await execution.blocking(self.load)
                if after_poll is not None:
                    after_poll()
                if time.monotonic() >= next_flush:
                    next_flush = time.monotonic() + FLUSH_SECONDS
                    self._flush_metrics()
                    await execution.blocking(self.send, self.take())
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._failed(exc)

    def close(self) -> None:
        """The last counts out, then the store closed."""
        try:
            self._flush_metrics()
            self.send(self.take())
        except Exception as exc:
            self._failed(exc)
        self.store.close()

    def _flush_metrics(self) -> None:
        if self.observer.metrics is not None:
            self.observer.metrics.flush()

    def _failed(self, exc: Exception) -> None:
        metrics = self.observer.metrics
        if metrics is not None:
            metrics.keystore_failures.inc()
        now = time.monotonic()
        if now >= self._quiet_until:
            self._quiet_until = now + REPORT_EVERY
            log.error("the key store failed (%s); keys stay as they were until it answers "
                      "(said at most every %.0f s)", exc, REPORT_EVERY)
