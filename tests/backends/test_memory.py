"""backends/memory.py: the rpc-compat chain held in memory answers what its chain file says
(hashes by number and transactions by hash, read with pyrlp), its log index answers what a
scan of every receipt answers, and the writes keep their rules: a block must extend the head,
a forked chain starts at its fork block, a rewind drops blocks with their transactions and
log postings and clamps the pointers, and every write moves the generation on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rlp
from eth_hash.auto import keccak
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rlp.codec import consume_item

from ethread.backend import LogQuery
from ethread.backends.memory import MemoryBackend
from ethread.models import Block, Log, Receipt
from tests.support.storage_backends import each_block


def _chain_file(path: Path) -> Iterator[list[Any]]:
    data = path.read_bytes()
    at = 0
    while at < len(data):
        block, _, at = consume_item(data, at)
        yield block


@pytest.fixture(scope="module")
def chain(memory: MemoryBackend) -> list[tuple[bytes, Block, tuple[Receipt, ...]]]:
    return list(each_block(memory))


def test_hashes_by_number_are_those_of_the_chain_files_headers(memory: MemoryBackend,
                                                                compat: Path) -> None:
    blocks = list(_chain_file(compat / "chain.rlp"))
    assert memory.pointer("latest") == len(blocks) == 45  # blocks 1..45 after the genesis
    assert memory.canonical_hash(0) == blocks[0][0][0]  # block 1's parent
    for number, block in enumerate(blocks, start=1):
        block_hash = keccak(rlp.encode(block[0]))
        assert memory.canonical_hash(number) == block_hash
        header = memory.header_by_hash(block_hash)
        assert header is not None and header.number == number and header.hash == block_hash
    for number in (-1, 46, 10**9):
        assert memory.canonical_hash(number) is None
    assert memory.header_by_hash(b"\x00" * 32) is None
    assert memory.block_by_hash(b"\x00" * 32) is None and memory.receipts(b"\x00" * 32) is None


def test_every_transaction_is_located_by_its_hash(memory: MemoryBackend, compat: Path) -> None:
    located = 0
    for block in _chain_file(compat / "chain.rlp"):
        block_hash = keccak(rlp.encode(block[0]))
        for index, tx in enumerate(block[1]):
            # a legacy transaction is an RLP list; a typed one, its envelope's bytes
            tx_hash = keccak(rlp.encode(tx) if isinstance(tx, list) else tx)
            assert memory.transaction_location(tx_hash) == (block_hash, index)
            located += 1
    assert located > 10
    assert memory.transaction_location(b"\x01" * 32) is None


def test_the_pointers_of_the_imported_chain(memory: MemoryBackend) -> None:
    assert {name: memory.pointer(name) for name in ("latest", "safe", "finalized", "earliest")} == {
        "latest": 45, "safe": 45, "finalized": 45, "earliest": 0}
    assert memory.chain_config() is not None
    assert memory.holds_history_in_memory is True


def _all_logs(chain: list[tuple[bytes, Block, tuple[Receipt, ...]]]) -> list[Log]:
    return [log for _, _, receipts in chain for receipt in receipts for log in receipt.logs]


def _scanned(chain: list[tuple[bytes, Block, tuple[Receipt, ...]]], query: LogQuery) -> list[Log]:
    """The logs a scan of every receipt finds, the filter applied as geth's filterLogs does."""
    found = []
    for log in _all_logs(chain):
        if not query.from_number <= log.block_number <= query.to_number:
            continue
        if query.addresses and log.address not in query.addresses:
            continue
        if len(query.topics) > len(log.topics):
            continue
        if all(sub is None or log.topics[i] in sub for i, sub in enumerate(query.topics)):
            found.append(log)
    return found


def test_the_chain_has_logs_to_find(chain: list[tuple[bytes, Block, tuple[Receipt, ...]]]) -> None:
    logs = _all_logs(chain)
    assert len(logs) > 5 and len({log.address for log in logs}) > 1


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_log_index_finds_what_a_scan_finds(
        memory: MemoryBackend, chain: list[tuple[bytes, Block, tuple[Receipt, ...]]],
        data: st.DataObject) -> None:
    logs = _all_logs(chain)
    addresses = [*sorted({log.address for log in logs}), b"\xee" * 20]
    topics = [*sorted({t for log in logs for t in log.topics}), b"\xee" * 32]
    low = data.draw(st.integers(0, 46))
    query = LogQuery(
        low, data.draw(st.integers(low, 50)),
        addresses=tuple(data.draw(st.lists(st.sampled_from(addresses), max_size=2, unique=True))),
        topics=tuple(data.draw(st.lists(
            st.none() | st.lists(st.sampled_from(topics), min_size=1, max_size=2).map(tuple),
            max_size=3))))
    assert memory.logs(query) == _scanned(chain, query)


