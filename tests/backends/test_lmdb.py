"""The LMDB engine: made and recognised by the command line, the same store rules as LevelDB,
consistent after kill -9, and read by other processes while one process imports, including
``ethread serve --workers 2`` (HTTP, newHeads and logs subscriptions in every worker, and the
45 rpc-compat cases through rpc-replay). The conformance suite runs on LMDB too
(``tests/support/storage_backends.py``)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import connect

import ethread
from ethread.backends.leveldb import LevelDBBackend
from ethread.backends.lmdb import LMDBBackend
from ethread.backends.memory import MemoryBackend
from ethread.backends.open import open_backend, open_store, store_engine
from ethread.cli import storage
from ethread.errors import StoreError
from tests.support.paths import conformance_dir
from tests.support.server_harness import KEY, ServeProcess, call, get, post
from tests.support.storage_backends import (
    assert_same_chain,
    kill_import_then_resume,
    leveldb_from,
    read_until,
    spawn_importer,
)


def _cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="ethread")
    storage.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(list(argv))
    code: int = args.run(args)
    return code




# --------------------------------------------------------------------------------------------
# The command line and the store rules


def test_import_makes_an_lmdb_store_that_serve_recognises(
        compat: Path, memory: MemoryBackend, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "db"
    genesis, blocks = str(compat / "genesis.json"), str(compat / "chain.rlp")
    assert _cli("import", "--db", str(db), "--engine", "lmdb", "--genesis", genesis,
                "--blocks", blocks, "--no-verify-seals") == 0
    assert (db / "data.mdb").exists() and not (db / "CURRENT").exists()
    assert store_engine(db) == "lmdb"
    # Resuming without --engine keeps the store's engine; naming the other one is refused.
    assert _cli("import", "--db", str(db), "--genesis", genesis, "--blocks", blocks,
                "--no-verify-seals") == 0
    assert "imported 0 blocks" in capsys.readouterr().out
    assert _cli("import", "--db", str(db), "--engine", "leveldb", "--genesis", genesis) == 1
    assert "is a lmdb store, not leveldb" in capsys.readouterr().err
    backend = open_backend(db=db)
    assert isinstance(backend, LMDBBackend) and isinstance(backend, ethread.LMDBBackend)
    assert backend.pointer("latest") == 45
    assert_same_chain(backend, memory, 45)
    backend.close()


def test_verify_checks_an_lmdb_store(memory: MemoryBackend, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    from tests.support.storage_backends import lmdb_from

    lmdb_from(memory, tmp_path / "db").close()
    assert _cli("verify", "--db", str(tmp_path / "db")) == 0
    assert "ok (" in capsys.readouterr().out
    with LMDBBackend(tmp_path / "db", create=False) as store:
        block_hash = store.canonical_hash(20)
        assert block_hash is not None
        store.store.write({b"R" + block_hash: b"\xc0"})  # receipts that do not match the root
    assert _cli("verify", "--db", str(tmp_path / "db")) == 1
    assert "block 20" in capsys.readouterr().out


def test_copy_converts_a_leveldb_store(memory: MemoryBackend, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    leveldb_from(memory, tmp_path / "ldb").close()
    assert _cli("copy", "--db", str(tmp_path / "ldb"), "--to", str(tmp_path / "lmdb")) == 0
    assert "head is block 45" in capsys.readouterr().out
    with open_store(tmp_path / "lmdb") as copied:
        assert isinstance(copied, LMDBBackend)
        assert_same_chain(copied, memory, 45)
        assert copied.chain_config() == memory.chain_config()
        assert copied.pointer("finalized") == memory.pointer("finalized")
        head = memory.block_by_hash(memory.canonical_hash(45) or b"")
        assert head is not None
        assert copied.evm_database().get_block_header_by_hash(head.hash).state_root \
            == head.header.state_root
    # A target that holds a chain is not overwritten.
    assert _cli("copy", "--db", str(tmp_path / "ldb"), "--to", str(tmp_path / "lmdb")) == 1
    assert "already holds a chain" in capsys.readouterr().err


def test_store_rules(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no ethread store"):
        LMDBBackend(tmp_path / "absent", create=False)
    assert not (tmp_path / "absent").exists()
    with pytest.raises(StoreError, match="no ethread store"):
        open_backend(db=tmp_path)  # an empty directory is not opened as a new store
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "notes.txt").write_text("mine\n")
    with pytest.raises(StoreError, match="holds no complete store"):
        LMDBBackend(junk)
    assert sorted(p.name for p in junk.iterdir()) == ["notes.txt"]
    both = tmp_path / "both"
    LMDBBackend(both).close()
    (both / "CURRENT").write_text("MANIFEST-000001\n")
    with pytest.raises(StoreError, match="both a LevelDB and an LMDB"):
        open_backend(db=both)
    other = tmp_path / "other"
    LevelDBBackend(other).close()
    with pytest.raises(StoreError, match="is a leveldb store, not lmdb"):
        open_store(other, engine="lmdb", create=True)


def test_a_full_map_grows(memory: MemoryBackend, tmp_path: Path) -> None:
    from tests.support.storage_backends import copy_chain

    small = LMDBBackend(tmp_path / "small", map_size=64 * 1024)
    copy_chain(memory, small)
    assert small.store.size() > 64 * 1024  # type: ignore[attr-defined]
    assert_same_chain(small, memory, 45)
    small.close()


# --------------------------------------------------------------------------------------------
# Processes

@pytest.mark.parametrize("pause,kill_after", [(0.02, "12"), (0.0, "30")])
def test_kill_9_during_import_then_resume(
    compat: Path, memory: MemoryBackend, tmp_path: Path, pause: float, kill_after: str
) -> None:
    kill_import_then_resume(LMDBBackend, compat, memory, tmp_path / "store", pause, kill_after)


def test_a_reader_follows_a_writer_in_another_process(
        compat: Path, memory: MemoryBackend, tmp_path: Path) -> None:
    path = tmp_path / "store"
    child = spawn_importer(LMDBBackend, compat, path, 0.05)
    try:
        read_until(child, "2")
        reader = LMDBBackend(path, create=False)
        first = reader.pointer("latest")
        assert first is not None and first < 45
        generation = reader.generation()
        seen = {first}
        deadline = time.monotonic() + 60
        while reader.pointer("latest") != 45:
            assert time.monotonic() < deadline, "the reader never saw block 45"
            seen.add(reader.pointer("latest"))
            time.sleep(0.01)
        assert len(seen) > 3  # it moved block by block, not only at the end
        assert reader.generation() > generation
        assert reader.chain_config() == memory.chain_config()
        assert_same_chain(reader, memory, 45)
        reader.close()
    finally:
        child.wait(60)
    assert child.returncode == 0


def _serve_args(db: Path, tmp_path: Path, workers: int) -> list[str]:
    return ["--db", str(db), "--workers", str(workers), "--api-key", KEY,
            "--ledger", str(tmp_path / "ledger.sqlite3"), "--no-access-log",
            "--answers", "geth-1.16"]  # as the rpc-compat cases recorded them


def _wait_for_workers(server: ServeProcess, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        status, health = get(f"http://{server.host}:{server.port}/health")
        if status == 200 and health["workers"]["up"] == count:
            return
        assert time.monotonic() < deadline, f"workers never all up: {health}"
        time.sleep(0.1)


def _answer(ws: Any, kept: list[Any]) -> Any:
    """The next answer on ``ws``; subscription notifications that come first (the importer
    adds a block every 0.25 s) are kept, in order, for the caller to read after it."""
    while True:
        message = json.loads(ws.recv(timeout=10))
        if "id" in message:
            return message
        kept.append(message)


def test_two_workers_serve_a_store_another_process_imports(
        compat: Path, memory: MemoryBackend, tmp_path: Path) -> None:
    """HTTP eth_blockNumber moves with the importer, and newHeads and logs subscriptions on
    several connections (spread over both workers) are told of every new block."""
    db = tmp_path / "db"
    child = spawn_importer(LMDBBackend, compat, db, 0.25)
    try:
        read_until(child, "3")
        with ServeProcess(_serve_args(db, tmp_path, 2), cwd=tmp_path) as server:
            _wait_for_workers(server, 2)
            url = f"http://{server.host}:{server.port}/v3/{KEY}"
            ws_url = f"ws://{server.host}:{server.port}/ws/v3/{KEY}"
            sockets = [connect(ws_url, open_timeout=10) for _ in range(4)]
            try:
                subscriptions = []
                early: list[list[Any]] = [[] for _ in sockets]  # notifications before an answer
                for ws, kept in zip(sockets, early, strict=True):
                    ws.send(json.dumps(call("eth_subscribe", ["newHeads"], 1)))
                    heads = _answer(ws, kept)["result"]
                    ws.send(json.dumps(call("eth_subscribe", ["logs", {}], 2)))
                    logs = _answer(ws, kept)["result"]
                    subscriptions.append((heads, logs))
                numbers = []
                deadline = time.monotonic() + 90
                while not numbers or numbers[-1] < 45:
                    assert time.monotonic() < deadline, f"stuck at {numbers[-1:]}"
                    _, _, answer = post(url, call("eth_blockNumber"))
                    numbers.append(int(answer["result"], 16))
                    time.sleep(0.05)
                assert len(set(numbers)) > 3 and numbers == sorted(numbers)
                with_logs = {n for n in range(46) if any(
                    r.logs for r in memory.receipts(memory.canonical_hash(n) or b"") or ())}
                for ws, (heads, logs), kept in zip(sockets, subscriptions, early, strict=True):
                    got_heads: list[int] = []
                    got_logs: set[int] = set()
                    while not got_heads or got_heads[-1] < 45 or max(got_logs, default=-1) < max(with_logs):
                        message = kept.pop(0) if kept else json.loads(ws.recv(timeout=30))
                        result = message["params"]["result"]
                        if message["params"]["subscription"] == heads:
                            got_heads.append(int(result["number"], 16))
                            block = memory.block_by_hash(memory.canonical_hash(got_heads[-1])
                                                         or b"")
                            assert block is not None and result["hash"] == "0x" + block.hash.hex()
                        else:
                            assert message["params"]["subscription"] == logs
                            got_logs.add(int(result["blockNumber"], 16))
                    assert got_heads == list(range(got_heads[0], 46))
                    assert got_heads[0] < 40
                    assert got_logs == {n for n in with_logs if n >= got_heads[0]}
            finally:
                for ws in sockets:
                    ws.close()
            code, err = server.stop()
        assert code == 0, err
    finally:
        child.wait(60)
    assert child.returncode == 0


def test_rpc_replay_passes_every_case_against_two_workers_on_lmdb(
        compat: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    assert _cli("import", "--db", str(db), "--engine", "lmdb", "--genesis",
                str(compat / "genesis.json"), "--blocks", str(compat / "chain.rlp"),
                "--no-verify-seals") == 0
    replay = conformance_dir().parent / "tools" / "rpc-replay"
    with ServeProcess(_serve_args(db, tmp_path, 2), cwd=tmp_path) as server:
        _wait_for_workers(server, 2)
        url = f"http://{server.host}:{server.port}/v3/{KEY}"
        for _ in range(2):  # cold and warm caches
            result = subprocess.run([sys.executable, str(replay), url, str(compat / "cases")],
                                    capture_output=True, text=True, timeout=300)
            assert result.returncode == 0, result.stdout + result.stderr
            assert "45 passed, 0 failed" in result.stdout
        code, err = server.stop()
    assert code == 0, err


def test_each_worker_opens_the_store_itself_and_answers_concurrent_reads(
        compat: Path, tmp_path: Path) -> None:
    """Each worker opens the LMDB environment after the fork: LMDB's reader slots carry the
    pid of the process that opened the environment, so slots used by workers that inherited
    the supervisor's environment would name the supervisor (and those of a killed worker would
    never be reclaimed). Under concurrent reads in both workers every answer is a result, and
    the reader table names the workers only."""
    from concurrent.futures import ThreadPoolExecutor

    db = tmp_path / "db"
    assert _cli("import", "--db", str(db), "--engine", "lmdb", "--genesis",
                str(compat / "genesis.json"), "--blocks", str(compat / "chain.rlp"),
                "--no-verify-seals") == 0
    with ServeProcess(_serve_args(db, tmp_path, 2), cwd=tmp_path) as server:
        _wait_for_workers(server, 2)
        url = f"http://{server.host}:{server.port}/v3/{KEY}"

        def read(index: int) -> str:
            _, _, answer = post(url, call("eth_getBlockReceipts", [hex(index % 45 + 1)]))
            return "result" if "result" in answer else json.dumps(answer)

        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(read, range(1000)))
        assert [a for a in answers if a != "result"] == []
        supervisor = server.process.pid
        workers = [int(pid) for pid in Path(f"/proc/{supervisor}/task/{supervisor}/children")
                   .read_text().split()]
        assert len(workers) == 2
        # the supervisor closed its environment before forking; each worker holds its own
        assert _store_files(supervisor, db) == set()
        opened = [_store_files(pid, db) for pid in workers]
        assert all(files for files in opened), opened
        code, err = server.stop()
    assert code == 0, err


def _store_files(pid: int, db: Path) -> set[str]:
    """The files of the store at ``db`` that process ``pid`` holds open (Linux /proc)."""
    found = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith(str(db)):
                found.add(target)
    return found


def test_a_server_answers_lmdb_block_lookups_on_its_event_loop(tmp_path: Path) -> None:
    """LMDB is memory-mapped and its readers never wait: one-block lookups run on the loop
    (no thread hop), as on the memory backend; a LevelDB store's still go to a thread."""
    from ethread.codec.envelope import Call
    from ethread.rpc.dispatcher import Dispatcher
    from ethread.server.execution import Execution

    execution = Execution(threads=1, slow_threads=1)
    lookup = Call("eth_getBlockReceipts", ["0x1"], 1)
    try:
        with LMDBBackend(tmp_path / "lmdb") as lmdb_store:
            assert execution.on_loop(Dispatcher(lmdb_store), lookup)
            assert not execution.on_loop(Dispatcher(lmdb_store), Call("eth_getLogs", [{}], 2))
        leveldb = LevelDBBackend(tmp_path / "leveldb")
        try:
            assert not execution.on_loop(Dispatcher(leveldb), lookup)
        finally:
            leveldb.close()
    finally:
        execution.close()
