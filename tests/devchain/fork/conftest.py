"""Fixtures the fork's tests share: a node in this process (see
:mod:`tests.support.inprocess_node`) and the demo chain served over HTTP on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.inprocess_node import NodeChain
from tests.support.server_harness import KEY, demo_network, serve_in_thread


@pytest.fixture(scope="module")
def node_chain() -> NodeChain:
    return NodeChain()


@pytest.fixture(scope="module")
def remote() -> Iterator[str]:
    """The demo chain served over HTTP on loopback: the node forked."""
    with serve_in_thread(networks=[demo_network()]) as thread:
        yield f"http://127.0.0.1:{thread.port}/v3/{KEY}"