def test_a_whole_range_query_returns_every_log_in_chain_order(
        memory: MemoryBackend, chain: list[tuple[bytes, Block, tuple[Receipt, ...]]]) -> None:
    assert memory.logs(LogQuery(0, 45)) == _all_logs(chain)


# writing


def _copy(chain: list[tuple[bytes, Block, tuple[Receipt, ...]]], through: int,
          start: int = 0) -> MemoryBackend:
    backend = MemoryBackend()
    for _, block, receipts in chain[start:through + 1]:
        with backend.import_batch():
            backend.write_block(block, receipts)
    return backend


def test_each_write_moves_the_generation_on(chain: list[tuple[bytes, Block, tuple[Receipt, ...]]]) -> None:
    backend = MemoryBackend()
    assert backend.generation() == 0 and backend.pointer("latest") is None
    assert backend.pointer("earliest") is None
    for number, (_, block, receipts) in enumerate(chain[:4]):
        backend.write_block(block, receipts)
        assert backend.generation() == number + 1
        assert backend.pointer("latest") == number
    backend.set_pointer("safe", 2)
    assert backend.generation() == 5 and backend.pointer("safe") == 2


@pytest.mark.parametrize("number", [0, 2, 4])
def test_a_block_that_does_not_extend_the_head_is_refused(
        chain: list[tuple[bytes, Block, tuple[Receipt, ...]]], number: int) -> None:
    backend = _copy(chain, 2)
    _, block, receipts = chain[number]
    with pytest.raises(ValueError, match=rf"^block {number} does not extend the head \(2\)$"):
        backend.write_block(block, receipts)
    assert backend.pointer("latest") == 2 and backend.generation() == 3


def test_a_forked_chain_starts_at_its_fork_block(
        chain: list[tuple[bytes, Block, tuple[Receipt, ...]]]) -> None:
    backend = _copy(chain, 12, start=10)
    assert backend.pointer("earliest") == 10 and backend.pointer("latest") == 12
    assert backend.canonical_hash(9) is None and backend.canonical_hash(13) is None
    assert [backend.canonical_hash(n) for n in (10, 11, 12)] == [h for h, _, _ in chain[10:13]]
    with pytest.raises(ValueError, match=r"^block 9 is not held$"):
        backend.set_pointer("finalized", 9)
    with pytest.raises(ValueError, match=r"^block 9 is not held$"):
        backend.rewind(9)
    backend.rewind(10)
    assert backend.pointer("latest") == 10


def test_a_rewind_drops_the_blocks_above_with_their_transactions_and_logs(
        chain: list[tuple[bytes, Block, tuple[Receipt, ...]]]) -> None:
    backend = _copy(chain, 45)
    backend.set_pointer("safe", 40)
    backend.set_pointer("finalized", 20)
    generation = backend.generation()
    keep = 25
    backend.rewind(keep)
    assert backend.generation() == generation + 1
    assert backend.pointer("latest") == keep
    assert (backend.pointer("safe"), backend.pointer("finalized")) == (keep, 20)
    for number, (block_hash, block, _) in enumerate(chain):
        held = number <= keep
        assert (backend.canonical_hash(number) == block_hash) is held
        assert (backend.block_by_hash(block_hash) is not None) is held
        assert (backend.receipts(block_hash) is not None) is held
        for tx in block.transactions:
            location = backend.transaction_location(tx.hash)
            assert location == ((block_hash, tx.index) if held else None)
    everything = LogQuery(0, 10**6)
    assert backend.logs(everything) == [log for log in _all_logs(chain) if log.block_number <= keep]
    for log in _all_logs(chain):  # no posting of a dropped block is left to find
        assert all(found.block_number <= keep
                   for found in backend.logs(LogQuery(0, 10**6, addresses=(log.address,))))
    _, block, receipts = chain[keep + 1]
    backend.write_block(block, receipts)  # the chain grows again from the rewound head
    assert backend.pointer("latest") == keep + 1


def test_pointer_moves_are_checked(chain: list[tuple[bytes, Block, tuple[Receipt, ...]]]) -> None:
    backend = _copy(chain, 3)
    with pytest.raises(ValueError, match=r"^unknown pointer 'latest'$"):
        backend.set_pointer("latest", 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^block 4 is not held$"):
        backend.set_pointer("safe", 4)
    with pytest.raises(ValueError, match=r"^block 4 is not held$"):
        backend.rewind(4)
    with pytest.raises(ValueError, match=r"^block -1 is not held$"):
        backend.rewind(-1)


def test_an_empty_backend_answers_none_and_nothing() -> None:
    backend = MemoryBackend()
    assert backend.canonical_hash(0) is None and backend.chain_config() is None
    assert backend.logs(LogQuery(0, 100)) == []
    with pytest.raises(ValueError, match=r"^block 0 is not held$"):
        backend.rewind(0)
    assert "MemoryBackend" in repr(backend)
