"""Stores tell the truth (issue 10): damaged LevelDB files answer errors (never a missing
block), naming no server path; /health reports them; ``ethread verify --db`` finds them; and
a directory that is not a complete store is never opened as a new one."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import ethread
from ethread.backends.leveldb import LevelDBBackend
from ethread.backends.memory import MemoryBackend
from ethread.backends.verify import verify_store
from ethread.errors import StoreError
from tests.support.server_harness import ethread_command, get, serve_in_thread
from tests.support.storage_backends import leveldb_from


@pytest.fixture(scope="module")
def pristine(rpc_compat_memory: MemoryBackend, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pristine") / "store"
    backend = leveldb_from(rpc_compat_memory, path)
    backend.compact()
    backend.close()
    return path


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


def test_a_pristine_store_verifies(pristine: Path, tmp_path: Path) -> None:
    with LevelDBBackend(pristine, create=False) as backend:
        report = verify_store(backend)
    assert report.head is not None and report.blocks == report.head + 1
    assert report.transactions > 0 and report.logs > 0
    done = subprocess.run([*ethread_command(), "verify", "--db", str(pristine)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert ": ok (" in done.stdout


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


def test_the_era_history_only_error_names_no_folder(tmp_path: Path,
                                                    rpc_compat_memory: MemoryBackend) -> None:
    from tests.support.storage_backends import era_from

    backend = era_from(rpc_compat_memory, tmp_path / "era")
    body = b'{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"data":"0x"},"0x1"]}'
    answer = json.loads(ethread.handle(backend, body) or b"")
    assert answer["error"]["code"] == -32000
    assert "history only" in answer["error"]["message"]
    assert str(tmp_path) not in answer["error"]["message"]


def test_a_log_range_across_an_era_gap_is_a_clear_error(tmp_path: Path) -> None:
    from ethread.backends.era import EraBackend
    from tests.support.paths import conformance_dir

    sepolia = EraBackend(conformance_dir() / "era1", index_path=tmp_path / "index.sqlite")
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "eth_getLogs", "params": [
        {"fromBlock": hex(8000), "toBlock": hex(8300)}]}).encode()
    answer = json.loads(ethread.handle(sepolia, body) or b"")
    assert answer["error"]["code"] == -32000
    assert "8192..8300" in answer["error"]["message"]
    inside = body.replace(hex(8300).encode(), hex(8100).encode())
    assert "result" in json.loads(ethread.handle(sepolia, inside) or b"")
