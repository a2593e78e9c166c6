"""Transaction and uncle counts (``ethread.methods.counts``) by hash and by number."""

from __future__ import annotations

import ethread
from ethread import methods
from tests.support.rpc_cases import result


def test_counts(rpc_compat_memory: ethread.MemoryBackend) -> None:
    for number in range(46):
        block = methods.get_block_by_number(rpc_compat_memory, number)
        assert block is not None
        by_hash = "0x" + block.hash.hex()
        assert result(rpc_compat_memory, "eth_getBlockTransactionCountByNumber", hex(number)) == \
            hex(len(block.transactions))
        assert result(rpc_compat_memory, "eth_getBlockTransactionCountByHash", by_hash) == \
            hex(len(block.transactions))
        assert result(rpc_compat_memory, "eth_getUncleCountByBlockNumber", hex(number)) == hex(len(block.uncles))
        assert result(rpc_compat_memory, "eth_getUncleCountByBlockHash", by_hash) == hex(len(block.uncles))
    uncles = sum(int(result(rpc_compat_memory, "eth_getUncleCountByBlockNumber", hex(n)), 16) for n in range(46))
    assert uncles == 19  # the chain's README counts them
    for method in ("eth_getBlockTransactionCountByNumber", "eth_getUncleCountByBlockNumber"):
        assert result(rpc_compat_memory, method, "0x3e8") is None
    for method in ("eth_getBlockTransactionCountByHash", "eth_getUncleCountByBlockHash"):
        assert result(rpc_compat_memory, method, "0x" + "ab" * 32) is None
