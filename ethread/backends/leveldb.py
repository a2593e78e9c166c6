"""A persistent backend in one LevelDB database (through plyvel).

Everything lives under one-letter key prefixes of a single database, so that one write batch
can carry a whole block: its state trie nodes, its header and body, its receipts, its
transaction and log index entries and the new head pointer. LevelDB applies a batch entirely
or not at all, so a crash during an import leaves a store that holds every block written
before it and none of the interrupted one; the importer then resumes past what is held.

Key layout (numbers are 8-byte big-endian so that keys sort in chain order)::

    M<name>                        meta: head, safe, finalized, config (JSON)
    N<number>        -> hash       canonical chain
    H<hash>          -> header RLP
    B<hash>          -> u32 tx count, senders (20 bytes each), body RLP
    R<hash>          -> receipts in consensus RLP
    T<tx hash>       -> block hash, u32 index
    A<address><number>             log index: blocks where an address logged
    P<position><topic><number>     log index: blocks where a topic stood at a position
    L<number>        -> logs       blocks with any log, each with its logs in one compact record
    E<key>           -> value      py-evm's chain database (state trie nodes, headers)

Opening reads three meta keys and nothing else: no rescan.
"""

from __future__ import annotations

import atexit
import gc
import json
import struct
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import plyvel
from eth.db.atomic import AtomicDB
from eth.db.backends.base import BaseDB
from eth.db.chain import ChainDB
from trie import HexaryTrie

from .. import canonical
from ..backend import LogQuery, Pointer, pointer_number
from ..encoding import DecodeError, decode_header, encode_header
from ..errors import StoreError
from ..forks import ChainConfig
from ..models import Block, Hash32, Header, Log, Receipt
from .cache import LRU
from .logindex import (
    candidate_blocks,
    collect_logs,
    decode_block_logs,
    encode_block_logs,
    log_keys,
    logs_of_receipts,
)

T = TypeVar("T")

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
_TOMBSTONE = None


def _num(number: int) -> bytes:
    return _NUM.pack(number)


class _EvmStore(BaseDB):
    """py-evm's key-value view of the store: keys under the ``E`` prefix.

    Inside an import batch, writes collect in the backend's pending batch (and reads see
    them), so the state nodes of a block land in the same LevelDB write as the block.
    """

    def __init__(self, backend: LevelDBBackend) -> None:
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
        self._backend._write(b"E" + key, _TOMBSTONE)

    def _exists(self, key: bytes) -> bool:
        return self._backend._read(b"E" + key) is not None


def _release_at_exit() -> None:
    """Close open stores and drop the process-wide caches that reach them.

    py-evm and trie keep recent tries and chain databases in module-level LRU caches; left to
    interpreter teardown, the LevelDB handle those reach is destroyed after the modules it
    needs, and Python prints a spurious "Error in sys.excepthook" at every exit.
    """
    for backend in list(_OPEN):
        backend.close()
    HexaryTrie._cached_create_node_to_db_mapping.cache_clear()
    ChainDB._get_block_transactions.cache_clear()
    ChainDB._get_block_withdrawals.cache_clear()
    gc.collect()


_OPEN: weakref.WeakSet[LevelDBBackend] = weakref.WeakSet()
atexit.register(_release_at_exit)


