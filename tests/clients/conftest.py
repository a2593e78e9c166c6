"""Fixtures the client tests share: a server over the demo chain while it grows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.server_harness import demo_network, serve_in_thread


@pytest.fixture(scope="module")
def growing_server() -> Iterator[Any]:
    """A server in a thread over the demo chain, which mines a block every 0.3 s."""
    with serve_in_thread(networks=[demo_network(block_time=0.3)]) as thread:
        yield thread
