"""A persistent backend over any sorted byte-key store (:class:`~.records.RecordStore`).

One write batch carries a whole block (state trie nodes, header, body, receipts, index
entries, head pointer), applied entirely or not at all: a crash during an import leaves every
block written before it, and the importer resumes past them.

Key layout (numbers are 8-byte big-endian so that keys sort in chain order)::

    M<name>                        meta: schema, head, safe, finalized, config (JSON)
    N<number>        -> hash       canonical chain
    H<hash>          -> header RLP
    B<hash>          -> u32 tx count, senders (20 bytes each), body RLP
    R<hash>          -> receipts in consensus RLP
    T<tx hash>       -> block hash, u32 index
    A<address><number>             log index: blocks where an address logged
    P<position><topic><number>     log index: blocks where a topic stood at a position
    L<number>        -> logs       blocks with any log, each with its logs in one compact record
    D<len><name><hash> -> answer   answers derived from a block when it was written, under a
                                   name that says their format (:mod:`ethread.codec.stored_answers`)
    E<key>           -> value      py-evm's chain database (state trie nodes, headers)

Opening reads a few meta keys, no rescan; history reads go through
:class:`~.history.CachedHistory`.
"""

from __future__ import annotations

import atexit
import gc
import json
import random
import struct
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Literal, Self

from eth.db.atomic import AtomicDB
from eth.db.backends.base import BaseDB
from eth.db.chain import ChainDB
from trie import HexaryTrie

from ..backend import Pointer, pointer_number
from ..display import html_table
from ..errors import GenesisError, StoreError
from ..forks import ChainConfig
from ..models import Address, Block, Hash32, Receipt
from ..rlpcodec.blocks import body_rlp
from ..rlpcodec.headers import decode_header, encode_header
from ..rlpcodec.receipts import encode_receipts
from . import summary
from .history import BlockRecord, CachedHistory, RawBlock
from .logindex import encode_block_logs, log_keys
from .records import RecordStore

if TYPE_CHECKING:
    from eth.abc import ChainDatabaseAPI

_NUM = struct.Struct(">Q")
_U32 = struct.Struct(">I")
_META = b"M"
_CONFIG_KEY = _META + b"config"
_POINTER_KEYS = {"latest": _META + b"head", "safe": _META + b"safe",
                 "finalized": _META + b"finalized"}
_SCHEMA_KEY = _META + b"schema"
SCHEMA = b"ethread-leveldb-1"
"""The layout's name in every store (it says leveldb for the stores already written)."""


def _num(number: int) -> bytes:
    return _NUM.pack(number)


FOLLOW_INTERVAL = 0.001
"""Seconds between two looks at a shared store's version. Asking LMDB costs more than a
cached answer, and a request asks once or twice; another process's writes are
seen at most this late, and every read in between sees one consistent chain."""


class _EvmStore(BaseDB):
    """py-evm's key-value view of the store: keys under the ``E`` prefix, written with the
    backend's pending batch inside an import."""

    def __init__(self, backend: KeyValueBackend) -> None:
        self._backend = backend

    def __getitem__(self, key: bytes) -> bytes:
        value = self._backend._read(b"E" + key)
        if value is None:
            raise KeyError(key)
        return value

    def __setitem__(self, key: bytes, value: bytes) -> None:
        self._backend._write(b"E" + key, value)

    def __delitem__(self, key: bytes) -> None:
        if self._backend._read(b"E" + key) is None:
            raise KeyError(key)
        self._backend._write(b"E" + key, None)

    def _exists(self, key: bytes) -> bool:
        return self._backend._read(b"E" + key) is not None


