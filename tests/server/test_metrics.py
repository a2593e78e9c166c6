"""server/metrics.py: a process's counts are plain increments until flushed into its metric
files; a scrape reads every process's files (a second process's counts add up with this
one's) and the gauges read when it comes; latencies land in their buckets; cache hits are
counted by the getter wrapper; the supervisor's restart counter and the directory's life."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ethread.server import metrics as metrics_module
from ethread.server.metrics import (
    ENVIRONMENT,
    LATENCY_BUCKETS,
    Metrics,
    count_hits,
    gauge,
    remove_directory,
)
from tests.support.billing import scraped


def test_counts_wait_for_the_flush_then_add_up(metrics: Metrics) -> None:
    metrics.request("main", "eth_call", "ok", 0.0003)
    metrics.request("main", "eth_call", "ok", 0.003)
    metrics.request("main", "batch", "error", 0.0)
    metrics.refused("rate_limit")
    metrics.charged(80)
    metrics.charged(80)
    metrics.refunded(5)
    metrics.ledger(0.00002, False)
    metrics.ledger(0.3, True)
    assert scraped(metrics)["ethread_credits_charged_total"] == 0, "nothing before the flush"
    metrics.flush()
    seen = scraped(metrics)
    assert seen['ethread_requests_total{method="eth_call",network="main",outcome="ok"}'] == 2
    assert seen['ethread_requests_total{method="batch",network="main",outcome="error"}'] == 1
    assert seen['ethread_refusals_total{reason="rate_limit"}'] == 1
    assert seen["ethread_credits_charged_total"] == 160
    assert seen["ethread_credits_refunded_total"] == 5
    assert seen["ethread_ledger_failures_total"] == 1 and seen["ethread_ledger_seconds_count"] == 2
    buckets = {float(name.split('le="')[1].split('"')[0]): value for name, value in seen.items()
               if name.startswith("ethread_request_duration_seconds_bucket{") and "eth_call" in name
               and "+Inf" not in name}
    assert sorted(buckets) == list(LATENCY_BUCKETS)
    assert buckets[0.00025] == 0 and buckets[0.0005] == 1 and buckets[0.0025] == 1
    assert buckets[0.005] == 2 and buckets[10.0] == 2  # cumulative, as Prometheus has it
    assert seen['ethread_request_duration_seconds_sum{method="eth_call",network="main"}'] == \
        pytest.approx(0.0033)
    # a request answered with no time measured adds no latency
    assert not any("batch" in name for name in seen if name.startswith("ethread_request_dur"))
    metrics.flush()  # nothing pending: nothing added twice
    assert scraped(metrics)["ethread_credits_charged_total"] == 160


def test_a_scrape_sums_every_processs_files(metrics: Metrics) -> None:
    metrics.charged(7)
    metrics.flush()
    child = textwrap.dedent(f"""
        from ethread.server.metrics import Metrics
        metrics = Metrics({metrics.directory!r})
        metrics.charged(35)
        metrics.request("main", "eth_call", "ok", 0.001)
        metrics.flush()
    """)
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60,
                          env={**os.environ, ENVIRONMENT: metrics.directory})
    assert done.returncode == 0, done.stderr
    seen = scraped(metrics)
    assert seen["ethread_credits_charged_total"] == 42
    assert seen['ethread_requests_total{method="eth_call",network="main",outcome="ok"}'] == 1


def test_gauges_are_read_when_the_scrape_comes(metrics: Metrics) -> None:
    workers = {"up": 2.0}
    live = lambda: iter([gauge("ethread_workers_up", "workers serving", {(): workers["up"]}),  # noqa: E731
                         gauge("ethread_store_ok", "store health", {("main",): 1.0}, ("network",))])
    assert metrics.scrape(live).decode().count("ethread_workers_up 2.0") == 1
    workers["up"] = 1.0
    text = metrics.scrape(live).decode()
    assert "ethread_workers_up 1.0" in text and 'ethread_store_ok{network="main"} 1.0' in text


def test_cache_hits_are_counted_by_the_getter(metrics: Metrics) -> None:
    cache = {"a": 1}
    counter = metrics.hit_counter("main", "calls")
    get = count_hits(cache.get, counter)
    assert [get("a"), get("b"), get("a")] == [1, None, 1]
    assert counter == [2] and metrics.hit_counter("main", "calls") is counter
    metrics.flush()
    assert counter == [0]
    assert scraped(metrics)['ethread_answer_cache_hits_total{cache="calls",network="main"}'] == 2


def test_the_supervisors_restarts_and_the_directorys_life(metrics: Metrics, tmp_path: Path) -> None:
    restarts = metrics_module.worker_restarts(metrics.directory)
    restarts.inc()
    assert scraped(metrics)["ethread_worker_restarts_total"] == 1
    remove_directory(None)  # no metrics: nothing to remove
    gone = tmp_path / "gone"
    gone.mkdir()
    (gone / "counter_1.db").write_bytes(b"")
    remove_directory(str(gone))
    assert not gone.exists()
