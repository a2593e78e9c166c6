"""One cached reader of history for the persistent backends, over their raw records.

:class:`HistoryRecords` is what such a backend must answer about its records (header, body
with senders, consensus receipts, compact log records, log postings); :class:`CachedHistory`
turns them into models, caches them (history below the head never changes), reports a record
that does not decode as :class:`~ethread.errors.StoreError`, and answers log queries.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

from ..backend import LogQuery
from ..errors import MissingBlocks, StoreUnreadable
from ..lru import LRU
from ..models import Address, Block, Hash32, Header, Log, Receipt
from ..rlpcodec.blocks import (
    BlockOutline,
    block_from_parts,
    body_facts,
    outline_from_parts,
    outline_of_block,
)
from ..rlpcodec.headers import header_facts, header_of_record
from ..rlpcodec.items import DecodeError
from ..rlpcodec.receipts import receipts_from_consensus, receipts_of_records
from .logindex import candidate_blocks, collect_logs, decode_block_logs, logs_of_receipts

log = logging.getLogger("ethread.store")

if TYPE_CHECKING:
    from ..forks import ChainConfig

T = TypeVar("T")

_DAMAGE = (DecodeError, ValueError, IndexError, TypeError)
"""What a record decoder raises on a damaged record (TypeError: a list stored where a string
belongs, as the decoders trust the shape of the rest)."""
V = TypeVar("V")
R = TypeVar("R")


class BlockRecord(NamedTuple):
    """A block as stored: header and body in RLP, and the senders of its transactions."""

    header_rlp: bytes
    body_rlp: bytes
    senders: Sequence[Address]


CACHED_LOGS = 65_536
"""Decoded logs a history reader keeps, by block, for log queries: about 45 MB (a log with two
topics and one word of data takes about 700 bytes decoded)."""


def _log_count(logs: Sequence[Log]) -> int:
    return len(logs)


class HistoryRecords(Protocol):
    """The raw history a persistent backend holds; every read answers None when absent."""

    def describe(self) -> str:
        """Names the store in error messages: "the store at /data/chain"."""

    def hash_at(self, number: int) -> Hash32 | None:
        """Canonical hash at ``number``; None outside the blocks held."""

    def header_record(self, block_hash: Hash32) -> bytes | None:
        """The RLP-encoded header of the block with this hash, or None."""

    def block_record(self, block_hash: Hash32) -> BlockRecord | None:
        """The encoded header, body and senders of the block with this hash, or None."""

    def receipts_record(self, block_hash: Hash32, number: int) -> bytes | None:
        """The encoded receipts of block ``number`` (hash ``block_hash``), or None."""

    def block_and_receipts_records(self, block_hash: Hash32
                                   ) -> tuple[BlockRecord, bytes | None] | None:
        """The block's record and encoded receipts (or None), read together; None if not held."""

    def transaction_at(self, tx_hash: Hash32) -> tuple[Hash32, int] | None:
        """(block hash, index) of a canonical transaction."""

    def logs_record(self, number: int) -> bytes | None:
        """The block's :func:`~ethread.backends.logindex.encode_block_logs` record; None or empty: read receipts."""

    def blocks_with_address(self, address: Address, lo: int, hi: int) -> Iterable[int]:
        """Ascending numbers in ``[lo, hi]`` of blocks where ``address`` logged."""

    def blocks_with_topic(self, position: int, topic: Hash32, lo: int, hi: int) -> Iterable[int]:
        """Numbers of the blocks in ``[lo, hi]`` holding a log with ``topic`` at ``position``."""

    def blocks_with_logs(self, lo: int, hi: int) -> Iterable[int]:
        """Numbers of the blocks in ``[lo, hi]`` holding any log."""


class RawBlock(NamedTuple):
    """A block's records as stored, for readers that decode in bulk (``ethread.frames``)."""

    number: int
    header_rlp: bytes
    body_rlp: bytes
    receipts_rlp: bytes | None
    senders: bytes
    """The senders of its transactions, 20 bytes each, in order."""
    slim: bool = False
    """Whether ``receipts_rlp`` holds ``ere``'s slim receipts (``[type, status, cumulative gas,
    logs]``, no bloom) rather than the consensus encoding."""


