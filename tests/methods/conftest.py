"""Fixtures the methods' tests share."""

from __future__ import annotations

import pytest

import ethread
from ethread.devchain import PRAGUE_FORKS, DevChain


@pytest.fixture()
def dev() -> DevChain:
    """A fresh Prague dev chain with one block mined, for a test that chooses every transaction."""
    chain = DevChain(ethread.MemoryBackend(), forks=PRAGUE_FORKS)
    chain.mine()
    return chain
