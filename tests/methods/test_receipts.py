"""Receipts (``ethread.methods.receipts``): every transaction has its receipt, the same by hash and
in its block's, and the receipts root recomputed from them is the header's."""

from __future__ import annotations

import ethread
from ethread import methods
from ethread.models import LogFilter
from tests.support.rpc_cases import result


def test_every_transaction_has_its_receipt(rpc_compat_memory: ethread.MemoryBackend) -> None:
    shapes = set()
    for number in range(46):
        block = methods.get_block_by_number(rpc_compat_memory, number)
        receipts = methods.get_block_receipts(rpc_compat_memory, number)
        assert block is not None and receipts is not None
        for itx, receipt in zip(block.transactions, receipts, strict=True):
            assert methods.get_transaction_receipt(rpc_compat_memory, itx.hash) == receipt
            answer = result(rpc_compat_memory, "eth_getTransactionReceipt", "0x" + itx.hash.hex())
            shapes.add((answer["type"], "root" in answer, "status" in answer, "blobGasUsed" in answer))
    # pre-Byzantium roots, typed receipts with status, blob fields on blob transactions only
    assert ("0x0", True, False, False) in shapes
    assert ("0x2", False, True, False) in shapes
    assert ("0x3", False, True, True) in shapes
    assert ("0x4", False, True, False) in shapes
    assert all(not blob for kind, _, _, blob in shapes if kind != "0x3")
    assert result(rpc_compat_memory, "eth_getTransactionReceipt", "0x" + "ab" * 32) is None


def test_receipts_match_blocks(rpc_compat_memory: ethread.MemoryBackend) -> None:
    total_logs = 0
    for number in range(46):
        block = methods.get_block_by_number(rpc_compat_memory, number)
        receipts = methods.get_block_receipts(rpc_compat_memory, number)
        assert block is not None and receipts is not None
        assert [r.transaction_hash for r in receipts] == [t.hash for t in block.transactions]
        assert sum(r.gas_used for r in receipts) == block.header.gas_used
        index = 0
        for receipt in receipts:
            for log in receipt.logs:
                assert log.log_index == index
                assert log.block_timestamp == block.header.timestamp
                index += 1
        total_logs += index
        # Before Byzantium (block 9) receipts carry a state root, after it a status.
        for receipt in receipts:
            assert (receipt.root is not None) == (number < 9)
            assert (receipt.status is not None) == (number >= 9)
    logs = methods.get_logs(rpc_compat_memory, LogFilter(from_block="earliest", to_block="latest"))
    assert len(logs) == total_logs > 0