class _Records:
    """The layout's history records, read through the backend (which sees its pending batch)."""

    def __init__(self, backend: KeyValueBackend) -> None:
        self._backend = backend
        self._read = backend._read

    def describe(self) -> str:
        return self._backend.store.describe()

    def hash_at(self, number: int) -> Hash32 | None:
        head = self._backend._pointers.get("latest")
        if head is None or not 0 <= number <= head:
            return None
        return self._read(b"N" + _num(number))

    def header_record(self, block_hash: Hash32) -> bytes | None:
        return self._read(b"H" + block_hash)

    def block_record(self, block_hash: Hash32) -> BlockRecord | None:
        header = self._read(b"H" + block_hash)
        stored = self._read(b"B" + block_hash)
        if header is None or stored is None:
            return None
        return _block_record(header, stored)

    def receipts_record(self, block_hash: Hash32, number: int) -> bytes | None:
        return self._read(b"R" + block_hash)

    def block_and_receipts_records(self, block_hash: Hash32
                                   ) -> tuple[BlockRecord, bytes | None] | None:
        header, stored, receipts = self._backend._read_many(
            (b"H" + block_hash, b"B" + block_hash, b"R" + block_hash))
        if header is None or stored is None:
            return None
        return _block_record(header, stored), receipts

    def transaction_at(self, tx_hash: Hash32) -> tuple[Hash32, int] | None:
        raw = self._read(b"T" + tx_hash)
        if raw is None:
            return None
        return raw[:32], _U32.unpack_from(raw, 32)[0]

    def logs_record(self, number: int) -> bytes | None:
        return self._read(b"L" + _num(number))

    def _postings(self, prefix: bytes, lo: int, hi: int) -> Iterator[int]:
        if lo > hi:
            return
        for key in self._backend.store.keys(prefix + _num(lo), prefix + _num(hi + 1)):
            yield _NUM.unpack_from(key, len(key) - 8)[0]

    def blocks_with_address(self, address: Address, lo: int, hi: int) -> Iterator[int]:
        return self._postings(b"A" + address, lo, hi)

    def blocks_with_topic(self, position: int, topic: Hash32, lo: int, hi: int) -> Iterator[int]:
        return self._postings(b"P" + bytes([position]) + topic, lo, hi)

    def blocks_with_logs(self, lo: int, hi: int) -> Iterator[int]:
        return self._postings(b"L", lo, hi)


def _answer_key(name: bytes, block_hash: bytes) -> bytes:
    """Where an answer kept under ``name`` lies (length-prefixed: no two names share keys)."""
    return b"D" + bytes((len(name),)) + name + block_hash


def _block_record(header: bytes, stored: bytes) -> BlockRecord:
    """A block's record from its header and its ``B`` record (tx count, senders, body)."""
    end = _senders_end(stored)
    senders = [stored[4:24]] if end == 24 else [stored[i:i + 20] for i in range(4, end, 20)]
    return BlockRecord(header, stored[end:], senders)


def _senders_end(stored: bytes) -> int:
    """Where a ``B`` record's senders end and its body begins (after the u32 count)."""
    return 4 + 20 * (_U32.unpack_from(stored)[0] if len(stored) >= 4 else 0)


def _release_at_exit() -> None:
    """Close open stores and drop py-evm's and trie's module-level caches that reach them (left
    to teardown, Python prints a spurious "Error in sys.excepthook" at every exit)."""
    for backend in list(_OPEN):
        backend.close()
    HexaryTrie._cached_create_node_to_db_mapping.cache_clear()
    ChainDB._get_block_transactions.cache_clear()
    ChainDB._get_block_withdrawals.cache_clear()
    gc.collect()


_OPEN: weakref.WeakSet[KeyValueBackend] = weakref.WeakSet()
atexit.register(_release_at_exit)


