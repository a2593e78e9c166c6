"""Fixtures the server's tests share."""

from __future__ import annotations

from pathlib import Path

import pytest

from ethread.server.metrics import ENVIRONMENT, Metrics


@pytest.fixture
def metrics(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Metrics:
    """A process's metrics in a directory of their own. prometheus-client keeps one set of
    files per process, opened in the first directory it was given; this fixture gives it a
    fresh set for the test (and puts back the process's own afterwards)."""
    import prometheus_client.values as values

    directory = tmp_path / "metrics"
    directory.mkdir()
    monkeypatch.setenv(ENVIRONMENT, str(directory))
    monkeypatch.setattr(values, "ValueClass", values.MultiProcessValue())
    return Metrics(str(directory))
