"""``/metrics``: the service in the Prometheus text format, summed over every worker
(docs/server.md, "Metrics", lists them).

prometheus-client's multiprocess mode keeps each process's values in memory-mapped files of one
directory, so any worker's scrape reads them all. Counts are dictionary increments, written to
the files every :data:`FLUSH_SECONDS` and before each scrape. Labels are bounded: ``method`` is a
priced method or ``other``, ``batch``, ``invalid``.
"""

from __future__ import annotations

import bisect
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ENVIRONMENT = "PROMETHEUS_MULTIPROC_DIR"
FLUSH_SECONDS = 0.5
LATENCY_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                   0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
LEDGER_BUCKETS = (0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                  0.01, 0.05, 0.25, 1.0)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def make_directory() -> str:
    """A fresh directory for the metric files, named in the environment for forked workers."""
    directory = tempfile.mkdtemp(prefix="ethread-metrics-")
    use_directory(directory)
    return directory


def use_directory(directory: str) -> None:
    """Write this process's metrics under ``directory`` (prometheus-client reads the variable
    when it is imported; a copy imported before is switched over)."""
    os.environ[ENVIRONMENT] = directory
    import prometheus_client.values as values

    if not getattr(values.ValueClass, "_multiprocess", False):
        values.ValueClass = values.MultiProcessValue()  # type: ignore[no-untyped-call]


def remove_directory(directory: str | Path | None) -> None:
    """Remove a directory the server made for itself (metrics, shared answers) once stopped."""
    if directory:
        shutil.rmtree(directory, ignore_errors=True)


class _Histogram:
    """Observations of one labelled histogram, waiting to be written."""

    __slots__ = ("counts", "total")

    def __init__(self, size: int) -> None:
        self.counts = [0] * size
        self.total = 0.0


