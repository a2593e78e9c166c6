"""What the frames tests share: the rpc-compat chain in every store the bulk path reads."""

from __future__ import annotations

from typing import Any

import pytest

from ethread.backends.era import EraBackend
from ethread.backends.memory import MemoryBackend
from ethread.chain.importer import import_chain
from ethread.era1.ere_export import export_ere
from ethread.era1.export import export_era1
from tests.support.paths import conformance_dir
from tests.support.storage_backends import lmdb_from


@pytest.fixture(scope="package")
def compat(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The rpc-compat chain (every transaction type, uncles, withdrawals, blobs, set-code, the
    merge) in memory, LMDB, Era1 (its proof-of-work part) and ere."""
    folder = conformance_dir() / "rpc-compat"
    memory = MemoryBackend()
    import_chain(memory, folder / "genesis.json", folder / "chain.rlp", verify_seals=False)
    base = tmp_path_factory.mktemp("compat-frames")
    export_era1(memory, base / "era1", network="devnet")
    export_ere(memory, base / "ere", network="devnet")
    config = memory.chain_config()
    return {"memory": memory, "lmdb": lmdb_from(memory, base / "lmdb"),
            "era1": EraBackend(base / "era1", config=config),
            "ere": EraBackend(base / "ere", config=config)}
