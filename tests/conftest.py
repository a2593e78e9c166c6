"""Shared fixtures: the rpc-compat and Osaka chains in memory, and a real redis-server; and the
check that a test using a fixture that starts a peer carries that peer's marker."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import ethread
from tests.support.paths import conformance_dir
from tests.support.redis_server import RedisServer

# What ethread keeps for a user when no path is named (credit ledgers, Era indexes:
# ethread.home) goes to a folder of this test session, never the user's own: set before any
# test runs, so that the servers and commands the tests start inherit it.
os.environ["ETHREAD_HOME"] = tempfile.mkdtemp(prefix="ethread-home-")


@pytest.fixture(scope="session")
def rpc_compat_dir() -> Path:
    return conformance_dir() / "rpc-compat"


@pytest.fixture(scope="session")
def rpc_compat_memory(rpc_compat_dir: Path) -> ethread.MemoryBackend:
    """The rpc-compat chain imported into memory, shared by the tests that only read it."""
    backend = ethread.MemoryBackend()
    ethread.import_chain(backend, rpc_compat_dir / "genesis.json", rpc_compat_dir / "chain.rlp",
                         verify_seals=False)
    return backend


@pytest.fixture(scope="session")
def osaka_memory() -> ethread.MemoryBackend:
    """Today's execution-apis chain (``osaka/``: through Osaka, BPO1 and BPO2) imported into
    memory, shared by the tests that only read it."""
    osaka = conformance_dir() / "osaka"
    backend = ethread.MemoryBackend()
    ethread.import_chain(backend, osaka / "genesis.json", osaka / "chain.rlp", verify_seals=False)
    return backend


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """One real redis-server for the session (see ``tests/support/redis_server.py``)."""
    server = RedisServer().start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The session's Redis, emptied for this test."""
    assert redis_server.command("FLUSHALL").startswith(b"+OK")
    return redis_server.url


NEEDS = {"redis_server": "redis", "redis_url": "redis", "traced": "anvil", "anvil": "anvil"}
"""Fixtures that start something outside the virtualenv -> the marker their tests carry."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Refuse a test that uses a fixture of :data:`NEEDS` without its marker, so that
    ``-m "not redis"`` (say) leaves out every test that would start redis-server."""
    missing = [f"{item.nodeid} uses {name} but is not marked {mark}"
               for item in items for name, mark in NEEDS.items()
               if name in getattr(item, "fixturenames", ()) and item.get_closest_marker(mark) is None]
    if missing:
        raise pytest.UsageError("\n".join(missing))