class Metrics:
    """The metrics of one process, and its pending increments."""

    def __init__(self, directory: str) -> None:
        use_directory(directory)
        from prometheus_client import Counter, Histogram

        self.directory = directory
        none: Any = None
        self.requests = Counter("ethread_requests", "JSON-RPC requests (HTTP bodies and "
                                "WebSocket messages) by network, method and outcome (ok, error: "
                                "answered with a JSON-RPC error, refused: by the transport)",
                                ("network", "method", "outcome"), registry=none)
        self.latency = Histogram("ethread_request_duration_seconds",
                                 "time from a request's headers to its answer",
                                 ("network", "method"), buckets=LATENCY_BUCKETS, registry=none)
        self.credits = Counter("ethread_credits_charged", "credits charged to keys",
                               registry=none)
        self.refunds = Counter("ethread_credits_refunded", "credits given back for answers "
                               "that could not be sent (the client left first)", registry=none)
        self.refusals = Counter("ethread_refusals", "requests refused, by reason",
                                ("reason",), registry=none)
        self.ledger_latency = Histogram("ethread_ledger_seconds",
                                        "time of one ledger transaction (a charge, or a "
                                        "turn's charges)", buckets=LEDGER_BUCKETS,
                                        registry=none)
        self.ledger_failures = Counter("ethread_ledger_failures",
                                       "ledger transactions that failed", registry=none)
        self.cache_hits = Counter("ethread_answer_cache_hits",
                                  "answers served from a cache, by network and cache "
                                  "(calls: the dispatcher's; bodies: whole request bodies)",
                                  ("network", "cache"), registry=none)
        self.keystore_failures = Counter("ethread_keystore_failures",
                                         "failed reads or writes of the key store",
                                         registry=none)
        self._requests: dict[tuple[str, str, str], int] = {}
        self._latency: dict[tuple[str, str], _Histogram] = {}
        self._refusals: dict[str, int] = {}
        self._ledger = _Histogram(len(LEDGER_BUCKETS) + 1)
        self._ledger_failures = 0
        self._credits = 0
        self._refunded = 0
        self._hits: dict[tuple[str, str], list[int]] = {}

    # -- the hot path: plain increments -------------------------------------------------------

    def request(self, network: str, method: str, outcome: str, seconds: float) -> None:
        """One request answered."""
        key = (network, method, outcome)
        pending = self._requests
        pending[key] = pending.get(key, 0) + 1
        if seconds > 0:
            slot = (network, method)
            histogram = self._latency.get(slot)
            if histogram is None:
                histogram = self._latency[slot] = _Histogram(len(LATENCY_BUCKETS) + 1)
            histogram.counts[bisect.bisect_left(LATENCY_BUCKETS, seconds)] += 1
            histogram.total += seconds

    def refused(self, reason: str) -> None:
        """One request refused for ``reason``."""
        self._refusals[reason] = self._refusals.get(reason, 0) + 1

    def charged(self, credits: int) -> None:
        """Credits taken from a key."""
        self._credits += credits

    def refunded(self, credits: int) -> None:
        """Credits given back to a key."""
        self._refunded += credits

    def ledger(self, seconds: float, failed: bool) -> None:
        """One ledger transaction."""
        self._ledger.counts[bisect.bisect_left(LEDGER_BUCKETS, seconds)] += 1
        self._ledger.total += seconds
        if failed:
            self._ledger_failures += 1

    def hit_counter(self, network: str, cache: str) -> list[int]:
        """The one-element counter a cache's hits are added to."""
        return self._hits.setdefault((network, cache), [0])

    # -- flushing into the shared files -------------------------------------------------------

    def flush(self) -> None:
        """Write the pending increments into this process's metric files."""
        requests, self._requests = self._requests, {}
        for labels, n in requests.items():
            self.requests.labels(*labels).inc(n)
        latency, self._latency = self._latency, {}
        for (network, method), histogram in latency.items():
            _add(self.latency.labels(network, method), histogram)
        refusals, self._refusals = self._refusals, {}
        for reason, n in refusals.items():
            self.refusals.labels(reason).inc(n)
        if self._credits:
            credits, self._credits = self._credits, 0
            self.credits.inc(credits)
        if self._refunded:
            refunded, self._refunded = self._refunded, 0
            self.refunds.inc(refunded)
        ledger, self._ledger = self._ledger, _Histogram(len(LEDGER_BUCKETS) + 1)
        if any(ledger.counts):
            _add(self.ledger_latency, ledger)
        if self._ledger_failures:
            failures, self._ledger_failures = self._ledger_failures, 0
            self.ledger_failures.inc(failures)
        for (network, cache), counter in self._hits.items():
            if counter[0]:
                count, counter[0] = counter[0], 0
                self.cache_hits.labels(network, cache).inc(count)

    def scrape(self, live: Callable[[], Iterator[Any]]) -> bytes:
        """The text format of every process's metrics, plus ``live``'s (read now). The
        caller flushes first, on the thread that counts."""
        from prometheus_client import CollectorRegistry, generate_latest
        from prometheus_client.multiprocess import MultiProcessCollector

        registry = CollectorRegistry(auto_describe=False)
        MultiProcessCollector(registry, path=self.directory)  # type: ignore[no-untyped-call]
        registry.register(_Live(live))
        return bytes(generate_latest(registry))


def _add(child: Any, histogram: _Histogram) -> None:
    """Add a batch of observations to a prometheus-client histogram, as ``observe`` does one
    at a time."""
    buckets = child._buckets
    for index, n in enumerate(histogram.counts):
        if n:
            buckets[index].inc(n)
    child._sum.inc(histogram.total)


class _Live:
    """A collector of what is read at scrape time (gauges of this worker's view)."""

    def __init__(self, live: Callable[[], Iterator[Any]]) -> None:
        self._live = live

    def collect(self) -> Iterator[Any]:
        return self._live()


def gauge(name: str, help_text: str, values: dict[tuple[str, ...], float],
          labels: tuple[str, ...] = ()) -> Any:
    """A gauge family read at scrape time."""
    from prometheus_client.core import GaugeMetricFamily

    family = GaugeMetricFamily(name, help_text, labels=list(labels))
    for label_values, value in values.items():
        family.add_metric(list(label_values), value)
    return family


def worker_restarts(directory: str) -> Any:
    """The supervisor's counter of workers it replaced."""
    use_directory(directory)
    from prometheus_client import Counter

    return Counter("ethread_worker_restarts", "workers replaced after they exited or were "
                   "killed", registry=None)


def count_hits(getter: Callable[..., Any], counter: list[int]) -> Callable[..., Any]:
    """``getter`` (a cache's ``get``), adding each hit to ``counter[0]``."""

    def get(*args: Any) -> Any:
        found = getter(*args)
        if found is not None:
            counter[0] += 1
        return found

    return get
