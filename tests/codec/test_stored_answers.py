"""Answers kept beside each block (``ethread.codec.stored_answers``): eth_getBlockReceipts read
from the kept answer gives the same bytes as the plain path (the block's records decoded and
encoded) and as the memory backend, for every block of the rpc-compat and Osaka chains, in
either answer style, and so does eth_getTransactionReceipt for every transaction; and the
store's rules: an answer lands with its block or not at all (kill -9 during an import:
tests/backends/test_lmdb.py and test_leveldb.py), ``ethread verify --db`` checks every kept
answer and counts the blocks without one, a store an older ethread wrote is answered from its
records and upgraded by ``ethread upgrade --db``, and an answer kept under another format's
name is never read."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

import ethread
from ethread.backends.keyvalue import KeyValueBackend
from ethread.backends.leveldb import LevelDBBackend
from ethread.backends.lmdb import LMDBBackend
from ethread.backends.memory import MemoryBackend
from ethread.backends.verify import VerifyFailed, verify_store
from ethread.chain.importer import write_block
from ethread.cli import main
from ethread.codec import stored_answers
from ethread.codec.answers import ANSWER_STYLES, GETH_1_16
from ethread.codec.serialize import receipts_answer
from ethread.codec.stored_answers import (
    DERIVED,
    RECEIPTS_ANSWER,
    _declarations_fingerprint,
    keeps_answers,
    lacks_answers,
    receipts_as_stored,
)
from ethread.forks.table import FORKS, fork_named
from ethread.models import Kind, Log, Receipt, wire
from ethread.rpc.context import DEFAULT_CONTEXT
from ethread.rpc.dispatcher import Dispatcher
from tests.support.storage_backends import each_block, lmdb_from


def _receipts_bodies(backend: MemoryBackend) -> Iterator[tuple[int, bytes]]:
    """eth_getBlockReceipts of every block, by number and by hash."""
    head = backend.pointer("latest")
    assert head is not None
    for number in range(head + 1):
        block_hash = backend.canonical_hash(number)
        assert block_hash is not None
        for ref in (hex(number), "0x" + block_hash.hex()):
            yield number, (b'{"jsonrpc":"2.0","id":7,"method":"eth_getBlockReceipts",'
                           b'"params":["%s"]}' % ref.encode())


def _dropped_answers(store: KeyValueBackend) -> int:
    """Remove every kept answer from ``store`` (a store as an older ethread wrote it); how many."""
    keys = list(store.store.keys(b"D", b"E"))
    store.store.write(dict.fromkeys(keys))
    return len(keys)


@pytest.fixture(scope="module", params=["rpc-compat", "osaka"])
def chain(request: pytest.FixtureRequest, rpc_compat_memory: MemoryBackend,
          osaka_memory: MemoryBackend) -> MemoryBackend:
    """Each conformance chain, in memory."""
    return rpc_compat_memory if request.param == "rpc-compat" else osaka_memory


@pytest.fixture(scope="module")
def store(chain: MemoryBackend, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[LMDBBackend]:
    """The chain in an LMDB store, with the answers kept beside each block."""
    backend = lmdb_from(chain, tmp_path_factory.mktemp("answers") / "store")
    yield backend
    backend.close()


def _three_ways(chain: MemoryBackend, store: LMDBBackend, style: str
                ) -> tuple[Dispatcher, Dispatcher, Dispatcher]:
    """Dispatchers answering in ``style`` from the kept answers, from the store's records
    alone (the plain path), and from the chain in memory."""
    context = replace(DEFAULT_CONTEXT, answers=ANSWER_STYLES[style])
    return (Dispatcher(store, context), Dispatcher(store, replace(context, stored_answers=False)),
            Dispatcher(chain, context))


@pytest.mark.parametrize("style", list(ANSWER_STYLES))
def test_kept_answers_are_the_plain_paths_for_every_block(
        chain: MemoryBackend, store: LMDBBackend, style: str) -> None:
    fast, plain, reference = _three_ways(chain, store, style)
    assert receipts_as_stored(ANSWER_STYLES[style])
    for number, body in _receipts_bodies(chain):
        block_hash = chain.canonical_hash(number)
        assert block_hash is not None
        receipts = chain.receipts(block_hash)
        assert receipts is not None
        kept = store.answer_record(RECEIPTS_ANSWER, block_hash)
        assert kept == receipts_answer(receipts), number  # the fast path has its answer
        answer = fast.handle(body)
        assert answer is not None and b'"result":[' in answer
        assert answer == plain.handle(body) == reference.handle(body), number


@pytest.mark.parametrize("style", list(ANSWER_STYLES))
def test_each_transactions_receipt_from_the_kept_answer_is_the_plain_paths(
        chain: MemoryBackend, store: LMDBBackend, style: str) -> None:
    fast, plain, reference = _three_ways(chain, store, style)
    hashes = [tx.hash for _, block, _ in each_block(chain) for tx in block.transactions]
    assert hashes
    for tx_hash in [*hashes, b"\x42" * 32]:
        body = (b'{"jsonrpc":"2.0","id":3,"method":"eth_getTransactionReceipt","params":'
                b'["0x%s"]}' % tx_hash.hex().encode())
        answer = fast.handle(body)
        assert answer == plain.handle(body) == reference.handle(body), tx_hash.hex()
        assert answer is not None and (b'"result":{' in answer or tx_hash == b"\x42" * 32)


def test_tags_and_unknown_blocks_answer_as_before(chain: MemoryBackend, store: LMDBBackend
                                                  ) -> None:
    fast = Dispatcher(store)
    plain = Dispatcher(store, replace(DEFAULT_CONTEXT, stored_answers=False))
    for ref in ('"latest"', '"earliest"', '"safe"', '"finalized"', '"pending"', '"0xffffff"',
                '"0x' + "ab" * 32 + '"', '{"blockNumber":"0x1"}', '"0x1x"'):
        body = b'{"jsonrpc":"2.0","id":1,"method":"eth_getBlockReceipts","params":[%s]}' % (
            ref.encode())
        assert fast.handle(body) == plain.handle(body) == ethread.handle(chain, body), ref


def test_an_older_store_is_answered_from_its_records_then_upgraded(
        rpc_compat_memory: MemoryBackend, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "store"
    store = lmdb_from(rpc_compat_memory, path)
    head = store.pointer("latest")
    assert head is not None
    assert _dropped_answers(store) == head + 1  # one answer a block, none elsewhere
    reader = Dispatcher(store)
    for number, body in _receipts_bodies(rpc_compat_memory):
        assert reader.handle(body) == ethread.handle(rpc_compat_memory, body), number
    assert verify_store(store, None, DERIVED).without_answers == head + 1
    assert lacks_answers(store)  # what a server warns of when it opens the store
    store.close()

    assert _run("verify", "--db", str(path)) == 0
    out = capsys.readouterr().out
    assert f"{head + 1} blocks lack the answers" in out and "ethread upgrade --db" in out
    assert _run("upgrade", "--db", str(path)) == 0
    assert f"answers kept beside {head + 1} more blocks" in capsys.readouterr().out
    assert _run("upgrade", "--db", str(path)) == 0
    assert "already up to date" in capsys.readouterr().out
    assert _run("verify", "--db", str(path)) == 0
    assert "lack the answers" not in capsys.readouterr().out

    with LMDBBackend(path, create=False) as upgraded:
        assert verify_store(upgraded, None, DERIVED).without_answers == 0
        assert not lacks_answers(upgraded)
        fast = Dispatcher(upgraded)
        for number, body in _receipts_bodies(rpc_compat_memory):
            block_hash = upgraded.canonical_hash(number)
            assert block_hash is not None
            assert upgraded.answer_record(RECEIPTS_ANSWER, block_hash) is not None
            assert fast.handle(body) == ethread.handle(rpc_compat_memory, body), number


def test_verify_finds_a_kept_answer_that_is_not_its_receipts(
        rpc_compat_memory: MemoryBackend, tmp_path: Path) -> None:
    with lmdb_from(rpc_compat_memory, tmp_path / "store") as store:
        assert verify_store(store, None, DERIVED).without_answers == 0
        block_hash = store.canonical_hash(3)
        assert block_hash is not None and store.receipts(block_hash)
        store.put_answer_record(RECEIPTS_ANSWER, block_hash, b"[]")
        with pytest.raises(VerifyFailed, match="block 3: the answer kept under 'receipts:"):
            verify_store(store, None, DERIVED)


def test_an_answer_of_another_format_is_never_read_and_an_upgrade_removes_it(
        rpc_compat_memory: MemoryBackend, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "store"
    blocks = list(each_block(rpc_compat_memory))
    with lmdb_from(rpc_compat_memory, path) as store:
        _dropped_answers(store)
        other = b"receipts:00000000"
        assert other != RECEIPTS_ANSWER
        for _, block, _ in blocks:
            store.put_answer_record(other, block.hash, b'"not this"')
        fast = Dispatcher(store)
        for number, body in _receipts_bodies(rpc_compat_memory):
            assert fast.handle(body) == ethread.handle(rpc_compat_memory, body), number
    assert _run("upgrade", "--db", str(path)) == 0
    out = capsys.readouterr().out
    assert f"answers kept beside {len(blocks)} more blocks" in out
    assert f"{len(blocks)} answers of an older format (no longer read) removed" in out
    with LMDBBackend(path, create=False) as store:
        for block_hash, _, receipts in blocks:
            assert store.answer_record(other, block_hash) is None
            assert store.answer_record(RECEIPTS_ANSWER, block_hash) == receipts_answer(receipts)
        assert len(list(store.store.keys(b"D", b"E"))) == len(blocks)


def test_an_answer_lands_with_its_block_or_not_at_all(rpc_compat_memory: MemoryBackend,
                                                      tmp_path: Path) -> None:
    blocks = list(each_block(rpc_compat_memory))
    with LevelDBBackend(tmp_path / "store") as store:
        config = rpc_compat_memory.chain_config()
        assert config is not None
        with store.import_batch():
            store.store_chain_config(config)
        for _, block, receipts in blocks[:10]:
            with store.import_batch():
                write_block(store, block, receipts)
        block_hash, block, receipts = blocks[10]
        with pytest.raises(RuntimeError), store.import_batch():
            write_block(store, block, receipts)
            assert store.answer_record(RECEIPTS_ANSWER, block_hash) is not None  # staged
            raise RuntimeError("the import fails before the batch is written")
        assert store.canonical_hash(10) is None
        assert store.answer_record(RECEIPTS_ANSWER, block_hash) is None
        assert store.answer_record(RECEIPTS_ANSWER, blocks[9][0]) is not None
        with pytest.raises(ValueError, match="is not held"):
            store.put_answer_record(RECEIPTS_ANSWER, block_hash, receipts_answer(receipts))


def test_only_stores_keep_answers_and_every_style_reads_them() -> None:
    assert keeps_answers(LMDBBackend) and keeps_answers(LevelDBBackend)
    assert not keeps_answers(MemoryBackend)
    assert not lacks_answers(MemoryBackend())
    assert receipts_as_stored(GETH_1_16)  # it withholds a field of transactions only


def test_the_name_changes_with_the_declarations_and_the_blob_parameters(
        monkeypatch: pytest.MonkeyPatch) -> None:
    @dataclass(frozen=True)
    class Renamed:
        gas_used: int = wire("gasUsed", Kind.QUANTITY)

    @dataclass(frozen=True)
    class Other:
        gas_used: int = wire("gasSpent", Kind.QUANTITY)

    name = RECEIPTS_ANSWER.removeprefix(b"receipts:").decode()
    assert _declarations_fingerprint(Receipt, Log) == name
    assert _declarations_fingerprint(Renamed) != _declarations_fingerprint(Other)
    osaka = fork_named("osaka")
    assert osaka.blob is not None
    changed = replace(osaka, blob=replace(osaka.blob, update_fraction=osaka.blob.update_fraction + 1))
    monkeypatch.setattr(stored_answers, "FORKS", tuple(changed if f is osaka else f for f in FORKS))
    assert _declarations_fingerprint(Receipt, Log) != name


def _run(*argv: str) -> int:
    """``ethread ARGV`` run in this process: its exit status."""
    return main(argv)
