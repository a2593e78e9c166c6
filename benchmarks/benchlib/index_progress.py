"""How far a history index (``ethread.backends.era_index``) being built in another process has
got, read without disturbing the build: for the interrupted-build benchmark and test."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def complete_files(index: Path) -> int:
    """Files the index records as complete, read-only (0 before its tables exist)."""
    try:
        db = sqlite3.connect(f"file:{index}?mode=ro", uri=True, timeout=5)
        try:
            return int(db.execute("SELECT count(*) FROM files").fetchone()[0])
        finally:
            db.close()
    except sqlite3.Error:
        return 0
