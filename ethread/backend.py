"""What a chain backend provides, one small protocol per concern.

Lookups answer the value or ``None`` when it is absent, and raise only when the store itself
fails. Tags are resolved above storage, from the numbers :class:`ChainPointers` gives.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, TypeAlias, runtime_checkable

from .deadline import NO_DEADLINE as NO_DEADLINE
from .deadline import CancelToken as CancelToken
from .deadline import Deadline as Deadline
from .deadline import cancellable as cancellable
from .errors import Picklable
from .models import Address, Block, Hash32, Header, Log, Receipt, TopicFilter

if TYPE_CHECKING:
    from eth.abc import ChainDatabaseAPI

    from .forks import ChainConfig

Pointer: TypeAlias = Literal["latest", "safe", "finalized", "earliest"]


@runtime_checkable
class HeaderSource(Protocol):
    """A source of block headers by hash, and of the canonical chain's hash by number."""

    def header_by_hash(self, block_hash: Hash32) -> Header | None:
        """The header of the block with this hash, or None if the backend does not hold it."""

    def canonical_hash(self, number: int) -> Hash32 | None:
        """Hash of the canonical block at ``number``, or None when it is not held."""


@runtime_checkable
class BlockSource(Protocol):
    """A source of whole blocks by hash."""

    def block_by_hash(self, block_hash: Hash32) -> Block | None:
        """The block with its transactions (senders included), uncles and withdrawals."""


@runtime_checkable
class TransactionLocator(Protocol):
    """Finds where a transaction was included, by its hash."""

    def transaction_location(self, tx_hash: Hash32) -> tuple[Hash32, int] | None:
        """(block hash, index in block) of a canonical transaction."""


@runtime_checkable
class ReceiptSource(Protocol):
    """A source of a block's receipts."""

    def receipts(self, block_hash: Hash32) -> tuple[Receipt, ...] | None:
        """The receipts of the block with this hash, in order, or None if it is not held."""


@runtime_checkable
class SelfChecking(Protocol):
    """A store that can say whether it still reads (``/health`` asks)."""

    def health_problem(self) -> str | None:
        """None when the store reads; else what is wrong, naming no server path."""


@dataclass(frozen=True, slots=True)
class LogQuery:
    """A resolved log filter: block numbers are concrete and canonical."""

    from_number: int
    to_number: int
    addresses: tuple[Address, ...] = ()
    topics: tuple[TopicFilter, ...] = ()
    limit: int | None = None
    """Raise :class:`ResultLimitReached` as soon as more than this many logs match."""
    deadline: Deadline = NO_DEADLINE

    def matches(self, address: Address, topics: Sequence[Hash32]) -> bool:
        """Whether a log with this address and these topics passes the filters (not the range)."""
        if self.addresses and address not in self.addresses:
            return False
        if len(self.topics) > len(topics):
            return False
        for wanted, topic in zip(self.topics, topics, strict=False):
            if wanted is not None and topic not in wanted:
                return False
        return True

    def log_matcher(self) -> Callable[[Log], bool]:
        """:meth:`matches` for one log, specialised for this filter (most name only addresses)."""
        if not self.topics:
            if not self.addresses:
                return lambda log: True
            wanted = frozenset(self.addresses)
            return lambda log: log.address in wanted
        return lambda log: self.matches(log.address, log.topics)


class ResultLimitReached(Picklable, Exception):
    """A log query matched more than its limit. ``fits_through`` is the last block number such
    that ``[from_number, fits_through]`` stays within it (``from_number - 1``: none does)."""

    def __init__(self, fits_through: int) -> None:
        super().__init__(fits_through)
        self.fits_through = fits_through


@runtime_checkable
class LogSource(Protocol):
    """Answers log queries (eth_getLogs) from a backend's log index."""

    def logs(self, query: LogQuery) -> list[Log]:
        """Matching canonical logs in chain order, from an index, checking ``query.deadline``."""


@runtime_checkable
class ChainPointers(Protocol):
    """A source of the named blocks: latest, safe, finalized and earliest."""

    def pointer(self, name: Pointer) -> int | None:
        """Block number of the named block held; None when the store is empty."""


def pointer_number(name: Pointer, head: int | None, stored: Mapping[str, int], earliest: int = 0) -> int | None:
    """Resolve a pointer for a store whose head is ``head``: safe and finalized default to the
    head and never pass it; None for an empty store."""
    if head is None:
        return None
    if name == "earliest":
        return earliest
    if name == "latest":
        return head
    return min(stored.get(name, head), head)


@runtime_checkable
class StateSource(Protocol):
    """Gives py-evm the database holding account state, for eth_call, balances and proofs."""

    def evm_database(self) -> ChainDatabaseAPI:
        """py-evm chain database holding headers and state trie nodes; raises StateUnavailable
        when the backend keeps no state."""


@runtime_checkable
class ConfigSource(Protocol):
    """A source of the chain's fork schedule."""

    def chain_config(self) -> ChainConfig | None:
        """Chain id and fork schedule, when the backend knows them."""


@runtime_checkable
class Backend(
    HeaderSource,
    BlockSource,
    TransactionLocator,
    ReceiptSource,
    LogSource,
    ChainPointers,
    StateSource,
    ConfigSource,
    Protocol,
):
    """Everything the eleven methods read (a test double may implement only what it needs)."""

    def generation(self) -> int:
        """A number that changes whenever anything the methods read changes (caches key on it)."""


# -- optional capabilities, checked with isinstance -------------------------------------------


@runtime_checkable
class HistoryInMemory(Protocol):
    """A backend whose one-block lookups take microseconds (a server answers on its loop)."""

    holds_history_in_memory: bool


@runtime_checkable
class TotalDifficultySource(Protocol):
    """A backend that stores each block's total difficulty (Era1 archives do)."""

    def total_difficulty(self, number: int) -> int | None:
        """The total difficulty through block ``number``, or None if not held."""


@runtime_checkable
class Closeable(Protocol):
    """A backend holding resources (files, a store's lock) to release when done."""

    def close(self) -> None:
        """Release the files and locks the backend holds; it answers nothing afterwards."""


@runtime_checkable
class AnswerRecords(Protocol):
    """A store that keeps, beside each block, answers derived from it when it was written
    (:mod:`ethread.codec.stored_answers`): opaque bytes under a name that says their format."""

    def answer_record(self, name: bytes, block_hash: Hash32) -> bytes | None:
        """The answer kept under ``name`` for the block with this hash, or None."""

    def put_answer_record(self, name: bytes, block_hash: Hash32, answer: bytes) -> None:
        """Keep ``answer`` under ``name`` for a held block (inside an import batch, with it)."""

    def drop_answer_records(self, keep: frozenset[bytes]) -> int:
        """Delete every kept answer whose name is not in ``keep``; how many."""


@runtime_checkable
class WritableBackend(Backend, Protocol):
    """A backend that :func:`ethread.import_chain` can fill."""

    def import_batch(self) -> AbstractContextManager[None]:
        """Everything written inside (state nodes through :meth:`evm_database`, and
        :meth:`write_block`) lands together or not at all."""

    def store_chain_config(self, config: ChainConfig) -> None:
        """Remember the chain's fork schedule (written once, at import of the genesis)."""

    def write_block(self, block: Block, receipts: Sequence[Receipt]) -> None:
        """Store a block as the new canonical head (its parent is the current head)."""

    def set_pointer(self, name: Literal["safe", "finalized"], number: int) -> None:
        """Move the ``safe`` or ``finalized`` pointer to a held block."""