class LevelDBBackend:
    """A chain with its state, stored in a LevelDB directory at ``path``.

    Only one process may hold a store at a time (LevelDB's own lock); a second one gets a
    :class:`~ethread.errors.StoreError`. ``create`` says whether a missing store may be made.
    """

    def __init__(self, path: str | Path, *, create: bool = True, cache_blocks: int = 4096) -> None:
        self.path = Path(path)
        if not create and not (self.path / "CURRENT").exists():
            raise StoreError(f"no ethread store at {self.path}")
        try:
            self._db = plyvel.DB(str(self.path), create_if_missing=create)
            _OPEN.add(self)
        except plyvel.IOError as exc:
            text = str(exc)
            if "lock" in text.lower():
                raise StoreError(
                    f"the store at {self.path} is in use by another process "
                    "(LevelDB allows one process at a time)"
                ) from None
            raise StoreError(f"cannot open the store at {self.path}: {text}") from None
        except plyvel.Error as exc:
            raise StoreError(f"the store at {self.path} is damaged: {exc}") from None
        schema = self._db.get(_SCHEMA_KEY)
        if schema is None:
            if self._db.get(_POINTER_KEYS["latest"]) is not None:
                self._db.close()
                raise StoreError(f"{self.path} is not an ethread store")
            self._db.put(_SCHEMA_KEY, SCHEMA)
        elif schema != SCHEMA:
            self._db.close()
            raise StoreError(f"{self.path} holds an unknown store layout {schema!r}")
        self._pending: dict[bytes, bytes | None] | None = None
        self._staged_pointers: dict[str, int] = {}
        self._staged_cache: list[tuple[Block, tuple[Receipt, ...]]] = []
        self._depth = 0
        self._lock = threading.RLock()
        self._pointers: dict[str, int] = {}
        for name, key in _POINTER_KEYS.items():
            raw = self._db.get(key)
            if raw is not None:
                self._pointers[name] = _NUM.unpack(raw)[0]
        self._config = self._load_config()
        self._generation = self._pointers.get("latest", -1) + 1
        self._evm = ChainDB(AtomicDB(_EvmStore(self)))
        self._headers: LRU[Hash32, Header] = LRU(cache_blocks * 4)
        self._blocks: LRU[Hash32, Block] = LRU(cache_blocks)
        self._receipts: LRU[Hash32, tuple[Receipt, ...]] = LRU(cache_blocks)

    # -- lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        """Release the store (and its lock) for another process."""
        if not self._db.closed:
            self._db.close()

    def __enter__(self) -> LevelDBBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- raw access ---------------------------------------------------------------------------

    def _read(self, key: bytes) -> bytes | None:
        pending = self._pending
        if pending is not None and key in pending:
            return pending[key]
        try:
            value: bytes | None = self._db.get(key)
        except plyvel.Error as exc:
            raise StoreError(f"the store at {self.path} failed a read: {exc}") from None
        except RuntimeError:
            raise StoreError(f"the store at {self.path} is closed") from None
        return value

    def _write(self, key: bytes, value: bytes | None) -> None:
        if self._pending is not None:
            self._pending[key] = value
        elif value is None:
            self._db.delete(key)
        else:
            # Outside an import (an eth_call that persists trie nodes): content-addressed
            # nodes are safe to keep.
            self._db.put(key, value)

    # -- reading -------------------------------------------------------------------------------

    def header_by_hash(self, block_hash: Hash32) -> Header | None:
        header = self._headers.get(block_hash)
        if header is not None:
            return header
        raw = self._read(b"H" + block_hash)
        if raw is None:
            return None
        header = self._decode(decode_header, raw)
        self._headers.put(block_hash, header)
        return header

    def canonical_hash(self, number: int) -> Hash32 | None:
        head = self._pointers.get("latest")
        if head is None or not 0 <= number <= head:
            return None
        return self._read(b"N" + _num(number))

    def block_by_hash(self, block_hash: Hash32) -> Block | None:
        block = self._blocks.get(block_hash)
        if block is not None:
            return block
        header_raw = self._read(b"H" + block_hash)
        stored = self._read(b"B" + block_hash)
        if header_raw is None or stored is None:
            return None
        count = _U32.unpack_from(stored)[0]
        end = 4 + 20 * count
        senders = [stored[i:i + 20] for i in range(4, end, 20)]
        block = self._decode(canonical.block_from_parts, header_raw, stored[end:], senders)
        self._blocks.put(block_hash, block)
        return block

    def transaction_location(self, tx_hash: Hash32) -> tuple[Hash32, int] | None:
        raw = self._read(b"T" + tx_hash)
        if raw is None:
            return None
        return raw[:32], _U32.unpack_from(raw, 32)[0]

    def receipts(self, block_hash: Hash32) -> tuple[Receipt, ...] | None:
        cached = self._receipts.get(block_hash)
        if cached is not None:
            return cached
        raw = self._read(b"R" + block_hash)
        block = self.block_by_hash(block_hash)
        if raw is None or block is None:
            return None
        receipts = self._decode(canonical.receipts_from_consensus, block, raw, self._config)
        self._receipts.put(block_hash, receipts)
        return receipts

    def pointer(self, name: Pointer) -> int | None:
        return pointer_number(name, self._pointers.get("latest"), self._pointers)

    def chain_config(self) -> ChainConfig | None:
        return self._config

    def evm_database(self) -> ChainDatabaseAPI:
        return self._evm

    def generation(self) -> int:
        return self._generation

    def logs(self, query: LogQuery) -> list[Log]:
        def postings(prefix: bytes) -> Any:
            def scan(lo: int, hi: int) -> Iterator[int]:
                if lo > hi:
                    return
                for key in self._db.iterator(start=prefix + _num(lo), stop=prefix + _num(hi + 1),
                                             include_value=False):
                    yield _NUM.unpack_from(key, len(key) - 8)[0]
            return scan

        candidates = candidate_blocks(
            query,
            lambda address: postings(b"A" + address),
            lambda position, topic: postings(b"P" + bytes([position]) + topic),
            postings(b"L"),
        )
        return collect_logs(query, candidates, self._logs_at)

    def _logs_at(self, number: int) -> Iterable[Log]:
        raw = self._read(b"L" + _num(number))
        if raw:
            return self._decode(decode_block_logs, number, raw)
        return logs_of_receipts(self._receipts_at(number))  # a store written before log records

    def _receipts_at(self, number: int) -> Sequence[Receipt]:
        block_hash = self.canonical_hash(number)
        receipts = self.receipts(block_hash) if block_hash is not None else None
        if receipts is None:
            raise StoreError(f"the store at {self.path} indexes logs of block {number} "
                             "but holds no receipts for it")
        return receipts

    def _decode(self, fn: Callable[..., T], *args: Any) -> T:
        try:
            return fn(*args)
        except (DecodeError, ValueError, IndexError) as exc:
            raise StoreError(f"the store at {self.path} holds a damaged record: {exc}") from None

    # -- writing -------------------------------------------------------------------------------

    @contextmanager
    def import_batch(self) -> Iterator[None]:
        """Collect every write (state nodes included) and apply them in one LevelDB batch."""
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
                    self._blocks.put(block.hash, block)
                    self._receipts.put(block.hash, receipts)
                self._staged_cache = []

    def _commit(self, pending: dict[bytes, bytes | None], pointers: dict[str, int]) -> None:
        try:
            with self._db.write_batch(transaction=True) as batch:
                for key, value in pending.items():
                    if value is None:
                        batch.delete(key)
                    else:
                        batch.put(key, value)
        except plyvel.Error as exc:
            raise StoreError(f"the store at {self.path} failed a write: {exc}") from None
        if pointers:
            self._pointers.update(pointers)
            self._generation += 1

    def _put(self, key: bytes, value: bytes) -> None:
        if self._pending is not None:
            self._pending[key] = value
        else:
            self._db.put(key, value)

    def store_chain_config(self, config: ChainConfig) -> None:
        document = {
            "chain_id": config.chain_id,
            "block_forks": [list(f) for f in config.block_forks],
            "time_forks": [list(f) for f in config.time_forks],
            "blob_fractions": config.blob_fractions,
            "dao_fork_block": config.dao_fork_block,
            "source": config.source,
        }
        self._put(_CONFIG_KEY, json.dumps(document).encode())
        self._config = config

    def _load_config(self) -> ChainConfig | None:
        raw = self._db.get(_CONFIG_KEY)
        if raw is None:
            return None
        try:
            doc = json.loads(raw)
            return ChainConfig(
                chain_id=int(doc["chain_id"]),
                block_forks=tuple((int(n), str(f)) for n, f in doc["block_forks"]),
                time_forks=tuple((int(n), str(f)) for n, f in doc["time_forks"]),
                blob_fractions={str(k): int(v) for k, v in doc["blob_fractions"].items()},
                dao_fork_block=doc["dao_fork_block"],
                source=doc.get("source") or {},
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise StoreError(
                f"the store at {self.path} holds a damaged chain config: {exc}"
            ) from None

    def write_block(self, block: Block, receipts: Sequence[Receipt]) -> None:
        number = block.number
        head = self._staged_head()
        expected = 0 if head is None else head + 1
        if number != expected:
            raise ValueError(f"block {number} does not extend the head ({expected - 1})")
        block_hash = block.hash
        senders = b"".join(tx.sender for tx in block.transactions)
        self._put(b"N" + _num(number), block_hash)
        self._put(b"H" + block_hash, encode_header(block.header))
        self._put(b"B" + block_hash, _U32.pack(len(block.transactions)) + senders
                  + canonical.body_rlp(block))
        self._put(b"R" + block_hash, canonical.encode_receipts(receipts))
        for tx in block.transactions:
            self._put(b"T" + tx.hash, block_hash + _U32.pack(tx.index))
        addresses, topics = log_keys(receipts)
        suffix = _num(number)
        for address in addresses:
            self._put(b"A" + address + suffix, b"")
        for position, topic in topics:
            if position < 256:
                self._put(b"P" + bytes([position]) + topic + suffix, b"")
        if addresses:
            self._put(b"L" + suffix, encode_block_logs(block_hash, block.header.timestamp, receipts))
        self._stage_pointer("latest", number)
        if self._pending is not None:
            self._staged_cache.append((block, tuple(receipts)))

    def _staged_head(self) -> int | None:
        if self._pending is not None and "latest" in self._staged_pointers:
            return self._staged_pointers["latest"]
        return self._pointers.get("latest")

    def _stage_pointer(self, name: str, number: int) -> None:
        self._put(_POINTER_KEYS[name], _num(number))
        if self._pending is not None:
            self._staged_pointers[name] = number
        else:
            self._pointers[name] = number
            self._generation += 1

    def set_pointer(self, name: Literal["safe", "finalized"], number: int) -> None:
        if name not in ("safe", "finalized"):
            raise ValueError(f"unknown pointer {name!r}")
        head = self._staged_head()
        if head is None or not 0 <= number <= head:
            raise ValueError(f"block {number} is not held")
        self._stage_pointer(name, number)
