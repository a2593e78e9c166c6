"""The in-memory backend, for test suites and notebooks: dictionaries, and sorted posting lists
by address, by (topic position, topic) and of blocks with any log, for eth_getLogs.
"""

from __future__ import annotations

import threading
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Literal, TypeVar

from ..backend import LogQuery, Pointer, pointer_number
from ..models import Address, Block, Hash32, Header, Log, Receipt
from . import summary
from .logindex import Postings, candidate_blocks, collect_logs, log_keys, logs_of_receipts

if TYPE_CHECKING:
    from eth.abc import ChainDatabaseAPI

    from ..forks import ChainConfig

_K = TypeVar("_K")


class MemoryBackend:
    """Holds a whole chain, with state, in memory."""

    holds_history_in_memory = True
    """One-block lookups take microseconds: a server may answer them on its event loop."""

    def __init__(self) -> None:
        from eth.db.atomic import AtomicDB
        from eth.db.chain import ChainDB

        self._evm = ChainDB(AtomicDB())
        self._config: ChainConfig | None = None
        self._blocks: dict[Hash32, Block] = {}
        self._receipts: dict[Hash32, tuple[Receipt, ...]] = {}
        self._logs: dict[Hash32, tuple[Log, ...]] = {}
        """Every log of each block that has any, in order: what a log query visits."""
        self._canonical: list[Hash32] = []
        self._first = 0
        """The number of the first block held: 0, or a forked chain's fork block."""
        self._tx_index: dict[Hash32, tuple[Hash32, int]] = {}
        self._by_address: defaultdict[Address, list[int]] = defaultdict(list)
        self._by_topic: defaultdict[tuple[int, Hash32], list[int]] = defaultdict(list)
        self._with_logs: list[int] = []
        self._pointers: dict[str, int] = {}
        self._generation = 0
        self._write_lock = threading.Lock()

    def __repr__(self) -> str:
        return summary.backend_repr(self, "MemoryBackend", {})

    def _repr_html_(self) -> str:
        return summary.backend_html(self, "MemoryBackend", {})

    # -- reading -----------------------------------------------------------------------------

    def header_by_hash(self, block_hash: Hash32) -> Header | None:
        """The header of the block with this hash, or None."""
        block = self._blocks.get(block_hash)
        return block.header if block is not None else None

    def canonical_hash(self, number: int) -> Hash32 | None:
        """The hash of the canonical block at ``number``, or None past the head."""
        if 0 <= number - self._first < len(self._canonical):
            return self._canonical[number - self._first]
        return None

    def block_by_hash(self, block_hash: Hash32) -> Block | None:
        """The block with this hash, or None."""
        return self._blocks.get(block_hash)

    def transaction_location(self, tx_hash: Hash32) -> tuple[Hash32, int] | None:
        """(block hash, index in block) of a canonical transaction, or None."""
        return self._tx_index.get(tx_hash)

    def receipts(self, block_hash: Hash32) -> tuple[Receipt, ...] | None:
        """The receipts of the block with this hash, or None."""
        return self._receipts.get(block_hash)

    def pointer(self, name: Pointer) -> int | None:
        """The block number of a named pointer, or None while empty."""
        head = self._first + len(self._canonical) - 1 if self._canonical else None
        return pointer_number(name, head, self._pointers, self._first)

    def chain_config(self) -> ChainConfig | None:
        """The fork schedule stored at import, or None before it."""
        return self._config

    def evm_database(self) -> ChainDatabaseAPI:
        """The in-memory py-evm database holding the chain's state."""
        return self._evm

    def generation(self) -> int:
        """A counter bumped by every write, so caches know when to drop answers."""
        return self._generation

    def logs(self, query: LogQuery) -> list[Log]:
        """The logs matching ``query``, found through the in-memory address and topic index."""
        candidates = candidate_blocks(
            query,
            lambda address: _window(self._by_address.get(address, [])),
            lambda position, topic: _window(self._by_topic.get((position, topic), [])),
            _window(self._with_logs),
        )
        logs, canonical, first = self._logs, self._canonical, self._first
        return collect_logs(query, candidates,
                            lambda number: logs.get(canonical[number - first], ()))

    # -- writing -----------------------------------------------------------------------------

    @contextmanager
    def import_batch(self) -> Iterator[None]:
        """Hold the write lock for a batch of writes (a block lands only by :meth:`write_block`)."""
        # State trie nodes are content-addressed: nodes a failed block left behind are
        # unreachable from any stored state root. Blocks land only through write_block.
        with self._write_lock:
            yield

    def store_chain_config(self, config: ChainConfig) -> None:
        """Store the chain's fork schedule."""
        self._config = config

    def write_block(self, block: Block, receipts: Sequence[Receipt]) -> None:
        """Store a block and its receipts, with their index entries, as the new head it extends."""
        number = block.number
        if not self._canonical:
            self._first = number  # a chain forked from another starts at its fork block
        elif number != self._first + len(self._canonical):
            raise ValueError(f"block {number} does not extend the head "
                             f"({self._first + len(self._canonical) - 1})")
        self._blocks[block.hash] = block
        self._receipts[block.hash] = tuple(receipts)
        for tx in block.transactions:
            self._tx_index[tx.hash] = (block.hash, tx.index)
        addresses, topics = log_keys(receipts)
        if addresses:
            self._logs[block.hash] = tuple(logs_of_receipts(receipts))
        for address in addresses:
            self._by_address[address].append(number)
        for key in topics:
            self._by_topic[key].append(number)
        if addresses:
            self._with_logs.append(number)
        self._canonical.append(block.hash)
        self._generation += 1

    def rewind(self, number: int) -> None:
        """Drop every block above ``number`` with its index entries (a dev chain reverting to a
        snapshot); the generation moves on, never back, so no dropped answer is served again."""
        with self._write_lock:
            if not 0 <= number - self._first < len(self._canonical):
                raise ValueError(f"block {number} is not held")
            dropped = self._canonical[number - self._first + 1:]
            del self._canonical[number - self._first + 1:]
            for block_hash in dropped:
                block = self._blocks.pop(block_hash)
                receipts = self._receipts.pop(block_hash, ())
                self._logs.pop(block_hash, None)
                for tx in block.transactions:
                    if self._tx_index.get(tx.hash, (None,))[0] == block_hash:
                        del self._tx_index[tx.hash]
                addresses, topics = log_keys(receipts)
                for address in addresses:
                    _truncate(self._by_address, address, number)
                for key in topics:
                    _truncate(self._by_topic, key, number)
            del self._with_logs[bisect_right(self._with_logs, number):]
            for name, at in list(self._pointers.items()):
                self._pointers[name] = min(at, number)
            self._generation += 1

    def set_pointer(self, name: Literal["safe", "finalized"], number: int) -> None:
        """Move the ``safe`` or ``finalized`` pointer to a held block."""
        if name not in ("safe", "finalized"):
            raise ValueError(f"unknown pointer {name!r}")
        if not 0 <= number - self._first < len(self._canonical):
            raise ValueError(f"block {number} is not held")
        self._pointers[name] = number
        self._generation += 1


def _truncate(index: defaultdict[_K, list[int]], key: _K, number: int) -> None:
    postings = index.get(key)
    if postings is not None:
        del postings[bisect_right(postings, number):]
        if not postings:
            del index[key]


def _window(postings: list[int]) -> Postings:
    """A sorted posting list read between two block numbers, by bisection."""

    def read(lo: int, hi: int) -> list[int]:
        return postings[bisect_left(postings, lo):bisect_right(postings, hi)]

    return read