class KeyValueBackend(CachedHistory):
    """A chain with its state, in the record store ``store`` (which it owns and closes)."""

    def __init__(self, store: RecordStore, *, cache_blocks: int = 4096) -> None:
        self.store = store
        schema = store.get(_SCHEMA_KEY)
        if schema is None:
            if store.get(_POINTER_KEYS["latest"]) is not None or store.read_only:
                store.close()
                raise StoreError(f"{store.describe()} is not an ethread store")
            store.write({_SCHEMA_KEY: SCHEMA})
        elif schema != SCHEMA:
            store.close()
            raise StoreError(f"{store.describe()} holds an unknown store layout {schema!r}")
        _OPEN.add(self)
        self._pending: dict[bytes, bytes | None] | None = None
        self._get_many: Callable[[tuple[bytes, ...]], list[bytes | None]] | None = getattr(
            store, "get_many", None)
        self._staged_pointers: dict[str, int] = {}
        self._staged_cache: list[tuple[Block, Sequence[Receipt]]] = []
        self._depth = 0
        self._lock = threading.RLock()
        self._seen_version = store.version()
        self._follow_after = 0.0
        self._pointers: dict[str, int] = self._load_pointers()
        self._config = self._load_config()
        self._generation = self._pointers.get("latest", -1) + 1
        self._evm = ChainDB(AtomicDB(_EvmStore(self)))
        super().__init__(_Records(self), cache_blocks)

    # -- lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        """Release the store (and any lock on it) for another process."""
        self.store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        kind, path = type(self).__name__, str(self.store.path)
        if self.store.closed:
            return f"{kind}(path={path}, closed)"
        return summary.backend_repr(self, kind, {"path": path})

    def _repr_html_(self) -> str:
        kind, path = type(self).__name__, str(self.store.path)
        if self.store.closed:
            return html_table(kind, [("path", path), ("state", "closed")])
        return summary.backend_html(self, kind, {"path": path})

    # -- raw access ---------------------------------------------------------------------------

    def _read(self, key: bytes) -> bytes | None:
        pending = self._pending
        if pending is not None and key in pending:
            return pending[key]
        return self.store.get(key)

    def _read_many(self, keys: tuple[bytes, ...]) -> list[bytes | None]:
        """The values at ``keys``, read together (in one transaction where the engine can)."""
        if self._pending is None and self._get_many is not None:
            return self._get_many(keys)
        return [self._read(key) for key in keys]

    def _write(self, key: bytes, value: bytes | None) -> None:
        if self._pending is not None:
            self._pending[key] = value
        else:
            # Outside an import (an eth_call that persists trie nodes): content-addressed
            # nodes are safe to keep.
            self.store.write({key: value})

    # -- reading (history comes from CachedHistory) --------------------------------------------

    def _raw_block(self, number: int, block_hash: Hash32, receipts: bool) -> RawBlock | None:
        """Block ``number``'s records (see :meth:`CachedHistory.raw_blocks`), senders as stored."""
        found = self._read_many((b"H" + block_hash, b"B" + block_hash, b"R" + block_hash)
                                if receipts else (b"H" + block_hash, b"B" + block_hash))
        header, stored = found[0], found[1]
        if header is None or stored is None:
            return None
        end = _senders_end(stored)
        return RawBlock(number, header, stored[end:], found[2] if receipts else None,
                        stored[4:end])

    def health_problem(self, samples: int = 8) -> str | None:
        """None when the store reads: no read failed since it was opened, and the head and
        ``samples`` random blocks read afresh (checksums verified, header decoding to its hash)."""
        if self.store.failure is not None:
            return self.store.failure
        self._follow()
        head = self._pointers.get("latest")
        if head is None:
            return None
        for number in {head, *(random.randint(0, head) for _ in range(samples))}:
            try:
                problem = self._block_problem(number)
            except StoreError as exc:
                return exc.message
            if problem is not None:
                return problem
        return None

    def _block_problem(self, number: int) -> str | None:
        block_hash = self.store.get(b"N" + _num(number))
        if block_hash is None:
            return f"the chain store has lost block {number}"
        raw = self.store.get(b"H" + block_hash)
        if raw is None or self.store.get(b"B" + block_hash) is None \
                or self.store.get(b"R" + block_hash) is None:
            return f"the chain store has lost records of block {number}"
        try:
            if decode_header(raw).hash == block_hash:
                return None
        except Exception:
            pass
        return f"the chain store holds a damaged header of block {number}"

    def pointer(self, name: Pointer) -> int | None:
        """The block number of a named pointer, or None while the store is empty."""
        self._follow()
        return pointer_number(name, self._pointers.get("latest"), self._pointers)

    def chain_config(self) -> ChainConfig | None:
        """The fork schedule stored at import, or None before a genesis was imported."""
        if self._config is None:
            self._follow()
        return self._config

    def evm_database(self) -> ChainDatabaseAPI:
        """The py-evm database over this store's state nodes."""
        return self._evm

    def generation(self) -> int:
        """A counter that changes whenever the store's content does (another process's writes too)."""
        self._follow()
        return self._generation

    # -- writing -------------------------------------------------------------------------------

    @contextmanager
    def import_batch(self) -> Iterator[None]:
        """Collect every write (state nodes included) and apply them in one batch."""
        with self._lock:
            outer = self._depth == 0
            if outer:
                self._pending = {}
                self._staged_pointers = {}
                self._staged_cache = []
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                if outer:
                    self._pending = None
                raise
            self._depth -= 1
            if outer:
                pending, self._pending = self._pending, None
                self._commit(pending or {}, self._staged_pointers)
                for block, receipts in self._staged_cache:
                    self.remember(block, receipts)
                self._staged_cache = []

    def _commit(self, pending: dict[bytes, bytes | None], pointers: dict[str, int]) -> None:
        self.store.write(pending)
        if pointers:
            self._pointers = {**self._pointers, **pointers}
            self._generation += 1

    def store_chain_config(self, config: ChainConfig) -> None:
        """Store the chain's fork schedule."""
        document = {
            "chain_id": config.chain_id,
            "block_forks": [list(f) for f in config.block_forks],
            "time_forks": [list(f) for f in config.time_forks],
            "blob_fractions": config.blob_fractions,
            "dao_fork_block": config.dao_fork_block,
            "source": config.source,
        }
        self._write(_CONFIG_KEY, json.dumps(document).encode())
        self._config = config

    def _load_pointers(self) -> dict[str, int]:
        pointers: dict[str, int] = {}
        for name, key in _POINTER_KEYS.items():
            raw = self.store.get(key)
            if raw is not None:
                pointers[name] = _NUM.unpack(raw)[0]
        return pointers

    def _follow(self) -> None:
        """Pick up the pointers and config another process wrote to a shared store (a new
        generation when pointers moved), checking at most once per :data:`FOLLOW_INTERVAL`;
        history records never change once written, so the block caches stay."""
        if not self.store.shared:
            return
        now = time.monotonic()
        if now < self._follow_after:
            return
        self._follow_after = now + FOLLOW_INTERVAL
        version = self.store.version()
        if version == self._seen_version:
            return
        self._seen_version = version
        pointers = self._load_pointers()
        if pointers != self._pointers:
            self._pointers = pointers
            self._generation += 1
        if self._config is None:
            self._config = self._load_config()

    def _load_config(self) -> ChainConfig | None:
        raw = self.store.get(_CONFIG_KEY)
        if raw is None:
            return None
        try:
            doc = json.loads(raw)
            if doc.get("source"):
                # The genesis config it came from: read again, under today's fork table.
                return ChainConfig.from_genesis_config(doc["source"])
            return ChainConfig(
                chain_id=int(doc["chain_id"]),
                block_forks=tuple((int(n), str(f)) for n, f in doc["block_forks"]),
                time_forks=tuple((int(n), str(f)) for n, f in doc["time_forks"]),
                dao_fork_block=doc["dao_fork_block"],
            )
        except (ValueError, KeyError, TypeError, GenesisError) as exc:
            raise StoreError(
                f"{self.store.describe()} holds a damaged chain config: {exc}"
            ) from None

    def write_block(self, block: Block, receipts: Sequence[Receipt]) -> None:
        """Store a block and its receipts, with their index entries, as the new head it extends."""
        number = block.number
        head = self._staged_head()
        expected = 0 if head is None else head + 1
        if number != expected:
            raise ValueError(f"block {number} does not extend the head ({expected - 1})")
        block_hash = block.hash
        senders = b"".join(tx.sender for tx in block.transactions)
        put = self._write
        put(b"N" + _num(number), block_hash)
        put(b"H" + block_hash, encode_header(block.header))
        put(b"B" + block_hash, _U32.pack(len(block.transactions)) + senders
            + body_rlp(block))
        put(b"R" + block_hash, encode_receipts(receipts))
        for tx in block.transactions:
            put(b"T" + tx.hash, block_hash + _U32.pack(tx.index))
        addresses, topics = log_keys(receipts)
        suffix = _num(number)
        for address in addresses:
            put(b"A" + address + suffix, b"")
        for position, topic in topics:
            if position < 256:
                put(b"P" + bytes([position]) + topic + suffix, b"")
        if addresses:
            put(b"L" + suffix, encode_block_logs(block_hash, block.header.timestamp, receipts))
        self._stage_pointer("latest", number)
        if self._pending is not None:
            self._staged_cache.append((block, receipts))

    def answer_record(self, name: bytes, block_hash: Hash32) -> bytes | None:
        """The answer kept under ``name`` beside the block with this hash, or None."""
        return self._read(_answer_key(name, block_hash))

    def put_answer_record(self, name: bytes, block_hash: Hash32, answer: bytes) -> None:
        """Keep ``answer`` under ``name`` beside a held block (in the current batch, if any)."""
        if self._read(b"H" + block_hash) is None:
            raise ValueError(f"block 0x{block_hash.hex()} is not held")
        self._write(_answer_key(name, block_hash), answer)

    def drop_answer_records(self, keep: frozenset[bytes], batch_size: int = 4096) -> int:
        """Delete every kept answer whose name is not in ``keep``, ``batch_size`` a write; how many."""
        dropped = 0
        batch: dict[bytes, bytes | None] = {}
        for key in self.store.keys(b"D", b"E"):
            if key[2:2 + key[1]] not in keep:
                batch[key] = None
                if len(batch) >= batch_size:
                    self.store.write(batch)
                    dropped += len(batch)
                    batch = {}
        self.store.write(batch)
        return dropped + len(batch)

    def _staged_head(self) -> int | None:
        if self._pending is not None and "latest" in self._staged_pointers:
            return self._staged_pointers["latest"]
        return self._pointers.get("latest")

    def _stage_pointer(self, name: str, number: int) -> None:
        self._write(_POINTER_KEYS[name], _num(number))
        if self._pending is not None:
            self._staged_pointers[name] = number
        else:
            self._pointers = {**self._pointers, name: number}
            self._generation += 1

    def set_pointer(self, name: Literal["safe", "finalized"], number: int) -> None:
        """Move the ``safe`` or ``finalized`` pointer to a held block (in the current batch, if any)."""
        if name not in ("safe", "finalized"):
            raise ValueError(f"unknown pointer {name!r}")
        head = self._staged_head()
        if head is None or not 0 <= number <= head:
            raise ValueError(f"block {number} is not held")
        self._stage_pointer(name, number)


def copy_records(source: KeyValueBackend, target: KeyValueBackend, *,
                 batch_size: int = 4096) -> int:
    """Copy every record of ``source`` into ``target``, returning how many. The meta records go
    last in one batch (an interrupted copy leaves no head); a target holding a chain is refused."""
    if target.pointer("latest") is not None:
        raise StoreError(f"{target.store.describe()} already holds a chain: copy into a new "
                         "store")
    count = 0
    batch: dict[bytes, bytes | None] = {}
    meta: dict[bytes, bytes | None] = {}
    for key in source.store.keys(b"", b"\xff"):
        value = source.store.get(key)
        if value is None:
            continue
        (meta if key.startswith(_META) else batch)[key] = value
        count += 1
        if len(batch) >= batch_size:
            target.store.write(batch)
            batch = {}
    target.store.write(batch)
    target.store.write(meta)
    target._pointers = target._load_pointers()
    target._config = target._load_config()
    target._generation += 1
    return count
