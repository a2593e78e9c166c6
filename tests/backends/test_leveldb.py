"""The LevelDB backend: same answers as memory, survives kill -9 mid-import, resumes, opens
without a rescan, and refuses a second process with a clear error. Damaged files answer errors
(never a missing block) naming no server path, /health and ``ethread verify --db`` report
them, and a directory that is not a complete store is never opened as a new one."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

import ethread
from ethread.backend import LogQuery
from ethread.backends.leveldb import LevelDBBackend
from ethread.backends.memory import MemoryBackend
from ethread.chain.importer import import_chain
from ethread.errors import StoreError
from tests.support.server_harness import ethread_command, get, serve_in_thread
from tests.support.storage_backends import (
    assert_same_chain,
    kill_import_then_resume,
    leveldb_from,
)


@pytest.fixture(scope="module")
def imported(compat: Path, tmp_path_factory: pytest.TempPathFactory) -> LevelDBBackend:
    path = tmp_path_factory.mktemp("ldb") / "store"
    backend = LevelDBBackend(path)
    import_chain(backend, compat / "genesis.json", compat / "chain.rlp", verify_seals=False)
    backend.close()
    return LevelDBBackend(path, create=False)




def test_reopened_store_matches_memory(imported: LevelDBBackend, memory: MemoryBackend) -> None:
    assert imported.pointer("latest") == 45
    assert imported.chain_config() == memory.chain_config()
    assert_same_chain(imported, memory, 45)


def test_logs_match_memory(imported: LevelDBBackend, memory: MemoryBackend) -> None:
    everything = memory.logs(LogQuery(0, 45))
    assert imported.logs(LogQuery(0, 45)) == everything
    for log in everything[::7]:
        by_address = LogQuery(0, 45, addresses=(log.address,))
        assert imported.logs(by_address) == memory.logs(by_address)
        if log.topics:
            by_topic = LogQuery(3, 40, topics=((log.topics[0],),))
            assert imported.logs(by_topic) == memory.logs(by_topic)


def failing_cases(backend: object, compat: Path) -> list[str]:
    failures = []
    cases = sorted((compat / "cases").glob("*/*.io"))
    assert cases
    for case in cases:
        lines = case.read_text().splitlines()
        request = next(line[2:].strip() for line in lines if line.startswith(">>"))
        expected = next(line[2:].strip() for line in lines if line.startswith("<<"))
        answer = json.loads(ethread.handle(backend, request.encode(),  # type: ignore[arg-type]
                                           answers=ethread.GETH_1_16))
        if answer != json.loads(expected):
            failures.append(f"{case.parent.name}/{case.name}")
    return failures


def test_rpc_compat_cases_pass(imported: LevelDBBackend, compat: Path) -> None:
    assert failing_cases(imported, compat) == []


def test_state_is_kept_at_every_block(imported: LevelDBBackend, memory: MemoryBackend) -> None:
    chaindb = imported.evm_database()
    for number in (0, 20, 45):
        block_hash = memory.canonical_hash(number)
        assert block_hash is not None
        header = chaindb.get_block_header_by_hash(block_hash)
        assert chaindb.db.exists(header.state_root)


def test_copy_from_memory_matches(memory: MemoryBackend, tmp_path: Path, compat: Path) -> None:
    with leveldb_from(memory, tmp_path / "copy") as copy:
        assert_same_chain(copy, memory, 45)
        assert failing_cases(copy, compat) == []


def test_open_is_constant_time(imported: LevelDBBackend) -> None:
    # A second handle cannot be opened in-process while the first holds the lock, so this
    # checks the other side: opening reads only meta keys (no iteration over blocks).
    assert imported.generation() >= 46


def test_missing_store_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no ethread store"):
        LevelDBBackend(tmp_path / "absent", create=False)


def test_not_a_store(tmp_path: Path) -> None:
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "CURRENT").write_text("garbage\n")
    with pytest.raises(StoreError):
        LevelDBBackend(tmp_path / "junk", create=False)


def test_failed_batch_leaves_nothing(memory: MemoryBackend, tmp_path: Path) -> None:
    with LevelDBBackend(tmp_path / "s") as store:
        genesis = memory.block_by_hash(memory.canonical_hash(0) or b"")
        assert genesis is not None
        with pytest.raises(RuntimeError), store.import_batch():
            store.write_block(genesis, ())
            store.evm_database().db[b"k" * 32] = b"v"
            raise RuntimeError("interrupted")
        assert store.pointer("latest") is None
        assert store.block_by_hash(genesis.hash) is None
        assert not store.evm_database().db.exists(b"k" * 32)


# --------------------------------------------------------------------------------------------
# Processes

_HOLDER = textwrap.dedent(
    """
    import sys, time
    from ethread.backends.leveldb import LevelDBBackend
    store = LevelDBBackend(sys.argv[1])
    print("ready", flush=True)
    time.sleep(60)
    """
)


def _spawn(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("pause,kill_after", [(0.02, "12"), (0.0, "30")])
def test_kill_9_during_import_then_resume(
    compat: Path, memory: MemoryBackend, tmp_path: Path, pause: float, kill_after: str
) -> None:
    kill_import_then_resume(LevelDBBackend, compat, memory, tmp_path / "store", pause, kill_after)


def test_second_process_gets_a_clear_error(imported: LevelDBBackend, tmp_path: Path) -> None:
    path = tmp_path / "held"
    LevelDBBackend(path).close()
    holder = _spawn(_HOLDER, str(path))
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(StoreError, match="in use by another process"):
            LevelDBBackend(path)
    finally:
        holder.kill()
        holder.wait(10)
    # Released when the holder is gone.
    deadline = time.monotonic() + 5
    while True:
        try:
            LevelDBBackend(path).close()
            break
        except StoreError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def copy_of(pristine: Path, tmp_path: Path) -> Path:
    target = tmp_path / "store"
    shutil.copytree(pristine, target)
    return target


def tables(path: Path) -> list[Path]:
    return sorted(path.glob("*.ldb"))


def flip_bits(path: Path) -> None:
    """Flip one bit every 512 bytes in the first half of each table (its data blocks)."""
    for table in tables(path):
        data = bytearray(table.read_bytes())
        for offset in range(100, len(data) // 2, 512):
            data[offset] ^= 0x10
        table.write_bytes(bytes(data))


def answers_for_every_block(backend: Any, head: int) -> list[dict[str, Any]]:
    out = []
    for number in range(head + 1):
        body = json.dumps({"jsonrpc": "2.0", "id": number, "method": "eth_getBlockByNumber",
                           "params": [hex(number), False]}).encode()
        out.append(json.loads(ethread.handle(backend, body) or b""))
    return out


def test_bit_flips_answer_errors_never_null(pristine: Path, tmp_path: Path,
                                            rpc_compat_memory: MemoryBackend) -> None:
    head = rpc_compat_memory.pointer("latest")
    assert head is not None
    expected = answers_for_every_block(rpc_compat_memory, head)
    path = copy_of(pristine, tmp_path)
    flip_bits(path)
    try:
        backend = LevelDBBackend(path, create=False)
    except StoreError as exc:  # damage found at opening is the truth as well
        assert "damaged" in exc.message or "Corruption" in exc.message
        return
    with backend:
        answers = answers_for_every_block(backend, head)
        failed = [a for a in answers if "error" in a]
        for answer, good in zip(answers, expected, strict=True):
            if "error" in answer:
                assert answer["error"]["code"] == -32000
                assert str(tmp_path) not in answer["error"]["message"]
                assert "/" not in answer["error"]["message"]
            else:
                assert answer == good  # a block is either right or an error, never null
        assert failed, "the flipped bits went unnoticed"
        with serve_in_thread(backend) as server:
            status, report = get(f"http://127.0.0.1:{server.port}/health")
        assert status == 503 and report["status"] == "degraded"
        assert report["networks"]["main"]["status"].startswith("error: the chain store")
        assert str(tmp_path) not in json.dumps(report)
    done = subprocess.run([*ethread_command(), "verify", "--db", str(path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "FAILED" in done.stdout
    print(f"bit flips: {len(failed)} of {head + 1} blocks answer -32000; verify says "
          f"{done.stdout.strip()[-160:]}")


def test_a_truncated_table_answers_without_the_path(pristine: Path, tmp_path: Path,
                                                   rpc_compat_memory: MemoryBackend) -> None:
    head = rpc_compat_memory.pointer("latest")
    assert head is not None
    path = copy_of(pristine, tmp_path)
    for table in tables(path):
        data = table.read_bytes()
        table.write_bytes(data[: len(data) // 3])
    try:
        backend = LevelDBBackend(path, create=False)
    except StoreError:
        return
    with backend:
        answers = answers_for_every_block(backend, head)
    errors = [a["error"] for a in answers if "error" in a]
    assert errors
    assert all(e["code"] == -32000 and "/" not in e["message"] for e in errors)
    assert all("result" not in a or a["result"] is not None for a in answers)


def test_a_store_without_current_is_never_made_anew(pristine: Path, tmp_path: Path) -> None:
    path = copy_of(pristine, tmp_path)
    (path / "CURRENT").unlink()
    before = sorted(p.name for p in path.iterdir())
    with pytest.raises(StoreError, match="refusing to create a new store"):
        LevelDBBackend(path)
    genesis = Path(__file__).parent / "nothing.json"
    done = subprocess.run([*ethread_command(), "import", "--db", str(path), "--genesis",
                           str(genesis)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "refusing to create a new store" in done.stderr
    assert sorted(p.name for p in path.iterdir()) == before  # nothing deleted


def test_only_an_absent_or_empty_directory_becomes_a_store(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for path in (tmp_path / "absent", tmp_path / "empty", tmp_path / "a" / "b" / "store"):
        LevelDBBackend(path).close()
        assert (path / "CURRENT").exists()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(StoreError, match="refusing"):
        LevelDBBackend(tmp_path / "other")
    assert (tmp_path / "other" / "notes.txt").read_text() == "mine"
