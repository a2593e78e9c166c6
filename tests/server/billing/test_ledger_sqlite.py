"""server/billing/ledger_sqlite.py: the SQLite ledger's own guarantees, on real files: a
process killed with SIGKILL loses no debit, a file that is not a database (or a folder that
does not exist) is a clear error, a write lock held past the busy timeout refuses the charge
as the ledger being unavailable, and a failed turn of charges takes none of them. (What every
engine shares is in test_ledger.)"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ethread.server.billing.credits import open_ledger
from ethread.server.billing.ledger import LedgerError, LedgerUnavailable
from ethread.server.billing.ledger_sqlite import SQLiteLedger
from tests.support.billing import KEY_ID


def test_sqlite_a_sigkilled_process_loses_no_debit(tmp_path: Path) -> None:
    """What a SIGKILL can lose, measured: the process charges, then kills itself at once,
    without closing anything; every debit it made is in the file."""
    path = str(tmp_path / "l.sqlite3")
    script = textwrap.dedent(f"""
        import os, signal
        from ethread.server.billing.credits import open_ledger
        ledger = open_ledger({path!r})
        for _ in range(250):
            assert ledger.charge({KEY_ID!r}, 10**9, None, 3) is None
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert child.returncode == -9, child.stderr
    ledger = SQLiteLedger(path)
    try:
        assert ledger.used(KEY_ID) == 750
    finally:
        ledger.close()


def test_sqlite_ledger_that_cannot_be_opened_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "not-a-db").write_bytes(b"this is not a SQLite file" * 100)
    with pytest.raises(LedgerError, match="cannot open the credit ledger"):
        open_ledger(str(tmp_path / "not-a-db"))
    with pytest.raises(LedgerError, match="cannot open the credit ledger"):
        open_ledger(str(tmp_path / "missing-dir" / "l.sqlite3"))



def test_a_write_lock_held_past_the_busy_timeout_refuses_the_charge(tmp_path: Path) -> None:
    path = str(tmp_path / "l.sqlite3")
    ledger = SQLiteLedger(path, busy_timeout=0.1)
    other = sqlite3.connect(path, isolation_level=None)
    try:
        assert ledger.charge(KEY_ID, 1_000, None, 10) is None
        other.execute("BEGIN IMMEDIATE")  # another process in the middle of its charges
        with pytest.raises(LedgerUnavailable, match=f"the credit ledger {path} failed"):
            ledger.charge(KEY_ID, 1_000, None, 10)
        with pytest.raises(LedgerUnavailable):
            ledger.charge_many([(KEY_ID, 1_000, 5.0, 10, 0)] * 2)
        other.execute("ROLLBACK")
        assert ledger.charge_many([(KEY_ID, 1_000, None, 10, 0)] * 2) == [None, None]
        assert ledger.used(KEY_ID) == 30, "the refused charges took nothing"
    finally:
        other.close()
        ledger.close()


def test_the_file_is_shared_in_wal_mode_and_in_memory_is_private(tmp_path: Path) -> None:
    path = str(tmp_path / "l.sqlite3")
    first, second = SQLiteLedger(path), SQLiteLedger(path)
    try:
        assert first.charge(KEY_ID, 1_000, None, 7) is None
        assert second.used(KEY_ID) == 7
        with sqlite3.connect(path) as db:
            assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        first.close()
        second.close()
    alone, apart = SQLiteLedger(), SQLiteLedger()
    try:
        assert alone.charge(KEY_ID, 1_000, None, 7) is None and apart.used(KEY_ID) == 0
    finally:
        alone.close()
        apart.close()
