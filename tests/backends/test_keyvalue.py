"""The key-value stores' own reads: ``raw_blocks`` slices each block's senders from its stored
record, and must hand out exactly the records the generic path
(:meth:`~ethread.backends.history.CachedHistory._raw_block`, through each block's BlockRecord) reads,
on both engines."""

from __future__ import annotations

from pathlib import Path

import pytest

from ethread.backends.history import CachedHistory
from ethread.backends.memory import MemoryBackend
from ethread.errors import MissingBlocks
from tests.support.storage_backends import leveldb_from, lmdb_from


@pytest.mark.parametrize("engine", ["lmdb", "leveldb"])
def test_raw_blocks_are_the_generic_paths_records(memory: MemoryBackend, tmp_path: Path,
                                                  engine: str) -> None:
    made = lmdb_from if engine == "lmdb" else leveldb_from
    store = made(memory, tmp_path / engine)
    try:
        head = store.pointer("latest")
        assert head is not None and head > 10
        for receipts in (True, False):
            own = list(store.raw_blocks(0, head + 1, receipts=receipts))
            generic = [CachedHistory._raw_block(store, n, store.canonical_hash(n), receipts)
                       for n in range(head + 1)]
            assert own == generic
            assert [raw.number for raw in own] == list(range(head + 1))
        with_txs = [raw for raw in own if raw.senders]
        assert with_txs, "the chain has blocks with transactions"
        for raw in with_txs:
            block_hash = memory.canonical_hash(raw.number)
            block = None if block_hash is None else memory.block_by_hash(block_hash)
            assert block is not None
            assert raw.senders == b"".join(tx.sender for tx in block.transactions)
        with pytest.raises(MissingBlocks):
            list(store.raw_blocks(head, head + 2))
    finally:
        store.close()
