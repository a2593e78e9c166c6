"""The answers the workers of one server share (ethread.server.processes.shared_fragments): what one
worker decoded, another takes instead of decoding it again, byte for byte; bounded; a failing
store is only a cache that stops being used."""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path

import lmdb
import orjson
import pytest

from ethread.backends.memory import MemoryBackend
from ethread.codec.serialize import (
    FragmentCache,
    block_json,
    block_json_by_hash,
    block_receipts_json,
)
from ethread.rpc.dispatcher import handle
from ethread.server.metrics import remove_directory
from ethread.server.processes import shared_fragments
from ethread.server.processes.shared_fragments import SharedFragmentStore, make_directory
from tests.support.paths import conformance_dir
from tests.support.server_harness import KEY, ServeProcess


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SharedFragmentStore]:
    shared = SharedFragmentStore(tmp_path / "shared")
    yield shared
    shared.close()


def test_each_network_has_names_of_its_own(store: SharedFragmentStore) -> None:
    store.for_network("mainnet").put(b"receipts:" + b"\x01" * 32, b'[{"a":1}]')
    assert store.for_network("mainnet").get(b"receipts:" + b"\x01" * 32) == b'[{"a":1}]'
    assert store.for_network("sepolia").get(b"receipts:" + b"\x01" * 32) is None
    assert store.for_network("mainnet").get(b"receipts:" + b"\x02" * 32) is None


def test_a_forked_process_shares_with_its_parent(tmp_path: Path) -> None:
    """The supervisor's arrangement: the directory is made before the fork, each process
    opens the environment itself after it."""
    directory = make_directory()
    assert directory is not None
    try:
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                child = SharedFragmentStore(directory).for_network("n")
                child.put(b"k", b"from the child")
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        parent = SharedFragmentStore(directory)
        assert parent.for_network("n").get(b"k") == b"from the child"
        parent.close()
    finally:
        remove_directory(directory)
    assert not directory.exists()


def test_directories_of_supervisors_that_died_are_removed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A supervisor killed with SIGKILL cannot remove its directory; the next one does."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)  # a pid that no longer runs
    orphan = tmp_path / f"ethread-shared-{pid}-abc"
    orphan.mkdir()
    (orphan / "data.mdb").write_bytes(b"x")
    running = tmp_path / f"ethread-shared-{os.getpid()}-def"
    running.mkdir()
    other = tmp_path / "ethread-shared-notes"
    other.mkdir()
    made = make_directory()
    assert made is not None and made.parent == tmp_path
    assert made.name.startswith(f"ethread-shared-{os.getpid()}-")
    assert not orphan.exists()
    assert running.exists() and other.exists()
    remove_directory(made)
    assert not made.exists()


