"""The sidecar index of an Era1 folder, in SQLite.

Era1 files answer "block N" by themselves, but not "block with hash H", "transaction with
hash T", "who sent it" or "which blocks logged address A". Those need every header, body and
receipt of a file decoded once (and every sender recovered from its signature, the slow part),
so the answers are kept in a SQLite file beside the archives: built the first time a file is
seen, then only read. SQLite lets several processes serve one folder and lets one of them
build while the others wait, and a file is indexed in one transaction, so a killed build
leaves no partial entries.

While indexing, the accumulator of the file is recomputed from its headers and total
difficulties and compared with the one it stores: a file is never indexed unverified.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import rlp
from eth_utils import keccak

from ..canonical import decode_consensus_receipts, recover_senders
from ..encoding import DecodeError
from ..era1.accumulator import accumulator_root
from ..era1.archive import ArchiveFile
from ..era1.e2store import FormatError
from ..models import Address, Hash32
from ..progress import Progress
from .logindex import encode_log_record

SCHEMA = """
CREATE TABLE IF NOT EXISTS files(name TEXT PRIMARY KEY, start INTEGER, count INTEGER);
CREATE TABLE IF NOT EXISTS blocks(number INTEGER PRIMARY KEY, hash BLOB NOT NULL,
                                  senders BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS blocks_by_hash ON blocks(hash);
CREATE TABLE IF NOT EXISTS txs(hash BLOB PRIMARY KEY, number INTEGER, position INTEGER)
    WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS log_address(address BLOB, number INTEGER,
                                       PRIMARY KEY(address, number)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS log_topic(position INTEGER, topic BLOB, number INTEGER,
                                     PRIMARY KEY(position, topic, number)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS log_blocks(number INTEGER PRIMARY KEY, logs BLOB);
"""



class HistoryIndex:
    """Hash, transaction, sender and log lookups over the files of one Era1 folder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, timeout=600, isolation_level=None,
                                       check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise FormatError(str(path), 0, f"cannot open the Era1 index: {exc}") from None
        self._lock = threading.Lock()

    def close(self) -> None:
        """Close the index's SQLite database."""
        self._db.close()

    def _one(self, sql: str, *args: object) -> tuple[Any, ...] | None:
        with self._lock:
            row: tuple[Any, ...] | None = self._db.execute(sql, args).fetchone()
            return row

    # -- building --------------------------------------------------------------------------

    def has_file(self, name: str) -> bool:
        """Whether the Era1 file of this name has been indexed."""
        return self._one("SELECT 1 FROM files WHERE name = ?", name) is not None

    def ensure(self, era: ArchiveFile, progress: Progress | None = None) -> None:
        """Index ``era`` unless it already is (by this process or another one)."""
        name = era.path.name
        if self.has_file(name):
            return
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")  # waits while another process builds
            try:
                if self._db.execute("SELECT 1 FROM files WHERE name = ?", (name,)).fetchone():
                    self._db.execute("ROLLBACK")
                    return
                self._index_file(era, progress)
                self._db.execute("INSERT INTO files VALUES (?, ?, ?)", (name, era.start, era.count))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def _index_file(self, era: ArchiveFile, progress: Progress | None) -> None:
        db = self._db
        records: list[tuple[Hash32, int]] = []
        for number in range(era.start, era.end):
            header, body, receipts, td = era.raw_tuple(number)
            block_hash = keccak(header)
            try:
                # Era1's accumulator covers every block; ere's only the proof-of-work ones.
                if td is not None and (era.kind == "era1" or rlp.decode(header)[7]):
                    records.append((block_hash, td))
                senders = recover_senders(body)
                tx_items = rlp.decode(body)[0]
                consensus = decode_consensus_receipts(receipts) if receipts is not None else []
            except (DecodeError, rlp.DecodingError, IndexError) as exc:
                raise FormatError(str(era.path), era.offset(number),
                                  f"block {number}: {exc}") from None
            db.execute("INSERT OR REPLACE INTO blocks VALUES (?, ?, ?)",
                       (number, block_hash, b"".join(senders)))
            tx_hashes = [keccak(rlp.encode(item)) if isinstance(item, list) else keccak(item)
                         for item in tx_items]
            db.executemany("INSERT OR REPLACE INTO txs VALUES (?, ?, ?)",
                           [(tx_hash, number, i) for i, tx_hash in enumerate(tx_hashes)])
            addresses: set[Address] = set()
            topics: set[tuple[int, bytes]] = set()
            entries = []
            for position, receipt in enumerate(consensus):
                raw_logs = [(log.address, [t.to_bytes(32, "big") for t in log.topics], log.data)
                            for log in receipt.logs]
                entries.append((position, tx_hashes[position], raw_logs))
                for address, log_topics, _ in raw_logs:
                    addresses.add(address)
                    topics.update(enumerate(log_topics))
            if addresses:
                db.executemany("INSERT OR IGNORE INTO log_address VALUES (?, ?)",
                               [(a, number) for a in addresses])
                db.executemany("INSERT OR IGNORE INTO log_topic VALUES (?, ?, ?)",
                               [(p, t, number) for p, t in topics])
                timestamp = int.from_bytes(rlp.decode(header)[11], "big")
                db.execute("INSERT OR IGNORE INTO log_blocks VALUES (?, ?)",
                           (number, encode_log_record(block_hash, timestamp, entries)))
            if progress is not None and (number - era.start) % 512 == 511:
                progress(number - era.start + 1, era.count)
        stored = era.accumulator()
        if stored is not None and accumulator_root(records) != stored:
            raise FormatError(str(era.path), era.size - 1,
                              "corrupted: the accumulator recomputed from the headers and total "
                              "difficulties differs from the one the file stores")

    # -- reading ---------------------------------------------------------------------------

    def number_of(self, block_hash: Hash32) -> int | None:
        """The number of the block with this hash, or None if it is not indexed."""
        row = self._one("SELECT number FROM blocks WHERE hash = ?", block_hash)
        return int(row[0]) if row is not None else None

    def hash_at(self, number: int) -> Hash32 | None:
        """The hash of block ``number``, or None if no indexed file holds it."""
        row = self._one("SELECT hash FROM blocks WHERE number = ?", number)
        return bytes(row[0]) if row is not None else None

    def senders(self, number: int) -> list[Address] | None:
        """The senders of block ``number``'s transactions in order (recovered once, when the file
        was indexed), or None."""
        row = self._one("SELECT senders FROM blocks WHERE number = ?", number)
        if row is None:
            return None
        blob = bytes(row[0])
        return [blob[i:i + 20] for i in range(0, len(blob), 20)]

    def senders_between(self, lo: int, hi: int) -> dict[int, bytes]:
        """The senders of every indexed block in ``[lo, hi]``, 20 bytes each concatenated, by
        number: one query for a whole file's worth of blocks."""
        with self._lock:
            rows = self._db.execute("SELECT number, senders FROM blocks WHERE number BETWEEN ? "
                                    "AND ?", (lo, hi)).fetchall()
        return {int(number): bytes(senders) for number, senders in rows}

    def transaction(self, tx_hash: Hash32) -> tuple[int, int] | None:
        """(block number, index in block) of the transaction with this hash, or None."""
        row = self._one("SELECT number, position FROM txs WHERE hash = ?", tx_hash)
        return (int(row[0]), int(row[1])) if row is not None else None

    def _numbers(self, sql: str, *args: object) -> Iterator[int]:
        with self._lock:
            rows = self._db.execute(sql, args).fetchall()
        return (int(r[0]) for r in rows)

    def blocks_with_address(self, address: Address, lo: int, hi: int) -> Iterator[int]:
        """Numbers of the blocks in ``[lo, hi]`` holding a log emitted by ``address``, ascending.
        """
        return self._numbers("SELECT number FROM log_address WHERE address = ? AND number "
                             "BETWEEN ? AND ? ORDER BY number", address, lo, hi)

    def blocks_with_topic(self, position: int, topic: Hash32, lo: int, hi: int) -> Iterator[int]:
        """Numbers of the blocks in ``[lo, hi]`` holding a log with ``topic`` at ``position``,
        ascending."""
        return self._numbers("SELECT number FROM log_topic WHERE position = ? AND topic = ? AND "
                             "number BETWEEN ? AND ? ORDER BY number", position, topic, lo, hi)

    def blocks_with_logs(self, lo: int, hi: int) -> Iterator[int]:
        """Numbers of the blocks in ``[lo, hi]`` holding any log, ascending."""
        return self._numbers("SELECT number FROM log_blocks WHERE number BETWEEN ? AND ? "
                             "ORDER BY number", lo, hi)

    def block_logs(self, number: int) -> bytes | None:
        """The block's compact log record, or None."""
        row = self._one("SELECT logs FROM log_blocks WHERE number = ?", number)
        return None if row is None or row[0] is None else bytes(row[0])
