"""eth_capabilities (``ethread.methods.capabilities``): a store of history only serves no state."""

from __future__ import annotations

import json
from pathlib import Path

import ethread
from ethread.methods.capabilities import get_capabilities
from tests.support.storage_backends import era_from


def test_a_store_of_history_only_serves_no_state(rpc_compat_memory: ethread.MemoryBackend,
                                                 tmp_path: Path) -> None:
    era = era_from(rpc_compat_memory, tmp_path / "era")
    try:
        capabilities = get_capabilities(era)
        assert capabilities is not None and capabilities.head_number == 35
        assert capabilities.state.disabled and capabilities.state.oldest_block is None
        assert capabilities.state_proofs == capabilities.state
        assert not capabilities.logs.disabled and capabilities.logs.oldest_block == 0
        answer = json.loads(ethread.handle(  # type: ignore[arg-type]
            era, b'{"jsonrpc":"2.0","id":1,"method":"eth_capabilities"}'))["result"]
        assert answer["state"] == {"disabled": True}
        assert answer["blocks"] == {"disabled": False, "oldestBlock": "0x0"}
    finally:
        era.close()
