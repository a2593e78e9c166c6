"""The credit ledger in a memory-mapped file, shared by every process of one machine
(docs/scaling.md, "The ledger", compares the engines).

A fixed table of slots, one per key charged recently, mapped ``MAP_SHARED``; a charge holds an
exclusive ``flock`` on the file while it reads and writes the key's slot (a busy worker's turn
is charged under one hold: :meth:`MappedLedger.charge_many`). The kernel drops the lock when a
process dies.

Layout (8-byte words in the machine's byte order): a header of 8 words (magic ``ETHLEDGR``,
version, slot count, words per slot, byte-order mark), then slots of 8 words:

- ``tag_a``, ``tag_b``: a 128-bit digest of the key id (``tag_a`` is 0 only in a slot never
  used, which ends a probe chain). Linear probing; a slot is never emptied, only given to
  another key once its usage is of an earlier day and its rate bucket is full again.
- ``day``: the UTC day number (Unix time // 86400) that ``used`` counts; ``used``: credits.
- ``empty_at`` (a double): when the rate bucket was (or will be) empty, so that it holds
  ``min(rate, (now - empty_at) * rate)``; 0 is a full bucket.

Each field is one aligned 8-byte store, so a killed process leaves each word old or new, and
the writes are ordered so that any prefix is harmless: ``tag_a`` is written last, a new day
zeroes ``used`` before it changes ``day``, the debit is stored before the bucket. A kill loses
no debit; an OS crash can lose what was not written back (no fsync per charge).

When all :data:`DEFAULT_SLOTS` slots hold keys charged today, a new key is refused with
:class:`~.ledger.LedgerUnavailable` (HTTP 503), never by dropping another key's usage. The
file must be on a local disk (``flock``). A file whose header, size, version or slots disagree
is refused with :class:`~.ledger.LedgerError` and never rewritten.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import math
import mmap
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable, Sequence

from .ledger import (
    DAILY_LIMIT_REACHED,
    Charge,
    LedgerError,
    LedgerUnavailable,
    Refusal,
    rate_refusal,
    seconds_to_reset,
    unavailable,
)

MAGIC = b"ETHLEDGR"
VERSION = 1
HEADER_WORDS = 8
SLOT_WORDS = 8
WORD = 8
BYTE_ORDER = 0x0102030405060708
"""A header word that reads back as itself only on a machine of the writer's byte order."""
DEFAULT_SLOTS = 65_536
"""Keys the default file holds at once (a key's slot is reused the day after its last charge)."""
MAX_SLOTS = 1 << 24

TAG_A, TAG_B, DAY, USED, EMPTY_AT = range(5)
INT64_MAX = (1 << 63) - 1
SECONDS_PER_DAY = 86_400

flock = fcntl.flock
LOCK_EX, LOCK_UN = fcntl.LOCK_EX, fcntl.LOCK_UN
_log = logging.getLogger(__name__)
_open_ledgers: weakref.WeakSet[MappedLedger] = weakref.WeakSet()


def _reopen_after_fork() -> None:
    """A forked child shares its parent's open file, and with it the parent's ``flock``: each
    ledger the child inherited gets a file of its own, so the two lock against each other."""
    for ledger in list(_open_ledgers):
        ledger._after_fork()


os.register_at_fork(after_in_child=_reopen_after_fork)


def file_size(slots: int) -> int:
    """Bytes of a ledger file holding ``slots`` keys."""
    return (HEADER_WORDS + slots * SLOT_WORDS) * WORD


def key_tags(key_id: str) -> tuple[int, int]:
    """The two words that name a key id in its slot (``tag_a`` never 0)."""
    digest = hashlib.blake2b(key_id.encode(), digest_size=16).digest()
    tag_a = int.from_bytes(digest[:8], "little", signed=True) | 1
    return tag_a, int.from_bytes(digest[8:], "little", signed=True)


