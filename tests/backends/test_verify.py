"""A store checked end to end (``ethread.backends.verify``, ``ethread verify --db``): a pristine
LevelDB store verifies; damaged ones are found in tests/backends/test_leveldb.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ethread.backends.leveldb import LevelDBBackend
from ethread.backends.verify import verify_store
from tests.support.server_harness import ethread_command


def test_a_pristine_store_verifies(pristine: Path, tmp_path: Path) -> None:
    with LevelDBBackend(pristine, create=False) as backend:
        report = verify_store(backend)
    assert report.head is not None and report.blocks == report.head + 1
    assert report.transactions > 0 and report.logs > 0
    done = subprocess.run([*ethread_command(), "verify", "--db", str(pristine)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert ": ok (" in done.stdout
