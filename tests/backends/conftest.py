"""Fixtures the backends' tests share."""

from __future__ import annotations

from pathlib import Path

import pytest

from ethread.backends.memory import MemoryBackend
from tests.support.storage_backends import leveldb_from


@pytest.fixture(scope="session")
def pristine(rpc_compat_memory: MemoryBackend, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The rpc-compat chain in a compacted LevelDB store: copy it before damaging it."""
    path = tmp_path_factory.mktemp("pristine") / "store"
    backend = leveldb_from(rpc_compat_memory, path)
    backend.compact()
    backend.close()
    return path


@pytest.fixture(scope="session")
def compat(rpc_compat_dir: Path) -> Path:
    """The rpc-compat chain's folder (genesis.json, chain.rlp)."""
    return rpc_compat_dir


@pytest.fixture(scope="session")
def memory(rpc_compat_memory: MemoryBackend) -> MemoryBackend:
    """The rpc-compat chain in memory, the session's (the stores' tests only read it)."""
    return rpc_compat_memory
