"""Each worker's link with the key store: new and revoked keys in, usage counts out.

A task on the worker's event loop asks the store for its change counter every
:data:`~.keystore.POLL_SECONDS` (in the thread pool) and reloads the keys when it moved; every
:data:`~.keystore.FLUSH_SECONDS` it adds the usage counts kept since and writes the pending
metrics. A store that fails leaves the keys as they were and is reported at most every
:data:`REPORT_EVERY` seconds; the counts it could not take are kept for the next try, up to
:data:`MAX_PENDING_COUNTS` of them.
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
        """One reload at a time (the poll's, in a thread, and an admin's, on the loop), so an
        older read never replaces a newer one."""

    def load(self) -> None:
        """Read the keys if the store's counter moved (at start, at each poll, and after an
        issue or a revoke made by this worker)."""
        with self._loading:
            version = self.store.version()
            if version != self.version:
                self.ring.update(self.store.records())
                self.version = version

    def take(self) -> dict[tuple[str, str, str], int]:
        """The counts to send: those kept since the last take, and those a failed send left
        (called on the event loop's thread, where the counts are kept)."""
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
                    metrics = self.observer.metrics
                    if metrics is not None:
                        metrics.flush()
                    await execution.blocking(self.send, self.take())
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._failed(exc)

    def close(self) -> None:
        """The last counts out, then the store closed."""
        try:
            metrics = self.observer.metrics
            if metrics is not None:
                metrics.flush()
            self.send(self.take())
        except Exception as exc:
            self._failed(exc)
        self.store.close()

    def _failed(self, exc: Exception) -> None:
        metrics = self.observer.metrics
        if metrics is not None:
            metrics.keystore_failures.inc()
        now = time.monotonic()
        if now >= self._quiet_until:
            self._quiet_until = now + REPORT_EVERY
            log.error("the key store failed (%s); keys stay as they were until it answers "
                      "(said at most every %.0f s)", exc, REPORT_EVERY)
