"""The memory-mapped credit ledger (``*.ledger``): one balance per key shared by every process
of one machine, spent exactly once, kept across SIGKILL at any moment, and a file that is not
a ledger (or is damaged) refused at open and left as it is.

Concurrency is across real processes charging one file, as workers and servers do.
"""

from __future__ import annotations

import fcntl
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ethread.server.billing.credits import Billing, open_ledger
from ethread.server.billing.ledger import (
    LEDGER_UNAVAILABLE,
    RATE_LIMIT_EXCEEDED,
    LedgerError,
    LedgerUnavailable,
    ledger_engine,
)
from ethread.server.billing.ledger_mapped import (
    DAY,
    HEADER_WORDS,
    SLOT_WORDS,
    USED,
    WORD,
    MappedLedger,
    file_size,
)
from ethread.server.billing.ledger_sqlite import SQLiteLedger
from ethread.server.config import DEFAULT_LEDGER, ServerConfig
from tests.support.billing import BLOCK_COST, KEY_ID

CHARGER = """
import sys
from ethread.server.billing.credits import open_ledger
ledger = open_ledger(sys.argv[1])
limit, cost = int(sys.argv[2]), int(sys.argv[3])
print("ready", flush=True)
sys.stdin.readline()
admitted = 0
while ledger.charge({key!r}, limit, None, cost) is None:
    admitted += 1
    print(admitted, flush=True)
print("refused", flush=True)
"""


def test_the_ledger_path_picks_the_engine() -> None:
    assert ledger_engine("credits.ledger") == "mapped"
    assert ledger_engine("/var/lib/ethread/Credits.LEDGER") == "mapped"
    assert ledger_engine("credits.sqlite3") == "sqlite"
    assert ledger_engine("credits.db") == "sqlite"
    assert ledger_engine(":memory:") == "sqlite"
    assert ledger_engine("redis://127.0.0.1:6379/0") == "redis"
    assert ServerConfig().ledger == DEFAULT_LEDGER and ledger_engine(DEFAULT_LEDGER) == "mapped"


def test_more_keys_than_a_mapped_ledger_holds_are_refused_at_start() -> None:
    from ethread.server import ConfigError, KeyConfig
    from ethread.server.billing.ledger_mapped import DEFAULT_SLOTS
    from ethread.server.config import validate

    keys = tuple(KeyConfig(key=f"key{i}") for i in range(DEFAULT_SLOTS + 1))
    with pytest.raises(ConfigError, match="holds 65,536 keys a day"):
        validate(ServerConfig(keys=keys, ledger="credits.ledger"))
    assert validate(ServerConfig(keys=keys, ledger="credits.sqlite3")).keys == keys


