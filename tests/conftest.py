"""Shared fixtures: where the conformance data is, and the rpc-compat and Osaka chains in
memory."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import ethread

from .redis_server import RedisServer

REPO = Path(__file__).resolve().parent.parent


def conformance_dir() -> Path:
    """The external conformance data: $ETHREAD_CONFORMANCE, else ../shared/conformance.

    Missing data is an error, not a skip: a suite that silently ran nothing would pass.
    """
    path = Path(os.environ.get("ETHREAD_CONFORMANCE", REPO.parent / "shared" / "conformance"))
    if not (path / "rpc-compat" / "chain.rlp").is_file():
        pytest.fail(f"conformance data not found at {path}; set ETHREAD_CONFORMANCE")
    return path


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
    """One real redis-server for the session (see ``tests/redis_server.py``)."""
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