class MappedLedger:
    """Daily usage and rate buckets per key id in a memory-mapped file."""

    def __init__(self, path: str, *, clock: Callable[[], float] = time.time,
                 slots: int = DEFAULT_SLOTS) -> None:
        if not 1 <= slots <= MAX_SLOTS:
            raise LedgerError(f"a credit ledger holds 1 to {MAX_SLOTS} keys, not {slots}")
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()
        self._places: dict[str, tuple[int, int, int]] = {}
        self._when = (-1, 0.0)  # today's day number, and the instant it ends
        try:
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise LedgerError(f"cannot open the credit ledger {path}: {exc.strerror}") from None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                self.slots = self._prepare(slots)
                self._map = mmap.mmap(self._fd, file_size(self.slots))
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        except OSError as exc:
            os.close(self._fd)
            raise LedgerError(f"cannot open the credit ledger {path}: {exc}") from None
        except LedgerError:
            os.close(self._fd)
            raise
        self._words = memoryview(self._map).cast("q")
        self._reals = memoryview(self._map).cast("d")
        try:
            self._check_slots()
        except LedgerError:
            self._release()
            raise
        _open_ledgers.add(self)

    # -- opening -------------------------------------------------------------------------------

    def _prepare(self, slots: int) -> int:
        """Under the file lock: write the header of a new (empty or all-zero) file, or check an
        existing one; the number of slots it holds."""
        size = os.fstat(self._fd).st_size
        header = os.pread(self._fd, HEADER_WORDS * WORD, 0)
        if size == 0 or (size == file_size(slots) and header == bytes(len(header))):
            # A new file, or one whose creator was killed before it wrote the header (the
            # header is written last): nothing in it was ever a debit.
            os.ftruncate(self._fd, file_size(slots))
            fields = [VERSION, slots, SLOT_WORDS, BYTE_ORDER, 0, 0, 0]
            os.pwrite(self._fd, b"".join(f.to_bytes(WORD, sys.byteorder) for f in fields),
                      WORD)
            os.pwrite(self._fd, MAGIC, 0)
            return slots
        if len(header) < HEADER_WORDS * WORD or header[:WORD] != MAGIC:
            raise LedgerError(f"the credit ledger {self.path} is not an ethread ledger file "
                              f"(a SQLite ledger is named *.sqlite3); it was left as it is")
        version, count, words, order = (
            int.from_bytes(header[i * WORD:(i + 1) * WORD], sys.byteorder) for i in (1, 2, 3, 4))
        if order != BYTE_ORDER:
            raise LedgerError(f"the credit ledger {self.path} was written on a machine of the "
                              f"other byte order; it was left as it is")
        if version != VERSION:
            raise LedgerError(f"the credit ledger {self.path} is format version {version}; "
                              f"this ethread reads version {VERSION}")
        if words != SLOT_WORDS or not 1 <= count <= MAX_SLOTS or size != file_size(count):
            raise LedgerError(f"the credit ledger {self.path} is damaged: its header says "
                              f"{count} slots of {words} words, its size is {size} bytes")
        return count

    def _check_slots(self) -> None:
        """Every used slot holds a plausible day, a non-negative usage and a real bucket;
        anything else is a damaged file, refused rather than trusted or reset."""
        words, reals = self._words, self._reals
        latest = int(self._clock() // SECONDS_PER_DAY) + 2
        for base in range(HEADER_WORDS, HEADER_WORDS + self.slots * SLOT_WORDS, SLOT_WORDS):
            if words[base + TAG_A] == 0:
                continue
            day, used, empty_at = words[base + DAY], words[base + USED], reals[base + EMPTY_AT]
            if not (0 <= day <= latest and used >= 0 and math.isfinite(empty_at)):
                slot = (base - HEADER_WORDS) // SLOT_WORDS
                raise LedgerError(f"the credit ledger {self.path} is damaged (slot {slot}: "
                                  f"day {day}, used {used}, bucket {empty_at}); it was left as "
                                  f"it is")

    def _after_fork(self) -> None:
        self._lock = threading.Lock()
        inherited = self._fd
        self._fd = os.open(self.path, os.O_RDWR | os.O_CLOEXEC)
        os.close(inherited)

    # -- charging ------------------------------------------------------------------------------

    def _today(self, now: float) -> tuple[int, float]:
        """The UTC day number of ``now`` and the instant it ends (one comparison a charge)."""
        when = self._when
        if now >= when[1]:
            day = int(now // SECONDS_PER_DAY)
            when = self._when = (day, float((day + 1) * SECONDS_PER_DAY))
        return when

    def _find(self, key_id: str, now: float, day: int, claim: bool) -> int:
        """Under the file lock: the first word of the key's slot; -1 when it has none and
        ``claim`` is false. A process remembers where each key was; the tags say whether the
        slot still holds it (another process may have given it to another key since)."""
        words = self._words
        place = self._places.get(key_id)
        if place is not None:
            base, tag_a, tag_b = place
            if words[base + TAG_A] == tag_a and words[base + TAG_B] == tag_b:
                return base
        else:
            tag_a, tag_b = key_tags(key_id)
        slots = self.slots
        start = tag_b % slots
        free = -1
        reals = self._reals
        for step in range(slots):
            base = HEADER_WORDS + ((start + step) % slots) * SLOT_WORDS
            held = words[base + TAG_A]
            if held == tag_a and words[base + TAG_B] == tag_b:
                self._remember(key_id, (base, tag_a, tag_b))
                return base
            if held == 0:
                if free < 0:
                    free = base
                break
            if free < 0 and words[base + DAY] != day and now - reals[base + EMPTY_AT] >= 1.0:
                free = base  # a key not charged today with a full bucket: its slot is free
        if not claim:
            return -1
        if free < 0:
            _log.error("the credit ledger %s is full: %d keys charged today", self.path, slots)
            raise LedgerUnavailable(f"the credit ledger {self.path} is full: its {slots} slots "
                                    f"hold keys charged today")
        # Claim: every field before the tags, tag_a last; a kill part-way leaves a slot that
        # is either still free or holds no key (tags of two keys), never a lost usage.
        words[free + USED] = 0
        words[free + DAY] = day
        reals[free + EMPTY_AT] = 0.0
        words[free + TAG_B] = tag_b
        words[free + TAG_A] = tag_a
        self._remember(key_id, (free, tag_a, tag_b))
        return free

    def _remember(self, key_id: str, place: tuple[int, int, int]) -> None:
        if len(self._places) >= 4 * self.slots:
            self._places.clear()
        self._places[key_id] = place

    def charge(self, key_id: str, daily_limit: int, rate: float | None, cost: int,
               need: int = 0) -> Refusal | None:
        """Charge atomically under the file's lock; see :meth:`Ledger.charge`."""
        now, day = self._now()
        with self._lock:
            fd = self._hold()
            try:
                return self._take(key_id, daily_limit, rate, cost, need, now, day)
            finally:
                flock(fd, LOCK_UN)

    def charge_many(self, charges: Sequence[Charge]) -> list[Refusal | None]:
        """Every charge under one hold of the file's lock; see :meth:`Ledger.charge_many`."""
        now, day = self._now()
        with self._lock:
            fd = self._hold()
            try:
                outcomes: list[Refusal | None] = []
                for key_id, daily_limit, rate, cost, need in charges:
                    try:
                        outcomes.append(self._take(key_id, daily_limit, rate, cost, need, now,
                                                   day))
                    except LedgerUnavailable:  # no slot for this key: the others go on
                        outcomes.append(unavailable())
                return outcomes
            finally:
                flock(fd, LOCK_UN)

    def _now(self) -> tuple[float, int]:
        """The clock's time and its UTC day number."""
        now = self._clock()
        return now, self._today(now)[0]

    def _hold(self) -> int:
        """Take the file's lock (the thread lock held): the descriptor to release it on."""
        fd = self._fd
        try:
            flock(fd, LOCK_EX)
        except OSError as exc:
            raise LedgerUnavailable(f"the credit ledger {self.path} failed: {exc}") from None
        return fd

    def _take(self, key_id: str, daily_limit: int, rate: float | None, cost: int, need: int,
              now: float, day: int) -> Refusal | None:
        """Under the file lock: one charge."""
        words = self._words
        base = self._find(key_id, now, day, True)
        current = words[base + DAY] == day
        used = words[base + USED] if current else 0
        if rate is None:
            level = 0.0
        else:
            level = (now - self._reals[base + EMPTY_AT]) * rate
            if level > rate:
                level = rate
            if level < need:
                return rate_refusal(level - need, rate)
        used += cost
        if used > daily_limit or used > INT64_MAX:
            return Refusal(DAILY_LIMIT_REACHED, seconds_to_reset(now))
        if not current:
            words[base + USED] = 0
            words[base + DAY] = day
        words[base + USED] = used
        if rate is not None:
            self._reals[base + EMPTY_AT] = now - (level - cost) / rate
        return None

    def refund(self, key_id: str, cost: int) -> None:
        """Give back under the file's lock; see :meth:`Ledger.refund`."""
        now, day = self._now()
        with self._lock:
            fd = self._hold()
            try:
                base = self._find(key_id, now, day, False)
                words = self._words
                if base >= 0 and words[base + DAY] == day:
                    words[base + USED] = max(0, int(words[base + USED]) - cost)
            finally:
                flock(fd, LOCK_UN)

    def used(self, key_id: str) -> int:
        """Credits the key has spent today (UTC)."""
        now, day = self._now()
        with self._lock:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                base = self._find(key_id, now, day, False)
                if base < 0 or self._words[base + DAY] != day:
                    return 0
                return int(self._words[base + USED])
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Unmap and close the file."""
        with self._lock:
            if self._fd < 0:
                return
            _open_ledgers.discard(self)
            self._release()

    def _release(self) -> None:
        self._words.release()
        self._reals.release()
        self._map.close()
        os.close(self._fd)
        self._fd = -1