def test_a_full_store_starts_over_and_goes_on_sharing(tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    """A 1 MB map takes about 19 answers of 50 KB: 100 of them fill it five times over. Each
    time it empties and goes on; never an error, never more than the map."""
    shared = SharedFragmentStore(tmp_path, map_bytes=1 << 20).for_network("n")
    value = b"x" * 50_000
    with caplog.at_level(logging.ERROR, "ethread.workers"):
        for i in range(100):
            shared.put(b"%d" % i, value)
    kept = [i for i in range(100) if shared.get(b"%d" % i) is not None]
    assert 0 < len(kept) < 20
    assert kept == list(range(kept[0], 100)), "the newest answers are the ones kept"
    assert not caplog.records
    assert (tmp_path / "data.mdb").stat().st_size <= 1 << 20


def test_puts_on_an_event_loop_are_written_together_after_the_callback(
        store: SharedFragmentStore) -> None:
    names = store.for_network("n")
    env = store._env

    async def answer_two() -> None:
        before = env.info()["last_txnid"]
        names.put(b"a", b"1")
        names.put(b"b", b"2")
        assert names.get(b"a") is None  # still this callback's: the answer goes out first
        await asyncio.sleep(0)
        assert (names.get(b"a"), names.get(b"b")) == (b"1", b"2")
        assert env.info()["last_txnid"] == before + 1

    asyncio.run(answer_two())
    names.put(b"c", b"3")  # off the loop: at once
    assert names.get(b"c") == b"3"


def test_an_answer_over_the_bound_is_not_shared(store: SharedFragmentStore) -> None:
    names = store.for_network("n")
    names.put(b"big", b"x" * (shared_fragments.MAX_SHARED_BYTES + 1))
    names.put(b"small", b"x" * 100)
    assert names.get(b"big") is None
    assert names.get(b"small") == b"x" * 100


def test_a_failing_store_is_logged_once_and_left_alone(tmp_path: Path,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    shared = SharedFragmentStore(tmp_path)
    names = shared.for_network("n")
    names.put(b"k", b"v")
    shared.close()  # every later use of the environment fails
    with caplog.at_level(logging.ERROR, "ethread.workers"):
        assert names.get(b"k") is None
        names.put(b"k2", b"v2")
        assert names.get(b"k2") is None
    assert len([r for r in caplog.records if "shared answers failed" in r.message]) == 1


class _Counting:
    """A store of shared names that counts what it is asked."""

    def __init__(self) -> None:
        self.kept: dict[bytes, bytes] = {}
        self.gets = 0

    def get(self, name: bytes) -> bytes | None:
        self.gets += 1
        return self.kept.get(name)

    def put(self, name: bytes, encoded: bytes) -> None:
        self.kept[name] = encoded


def test_receipts_encoded_by_one_cache_answer_another_without_their_models(
        rpc_compat_memory: MemoryBackend) -> None:
    """Worker one decodes a block's receipts and shares their JSON; worker two answers the
    same bytes without loading a receipt. A fragment cache without a shared store, and one
    whose store holds nothing, still load them."""
    shared = _Counting()
    one, two = FragmentCache(), FragmentCache()
    one.shared = two.shared = shared
    chain = rpc_compat_memory
    block_hash = next(h for n in range(1, 40) if (h := chain.canonical_hash(n)) is not None
                      and chain.receipts(h))
    loads = []

    def load() -> object:
        loads.append(block_hash)
        return chain.receipts(block_hash)

    first = orjson.dumps(block_receipts_json(block_hash, load, one))  # type: ignore[arg-type]
    assert len(loads) == 1 and list(shared.kept) == [b"receipts:" + block_hash]
    second = orjson.dumps(block_receipts_json(block_hash, load, two))  # type: ignore[arg-type]
    assert len(loads) == 1, "the second cache decoded the receipts again"
    alone = orjson.dumps(block_receipts_json(block_hash, load, FragmentCache()))  # type: ignore[arg-type]
    assert first == second == alone
    assert json.loads(first)[0]["blockHash"] == "0x" + block_hash.hex()
    gets = shared.gets
    block_receipts_json(block_hash, load, two)  # type: ignore[arg-type]
    assert shared.gets == gets, "a fragment held in the process asks the shared store again"
    assert block_receipts_json(b"\x00" * 32, lambda: None, one) is None


@pytest.mark.parametrize("full", [False, True])
def test_a_block_encoded_by_one_cache_answers_another_without_decoding_it(
        rpc_compat_memory: MemoryBackend, full: bool) -> None:
    chain = rpc_compat_memory
    shared = _Counting()
    one, two = FragmentCache(), FragmentCache()
    one.shared = two.shared = shared
    block_hash = next(h for n in range(1, 40) if (h := chain.canonical_hash(n)) is not None
                      and (b := chain.block_by_hash(h)) is not None and b.transactions)
    block = chain.block_by_hash(block_hash)
    loads = []

    def load() -> object:
        loads.append(block_hash)
        return block

    first = orjson.dumps(block_json_by_hash(block_hash, full, load, one))  # type: ignore[arg-type]
    second = orjson.dumps(block_json_by_hash(block_hash, full, load, two))  # type: ignore[arg-type]
    assert len(loads) == 1, "the second cache decoded the block again"
    assert block is not None
    assert first == second == orjson.dumps(block_json(block, full)) \
        == orjson.dumps(block_json(block, full, FragmentCache()))
    name = (b"block+txs:" if full else b"block:") + block_hash
    assert list(shared.kept) == [name]
    assert json.loads(first)["hash"] == "0x" + block_hash.hex()
    assert isinstance(json.loads(first)["transactions"][0], dict) is full
    assert block_json_by_hash(b"\x00" * 32, full, lambda: None, one) is None
    assert list(shared.kept) == [name]


def _rpc(method: str, params: list[object]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).encode()


def _post_raw(host: str, port: int, body: bytes) -> bytes:
    """The answer's bytes, on a connection of its own (so the kernel picks a worker)."""
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        conn.request("POST", f"/v3/{KEY}", body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        assert response.status == 200
        return response.read()
    finally:
        conn.close()


def _requests(number: int) -> list[bytes]:
    return [_rpc("eth_getBlockReceipts", [hex(number)]),
            _rpc("eth_getBlockByNumber", [hex(number), False]),
            _rpc("eth_getBlockByNumber", [hex(number), True])]


def test_two_workers_answer_from_one_shared_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        rpc_compat_memory: MemoryBackend) -> None:
    """``ethread serve --workers 2`` on the rpc-compat chain: the receipts and the block (with
    and without its transactions) of every block, asked three times on connections of their
    own (spread over both workers), answer exactly what one process answers. After the first
    round the workers' shared store holds each of them, and the next rounds write nothing
    (a worker that finds an answer there does not decode the block again). The store is gone
    after the stop."""
    rpc = conformance_dir() / "rpc-compat"
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    args = ["--genesis", str(rpc / "genesis.json"), "--blocks", str(rpc / "chain.rlp"),
            "--no-verify-seals", "--no-access-log", "--workers", "2", "--api-key", KEY,
            "--ledger", str(tmp_path / "credits.ledger")]
    head = rpc_compat_memory.pointer("latest")
    assert head is not None
    with ServeProcess(args, cwd=tmp_path) as server:
        directories = [p for p in tmp_path.iterdir() if p.name.startswith("ethread-shared-")]
        assert len(directories) == 1
        answers: dict[bytes, set[bytes]] = {}
        writes = []
        for _ in range(3):
            for number in range(head + 1):
                for request in _requests(number):
                    answers.setdefault(request, set()).add(
                        _post_raw(server.host, server.port, request))
            time.sleep(0.2)
            env = lmdb.open(str(directories[0]), readonly=True, lock=False)
            with env.begin() as txn:
                shared_count = txn.stat()["entries"]
            writes.append(env.info()["last_txnid"])
            env.close()
        code, err = server.stop()
    assert code == 0, err
    assert not directories[0].exists()
    assert shared_count == 3 * (head + 1)
    assert writes[0] == writes[1] == writes[2], \
        "a worker decoded and shared again what the other had shared"
    for request, bodies in answers.items():
        assert bodies == {handle(rpc_compat_memory, request)}
