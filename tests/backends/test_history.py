"""backends/history.py: the one cached reader of history over a store's raw records. Over the
records of an LMDB store of the rpc-compat chain, every read (headers, blocks, outlines,
receipts by either path, transaction locations, logs through the postings) answers what the
memory backend answers; what was decoded is kept, so a block read again reads no record; a
block written is remembered; a block the store lacks is MissingBlocks; a record that does not
decode is StoreUnreadable, logged with the store's name."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from ethread.backend import LogQuery
from ethread.backends.history import CachedHistory, HistoryRecords
from ethread.backends.lmdb import LMDBBackend
from ethread.backends.memory import MemoryBackend
from ethread.errors import MissingBlocks, StoreUnreadable
from ethread.forks import ChainConfig
from ethread.rlpcodec.blocks import outline_of_block
from tests.support.storage_backends import lmdb_from


class Counted:
    """A store's records, with each read counted and chosen records damaged."""

    def __init__(self, records: HistoryRecords, damaged: frozenset[bytes] = frozenset()) -> None:
        self._records = records
        self.damaged = damaged
        self.reads = 0

    def __getattr__(self, name: str) -> Any:
        inner = getattr(self._records, name)

        def read(*args: Any) -> Any:
            self.reads += 1
            found = inner(*args)
            if args and args[0] in self.damaged and isinstance(found, bytes):
                return found[:len(found) // 2]  # cut short
            if args and args[0] in self.damaged and found is not None and hasattr(found, "_replace"):
                return found._replace(header_rlp=b"\xc0")
            return found

        return read


class Reader(CachedHistory):
    def __init__(self, records: Any, config: ChainConfig | None, cache_blocks: int = 64) -> None:
        super().__init__(records, cache_blocks)
        self._config = config

    def chain_config(self) -> ChainConfig | None:
        return self._config


@pytest.fixture(scope="module")
def store(memory: MemoryBackend, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LMDBBackend]:
    backend = lmdb_from(memory, tmp_path_factory.mktemp("history") / "store")
    yield backend
    backend.close()


def _reader(store: LMDBBackend, memory: MemoryBackend, damaged: frozenset[bytes] = frozenset(),
            ) -> tuple[Reader, Counted]:
    records = Counted(store._records, damaged)
    return Reader(records, memory.chain_config()), records


def test_every_read_is_the_memory_backends(store: LMDBBackend, memory: MemoryBackend) -> None:
    head = memory.pointer("latest")
    assert head is not None
    lean, _ = _reader(store, memory)  # receipts first: their block is not decoded
    full, _ = _reader(store, memory)
    for number in range(head + 1):
        block_hash = memory.canonical_hash(number)
        assert block_hash is not None and lean.canonical_hash(number) == block_hash
        assert lean.receipts(block_hash) == memory.receipts(block_hash)
        assert full.block_by_hash(block_hash) == memory.block_by_hash(block_hash)
        assert full.receipts(block_hash) == memory.receipts(block_hash)
        assert lean.header_by_hash(block_hash) == memory.header_by_hash(block_hash)
        block = memory.block_by_hash(block_hash)
        assert block is not None
        outline = outline_of_block(block)
        assert full.block_outline_by_hash(block_hash) == outline  # from the decoded block
        assert lean.block_outline_by_hash(block_hash) == outline  # from the records
        for index, tx in enumerate(block.transactions):
            assert lean.transaction_location(tx.hash) == (block_hash, index)
    assert lean.canonical_hash(head + 1) is None and lean.block_by_hash(b"\x00" * 32) is None
    assert lean.receipts(b"\x00" * 32) is None and lean.transaction_location(b"\x00" * 32) is None
    everything = LogQuery(0, head)
    logs = lean.logs(everything)
    assert logs == memory.logs(everything) and len(logs) > 10
    address = logs[len(logs) // 2].address
    topic = logs[len(logs) // 2].topics[0]
    narrow = LogQuery(0, head, addresses=(address,), topics=((topic,),))
    assert lean.logs(narrow) == memory.logs(narrow) and lean.logs(narrow)


def test_what_was_decoded_is_kept(store: LMDBBackend, memory: MemoryBackend) -> None:
    reader, records = _reader(store, memory)
    block_hash = memory.canonical_hash(3)
    assert block_hash is not None
    block = reader.block_by_hash(block_hash)
    reads = records.reads
    assert reader.block_by_hash(block_hash) is block and reader.header_by_hash(block_hash) == block.header  # type: ignore[union-attr]
    assert reader.block_outline_by_hash(block_hash) is not None
    assert records.reads == reads, "the block, its header and outline from the cache"
    receipts = reader.receipts(block_hash)
    reads = records.reads
    assert reader.receipts(block_hash) is receipts and records.reads == reads
    other, other_records = _reader(store, memory)
    kept = memory.block_by_hash(block_hash)
    kept_receipts = memory.receipts(block_hash)
    assert kept is not None and kept_receipts is not None
    other.remember(kept, kept_receipts)
    assert other.block_by_hash(block_hash) is kept and other.receipts(block_hash) == kept_receipts
    assert other_records.reads == 0


def test_a_block_the_store_lacks_is_missing_blocks(store: LMDBBackend, memory: MemoryBackend) -> None:
    reader, _ = _reader(store, memory)
    head = memory.pointer("latest")
    assert head is not None
    assert [raw.number for raw in reader.raw_blocks(head - 1, head + 1)] == [head - 1, head]
    with pytest.raises(MissingBlocks) as missing:
        list(reader.raw_blocks(head, head + 2))
    assert str(head + 1) in str(missing.value)


def test_a_record_that_does_not_decode_is_store_unreadable(
        store: LMDBBackend, memory: MemoryBackend, caplog: pytest.LogCaptureFixture) -> None:
    block_hash = memory.canonical_hash(5)
    assert block_hash is not None
    reader, _ = _reader(store, memory, frozenset({block_hash}))
    with caplog.at_level(logging.ERROR, "ethread.store"):
        with pytest.raises(StoreUnreadable, match=f"damaged record of block 0x{block_hash.hex()}"):
            reader.header_by_hash(block_hash)
        with pytest.raises(StoreUnreadable, match="damaged record of block"):
            reader.block_by_hash(block_hash)
    said = [r.getMessage() for r in caplog.records]
    assert said and all(store.store.describe() in line for line in said)


def test_logs_indexed_without_receipts_are_store_unreadable(store: LMDBBackend,
                                                            memory: MemoryBackend) -> None:
    class NoLogRecords(Counted):
        def logs_record(self, number: int) -> bytes | None:
            return None

        def block_and_receipts_records(self, block_hash: bytes) -> Any:
            found = self._records.block_and_receipts_records(block_hash)
            return None if found is None else (found[0], None)

    reader = Reader(NoLogRecords(store._records), memory.chain_config())
    head = memory.pointer("latest")
    assert head is not None
    with pytest.raises(StoreUnreadable, match=r"indexes logs of block \d+ but holds no receipts"):
        reader.logs(LogQuery(0, head))

