"""Fixtures the RPC surface's tests share."""

from __future__ import annotations

import pytest

import ethread
from ethread.devchain import DevChain


@pytest.fixture
def chain() -> DevChain:
    """A fresh dev chain (the newest fork) with three funded accounts."""
    return DevChain(ethread.MemoryBackend(), accounts=3)