class CachedHistory:
    """Header, block, transaction, receipt and log reads over :class:`HistoryRecords`.
    Subclasses give :meth:`chain_config` and call :meth:`remember` for blocks they write."""

    def __init__(self, records: HistoryRecords, cache_blocks: int = 4096) -> None:
        self._records = records
        self._headers: LRU[Hash32, Header] = LRU(cache_blocks * 4)
        self._blocks: LRU[Hash32, Block] = LRU(cache_blocks)
        self._receipts: LRU[Hash32, tuple[Receipt, ...]] = LRU(cache_blocks)
        self._block_logs: LRU[int, Sequence[Log]] = LRU(
            cache_blocks * 4, max_bytes=CACHED_LOGS, weigh=_log_count)

    def chain_config(self) -> ChainConfig | None:
        """The chain's fork schedule; each store supplies it."""
        raise NotImplementedError

    def remember(self, block: Block, receipts: Sequence[Receipt]) -> None:
        """Keep a block just written, decoded, so that the next reads of it cost nothing."""
        self._blocks.put(block.hash, block)
        self._receipts.put(block.hash, tuple(receipts))

    def _decode(self, what: object, fn: Callable[..., T], *args: Any) -> T:
        try:
            return fn(*args)
        except _DAMAGE as exc:
            raise self._damaged(what, exc) from None

    def _damaged(self, what: object, exc: Exception) -> StoreUnreadable:
        """The error a damaged record of ``what`` answers (the details go to the log)."""
        log.error("%s holds a damaged record of %s: %s", self._records.describe(), what, exc)
        return StoreUnreadable(f"the chain store holds a damaged record of {what}")

    def _keep(self, cache: LRU[Hash32, V], key: Hash32, what: str, decode: Callable[[R], V],
              record: R | None) -> V | None:
        """A record just read (None when it is absent) decoded, and kept in ``cache``."""
        if record is None:
            return None
        value = self._decode(what, decode, record)
        cache.put(key, value)
        return value

    def _read_block_record(self, cache: LRU[Hash32, V], block_hash: Hash32,
                           read: Callable[[Hash32], R | None], decode: Callable[[R], V]) -> V | None:
        """What ``cache`` holds for the block, else its record read, decoded and kept."""
        value = cache.get(block_hash)
        if value is None:
            value = self._keep(cache, block_hash, f"block 0x{block_hash.hex()}", decode, read(block_hash))
        return value

    # -- the backend protocols -----------------------------------------------------------------

    def raw_blocks(self, start: int, stop: int, *, receipts: bool = True) -> Iterator[RawBlock]:
        """The records of blocks ``range(start, stop)`` in order, undecoded and uncached; a
        block the store lacks raises :class:`~ethread.errors.MissingBlocks`."""
        records = self._records
        for number in range(start, stop):
            block_hash = records.hash_at(number)
            raw = None if block_hash is None else self._raw_block(number, block_hash, receipts)
            if raw is None:
                raise MissingBlocks([(number, number)], records.describe())
            yield raw

    def _raw_block(self, number: int, block_hash: Hash32, receipts: bool) -> RawBlock | None:
        """Block ``number``'s records as :meth:`raw_blocks` hands them out, or None."""
        records = self._records
        if receipts:
            found = records.block_and_receipts_records(block_hash)
        else:
            block = records.block_record(block_hash)
            found = (block, None) if block is not None else None
        if found is None:
            return None
        block, receipts_rlp = found
        return RawBlock(number, block.header_rlp, block.body_rlp, receipts_rlp,
                        b"".join(block.senders))

    def canonical_hash(self, number: int) -> Hash32 | None:
        """The hash of the canonical block at ``number``, or None if not held."""
        return self._records.hash_at(number)

    def header_by_hash(self, block_hash: Hash32) -> Header | None:
        """The header of the block with this hash, decoded from its record and cached."""
        return self._read_block_record(self._headers, block_hash, self._records.header_record,
                                       lambda raw: header_of_record(raw, block_hash))

    def block_by_hash(self, block_hash: Hash32) -> Block | None:
        """The block with this hash, decoded from its records and cached."""
        block = self._blocks.get(block_hash)
        if block is None:
            record = self._records.block_record(block_hash)
            if record is None:
                return None
            what = f"block 0x{block_hash.hex()}"
            header = self._record_header(what, block_hash, record.header_rlp)
            block = self._decode(what, block_from_parts, record.header_rlp,
                                 record.body_rlp, record.senders, header)
            self._blocks.put(block_hash, block)
        return block

    def block_outline_by_hash(self, block_hash: Hash32) -> BlockOutline | None:
        """The outline of the block with this hash (what a block object with transaction hashes
        shows), from the cached block or else from its records without decoding a transaction."""
        block = self._blocks.get(block_hash)
        if block is not None:
            return outline_of_block(block)
        record = self._records.block_record(block_hash)
        if record is None:
            return None
        what = f"block 0x{block_hash.hex()}"
        header = self._record_header(what, block_hash, record.header_rlp)
        return self._decode(what, outline_from_parts, record.header_rlp, record.body_rlp, header)

    def _record_header(self, what: str, block_hash: Hash32, header_rlp: bytes) -> Header:
        """The block's header: cached, else decoded from its record and cached."""
        header = self._headers.get(block_hash)
        if header is None:
            header = self._decode(what, header_of_record, header_rlp, block_hash)
            self._headers.put(block_hash, header)
        return header

    def transaction_location(self, tx_hash: Hash32) -> tuple[Hash32, int] | None:
        """(block hash, index in block) of a canonical transaction, or None."""
        return self._records.transaction_at(tx_hash)

    def receipts(self, block_hash: Hash32) -> tuple[Receipt, ...] | None:
        """The receipts of the block with this hash, decoded and cached; an undecoded block
        stays undecoded (:func:`~ethread.rlpcodec.blocks.body_facts` reads what they need)."""
        cached = self._receipts.get(block_hash)
        if cached is not None:
            return cached
        block = self._blocks.get(block_hash)
        if block is not None:
            config = self.chain_config()
            return self._keep(self._receipts, block_hash, f"the receipts of block {block.number}",
                              lambda raw: receipts_from_consensus(block, raw, config),
                              self._records.receipts_record(block_hash, block.number))
        records = self._records.block_and_receipts_records(block_hash)
        if records is None:
            return None
        record, raw = records
        try:
            header = self._headers.get(block_hash)
            if header is not None:
                facts = (header.number, header.timestamp, header.base_fee_per_gas,
                         header.excess_blob_gas)
            else:
                facts = header_facts(record.header_rlp)
            transactions = body_facts(record.body_rlp, record.senders, facts[2])
        except _DAMAGE as exc:
            raise self._damaged(f"block 0x{block_hash.hex()}", exc) from None
        if raw is None:
            return None
        try:
            receipts = receipts_of_records(block_hash, facts, transactions, raw,
                                           self.chain_config())
        except _DAMAGE as exc:
            raise self._damaged(f"the receipts of block {facts[0]}", exc) from None
        self._receipts.put(block_hash, receipts)
        return receipts

    def logs(self, query: LogQuery) -> list[Log]:
        """The logs matching ``query``, found through the records' log index."""
        records = self._records
        candidates = candidate_blocks(
            query,
            lambda address: lambda lo, hi: records.blocks_with_address(address, lo, hi),
            lambda position, topic: lambda lo, hi: records.blocks_with_topic(position, topic,
                                                                           lo, hi),
            records.blocks_with_logs,
        )
        return collect_logs(query, candidates, self._logs_at)

    def _logs_at(self, number: int) -> Sequence[Log]:
        """Every log of block ``number`` (a candidate of a log query), decoded once and kept."""
        logs = self._block_logs.get(number)
        if logs is None:
            raw = self._records.logs_record(number)
            if raw:
                logs = self._decode(f"the logs of block {number}", decode_block_logs, number, raw)
            else:
                logs = tuple(logs_of_receipts(self._receipts_at(number)))
            self._block_logs.put(number, logs)
        return logs

    def _receipts_at(self, number: int) -> Sequence[Receipt]:
        block_hash = self.canonical_hash(number)
        receipts = self.receipts(block_hash) if block_hash is not None else None
        if receipts is None:
            raise StoreUnreadable(f"the chain store indexes logs of block {number} but holds "
                                  "no receipts for it")
        return receipts