def test_a_process_killed_mid_run_loses_no_debit_and_the_others_spend_the_rest(
        tmp_path: Path) -> None:
    """Three processes charge one key until its balance is gone; one is killed with SIGKILL
    while they all charge. The ledger ends holding exactly the balance (nothing spent twice,
    nothing lost with the killed process), and the charges reported admitted are all of it
    but at most the one the killed process had made and not yet reported."""
    path = str(tmp_path / "credits.ledger")
    cost, charges = 7, 30_000  # the killed one's first 300 are 1%: it dies mid-run
    limit = cost * charges
    script = CHARGER.format(key=KEY_ID)
    children = [subprocess.Popen([sys.executable, "-c", script, path, str(limit), str(cost)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True) for _ in range(3)]
    for child in children:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    victim = children[0]
    assert victim.stdout is not None
    reported = 0
    while reported < 300:
        reported = int(victim.stdout.readline())
    victim.send_signal(signal.SIGKILL)
    tail = victim.stdout.read()  # what it printed before it died (communicate() would skip
    assert victim.wait(60) == -signal.SIGKILL  # the lines readline() has buffered)
    lines = tail.split()
    assert "refused" not in lines, "killed only after the balance was gone"
    reported = max([reported, *map(int, lines)])
    admitted = [reported]
    for child in children[1:]:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        lines = out.split()
        assert lines[-1] == "refused"
        admitted.append(int(lines[-2]) if len(lines) > 2 else 0)
    # the survivors spent what the killed one left (on a busy machine one of them may not get
    # a core before the other two spend it all: that one charging nothing is no fault)
    assert any(admitted[1:]), f"no survivor charged: {admitted}"
    ledger = MappedLedger(path)
    try:
        assert ledger.used(KEY_ID) == limit
    finally:
        ledger.close()
    assert charges - 1 <= sum(admitted) <= charges, admitted


def test_a_process_killed_holding_the_lock_blocks_nobody(tmp_path: Path) -> None:
    path = str(tmp_path / "credits.ledger")
    script = textwrap.dedent(f"""
        import fcntl, os, signal
        from ethread.server.billing.ledger_mapped import MappedLedger
        ledger = MappedLedger({path!r})
        assert ledger.charge({KEY_ID!r}, 10**9, None, 3) is None
        fcntl.flock(ledger._fd, fcntl.LOCK_EX)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert child.returncode == -9, child.stderr
    ledger = MappedLedger(path)
    try:
        assert ledger.charge(KEY_ID, 10**9, None, 3) is None
        assert ledger.used(KEY_ID) == 6
    finally:
        ledger.close()


def test_a_forked_child_locks_against_its_parent(tmp_path: Path) -> None:
    """After a fork the child opens the file again: sharing the parent's open file would share
    its flock, and both could hold the lock at once."""
    ledger = MappedLedger(str(tmp_path / "credits.ledger"))
    try:
        fcntl.flock(ledger._fd, fcntl.LOCK_EX)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child reports through its exit status
            try:
                fcntl.flock(ledger._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                os._exit(1)
            except BlockingIOError:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        fcntl.flock(ledger._fd, fcntl.LOCK_UN)
        assert os.waitstatus_to_exitcode(status) == 0, "the child took the parent's lock"
    finally:
        ledger.close()


def test_a_full_table_refuses_new_keys_and_frees_slots_the_next_day(tmp_path: Path) -> None:
    now = [datetime(2026, 11, 23, 12, tzinfo=UTC).timestamp()]
    path = tmp_path / "small.ledger"
    ledger = MappedLedger(str(path), clock=lambda: now[0], slots=4)
    try:
        assert path.stat().st_size == file_size(4) == 320
        for key in ("a", "b", "c", "d"):
            assert ledger.charge(key, 1_000, None, 10) is None
        with pytest.raises(LedgerUnavailable, match="is full"):
            ledger.charge("e", 1_000, None, 10)
        refusal = Billing(ledger).charge("e", 1_000, None, 10)
        assert refusal is not None and refusal.reason == LEDGER_UNAVAILABLE
        assert [ledger.used(key) for key in "abcde"] == [10, 10, 10, 10, 0]
        assert ledger.charge("a", 1_000, None, 10) is None, "known keys are still charged"
        now[0] += 86_400  # the next day: yesterday's keys give their slots up
        assert ledger.charge("e", 1_000, None, 10) is None
        assert ledger.charge("a", 1_000, None, 10) is None
        assert ledger.used("e") == 10 and ledger.used("a") == 10
        # a key whose rate bucket is still refilling keeps its slot on a new day
        now[0] = datetime(2026, 11, 24, 23, 59, 59, 500_000, tzinfo=UTC).timestamp()
        assert ledger.charge("f", 1_000, 1.0, 100) is None  # bucket 1 -> -99: full in 100 s
        assert ledger.charge("g", 1_000, None, 10) is None
        now[0] += 1.0  # the day after: e, a and g give their slots up, f does not
        for key in ("h", "i", "j"):
            assert ledger.charge(key, 1_000, None, 10) is None
        with pytest.raises(LedgerUnavailable, match="is full"):
            ledger.charge("k", 1_000, None, 10)
        refusal = ledger.charge("f", 1_000, 1.0, 1)
        assert refusal is not None and refusal.reason == RATE_LIMIT_EXCEEDED
        assert refusal.retry_after == 98 and ledger.used("f") == 0
    finally:
        ledger.close()


def _fresh(path: Path) -> None:
    ledger = MappedLedger(str(path), slots=8)
    try:
        assert ledger.charge(KEY_ID, 1_000, None, BLOCK_COST) is None
    finally:
        ledger.close()


def _slot_word(path: Path, word: int) -> int:
    """The byte offset of ``word`` of the slot that holds :data:`KEY_ID` in ``path``."""
    data = path.read_bytes()
    for slot in range(8):
        base = HEADER_WORDS + slot * SLOT_WORDS
        used = int.from_bytes(data[(base + USED) * WORD:(base + USED + 1) * WORD], sys.byteorder)
        if used == BLOCK_COST:
            return (base + word) * WORD
    raise AssertionError("no slot holds the charge")


def _damage_header(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[WORD:2 * WORD] = (2).to_bytes(WORD, sys.byteorder)
    path.write_bytes(bytes(data))


def _damage_slot(path: Path) -> None:
    data = bytearray(path.read_bytes())
    offset = _slot_word(path, USED)
    data[offset:offset + WORD] = (-5).to_bytes(WORD, sys.byteorder, signed=True)
    path.write_bytes(bytes(data))


def _damage_day(path: Path) -> None:
    data = bytearray(path.read_bytes())
    offset = _slot_word(path, DAY)
    data[offset:offset + WORD] = (10**9).to_bytes(WORD, sys.byteorder)
    path.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-WORD])


def _sqlite(path: Path) -> None:
    path.unlink()
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE usage (key_id TEXT, day TEXT, used INTEGER)")


def _text(path: Path) -> None:
    path.write_bytes(b"this is not a ledger\n" * 40)


@pytest.mark.parametrize(("damage", "message"), [
    (_text, "is not an ethread ledger file"),
    (_sqlite, "is not an ethread ledger file"),
    (_damage_header, "format version 2"),
    (_truncate, "is damaged: its header says 8 slots"),
    (_damage_slot, r"is damaged \(slot \d: day \d+, used -5"),
    (_damage_day, r"is damaged \(slot \d: day 1000000000"),
])
def test_a_file_that_is_not_a_sound_ledger_is_refused_and_left_alone(
        tmp_path: Path, damage: object, message: str) -> None:
    path = tmp_path / "credits.ledger"
    _fresh(path)
    assert callable(damage)
    damage(path)
    before = path.read_bytes()
    with pytest.raises(LedgerError, match=message):
        open_ledger(str(path))
    assert path.read_bytes() == before, "the refused file was changed"


def test_a_ledger_in_a_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(LedgerError, match="cannot open the credit ledger"):
        open_ledger(str(tmp_path / "missing-dir" / "l.ledger"))


def test_a_file_whose_creator_died_before_the_header_is_started_afresh(tmp_path: Path) -> None:
    """The header is written last when a file is made: a file of the right size that is all
    zeros never held a debit, and is set up again rather than refused."""
    path = tmp_path / "l.ledger"
    path.write_bytes(bytes(file_size(8)))
    ledger = MappedLedger(str(path), slots=8)
    try:
        assert ledger.charge(KEY_ID, 100, None, 80) is None
        assert ledger.used(KEY_ID) == 80
    finally:
        ledger.close()


def test_a_new_ledger_beside_an_old_sqlite_one_says_so(tmp_path: Path,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    old = SQLiteLedger(str(tmp_path / "ethread-credits.sqlite3"))
    old.close()
    with caplog.at_level("WARNING", logger="ethread.server.billing.credits"):
        open_ledger(str(tmp_path / "ethread-credits.ledger")).close()
    assert "the SQLite ledger" in caplog.text and "ethread-credits.sqlite3" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="ethread.server.billing.credits"):
        open_ledger(str(tmp_path / "ethread-credits.ledger")).close()
    assert caplog.text == "", "only a new ledger is worth a warning"


def test_a_full_table_refuses_only_the_new_key_of_a_turn(tmp_path: Path) -> None:
    """Charges made together (``charge_many``) when the table has no slot for one of their
    keys: that key's charge is refused as the ledger being unavailable, the others are taken,
    before and after it."""
    ledger = MappedLedger(str(tmp_path / "small.ledger"), slots=2)
    try:
        outcomes = ledger.charge_many([("a" * 64, 1_000, None, 80, 0),
                                       ("b" * 64, 1_000, None, 80, 0),
                                       ("c" * 64, 1_000, None, 80, 0),
                                       ("a" * 64, 1_000, None, 80, 0)])
        assert [o if o is None else o.reason for o in outcomes] == [
            None, None, LEDGER_UNAVAILABLE, None]
        assert [ledger.used(k * 64) for k in "abc"] == [160, 80, 0]
    finally:
        ledger.close()
