"""Build the persistent backends from a chain held in memory, for the shared conformance suite.

The conformance fixture imports a chain once into a :class:`MemoryBackend` and asks these
functions for the same chain in another backend:

    leveldb_from(source, tmp_path / "db")  -> LevelDBBackend with blocks, receipts, indexes,
                                              pointers, config and state (eth_call works)
    lmdb_from(source, tmp_path / "db")     -> the same in an LMDBBackend
    era_from(source, tmp_path / "era")     -> EraBackend over Era1 files of the pre-merge
                                              blocks (history only: no state)
    BUILDERS                                {"leveldb": ..., "lmdb": ..., "era1": ...}
    HISTORY_ONLY                            names of builders whose backend has no state
    built_or_memory(name, source, tmp_path_factory)
                                           -> a parametrized fixture's backend: source, or a
                                              built copy closed after its tests
    spawn_importer(LMDBBackend, compat, path, pause), read_until(child, "12")
                                           -> an import in a child process, to kill or follow

and :func:`conformance_dir` finds the external test data (environment variable
``ETHREAD_CONFORMANCE``, default ``../shared/conformance`` beside the repository); it fails,
never skips, when the data is missing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ethread.backends.leveldb import LevelDBBackend
from ethread.backends.lmdb import LMDBBackend
from ethread.backends.memory import MemoryBackend
from ethread.chain.importer import write_block
from ethread.models import Block, Receipt


def each_block(source: MemoryBackend) -> Iterator[tuple[bytes, Block, tuple[Receipt, ...]]]:
    """Every block of ``source``'s chain from genesis to its head: (hash, block, receipts)."""
    head = source.pointer("latest")
    for number in range(0 if head is None else head + 1):
        block_hash = source.canonical_hash(number)
        assert block_hash is not None
        block = source.block_by_hash(block_hash)
        receipts = source.receipts(block_hash)
        assert block is not None and receipts is not None
        yield block_hash, block, tuple(receipts)


def copy_chain(source: MemoryBackend, target: Any, *, with_state: bool = True) -> None:
    """Write every block, receipt, pointer and the config of ``source`` into ``target`` (a
    writable backend), and its py-evm key-value store when ``with_state``."""
    head = source.pointer("latest")
    if head is None:
        return
    with target.import_batch():
        config = source.chain_config()
        if config is not None:
            target.store_chain_config(config)
        if with_state:
            store = target.evm_database().db
            for key, value in source.evm_database().db.wrapped_db.kv_store.items():
                store[key] = value
    for _, block, receipts in each_block(source):
        with target.import_batch():
            write_block(target, block, receipts)  # and the answers a store keeps beside it
    for name in ("safe", "finalized"):
        number = source.pointer(name)  # type: ignore[arg-type]
        if number is not None and number != head:
            target.set_pointer(name, number)


def leveldb_from(source: MemoryBackend, path: Path) -> LevelDBBackend:
    """A LevelDB store at ``path`` holding the same chain and state as ``source``."""
    backend = LevelDBBackend(path)
    copy_chain(source, backend)
    return backend


def lmdb_from(source: MemoryBackend, path: Path) -> LMDBBackend:
    """An LMDB store at ``path`` holding the same chain and state as ``source``."""
    backend = LMDBBackend(path)
    copy_chain(source, backend)
    return backend


def era_from(source: MemoryBackend, folder: Path, *, network: str = "devnet") -> Any:
    """Era1 files of ``source``'s pre-merge blocks in ``folder``, served by an EraBackend
    with the source's chain config (the folder holds the sidecar index too)."""
    from ethread.backends.era import EraBackend
    from ethread.era1.export import export_era1

    export_era1(source, folder, network=network)
    return EraBackend(folder, config=source.chain_config())


BUILDERS: dict[str, Callable[[MemoryBackend, Path], Any]] = {
    "leveldb": leveldb_from,
    "lmdb": lmdb_from,
    "era1": era_from,
}
HISTORY_ONLY = frozenset({"era1"})


def built_or_memory(name: str, source: MemoryBackend,
                    tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The body of a fixture parametrized over backend names: ``source`` itself for
    ``"memory"``, else its chain built by ``BUILDERS[name]`` in a new temporary folder and
    closed once the fixture's tests are done (``yield from`` it)."""
    if name == "memory":
        yield source
        return
    built = BUILDERS[name](source, tmp_path_factory.mktemp(name))
    yield built
    close = getattr(built, "close", None)
    if close is not None:
        close()


# An import in a child process, paused after each block, for the kill -9 and cross-process
# tests of the persistent engines.
_IMPORTER = textwrap.dedent(
    """
    import sys, time
    from ethread.backends.{module} import {backend}
    from ethread.chain.importer import import_chain
    path, genesis, blocks, pause = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    def progress(done, total):
        print(done, flush=True)
        time.sleep(pause)
    import_chain({backend}(path), genesis, blocks, verify_seals=False, progress=progress)
    print("finished", flush=True)
    """
)


def spawn_importer(backend: type[Any], compat: Path, path: Path,
                   pause: float) -> subprocess.Popen[str]:
    """Import the rpc-compat chain into a ``backend`` store at ``path`` in a child process
    that prints each block number as it is stored (then ``finished``), pausing ``pause`` s."""
    module = backend.__module__.rsplit(".", 1)[1]
    code = _IMPORTER.format(module=module, backend=backend.__name__)
    return subprocess.Popen(
        [sys.executable, "-c", code, str(path), str(compat / "genesis.json"),
         str(compat / "chain.rlp"), str(pause)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def read_until(child: subprocess.Popen[str], wanted: str) -> None:
    """Read the importer's lines until block ``wanted`` (or the end of the import)."""
    assert child.stdout is not None
    for line in child.stdout:
        if line.strip() in (wanted, "finished"):
            return
    raise AssertionError(f"the importer ended early: {child.stderr.read() if child.stderr else ''}")


def assert_same_chain(store: Any, memory: MemoryBackend, through: int) -> None:
    """``store`` holds blocks 0..``through`` of ``memory``'s chain: hashes, headers, blocks,
    receipts and transaction locations."""
    for number in range(through + 1):
        block_hash = memory.canonical_hash(number)
        assert block_hash is not None
        assert store.canonical_hash(number) == block_hash
        assert store.header_by_hash(block_hash) == memory.header_by_hash(block_hash)
        block = store.block_by_hash(block_hash)
        assert block == memory.block_by_hash(block_hash)
        assert store.receipts(block_hash) == memory.receipts(block_hash)
        assert block is not None
        for tx in block.transactions:
            assert store.transaction_location(tx.hash) == (block_hash, tx.index)


def kill_import_then_resume(backend: type[Any], compat: Path, memory: MemoryBackend, path: Path,
                            pause: float, kill_after: str) -> None:
    """An import into a ``backend`` store killed with SIGKILL after block ``kill_after``
    leaves a store that holds a prefix of the chain, and importing again completes it."""
    from ethread.chain.importer import import_chain

    child = spawn_importer(backend, compat, path, pause)
    try:
        read_until(child, kill_after)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(10)
    assert child.returncode == -signal.SIGKILL
    store = backend(path, create=False)
    head = store.pointer("latest")
    assert head is not None and head >= int(kill_after) - 1
    assert_same_chain(store, memory, head)
    assert_answers_kept(store, head)
    resumed = import_chain(store, compat / "genesis.json", compat / "chain.rlp",
                           verify_seals=False)
    assert resumed == 45 - head
    assert_same_chain(store, memory, 45)
    assert_answers_kept(store, 45)
    store.close()


def assert_answers_kept(store: Any, through: int) -> None:
    """Every block of ``store`` up to ``through`` has the answers a store keeps beside its
    blocks, each what its receipts give now (and none lies past the head)."""
    from ethread.backends.verify import verify_store
    from ethread.codec.stored_answers import DERIVED, RECEIPTS_ANSWER

    report = verify_store(store, None, DERIVED)
    assert report.head == store.pointer("latest") and report.without_answers == 0
    for number in range(through + 1):
        block_hash = store.canonical_hash(number)
        assert store.answer_record(RECEIPTS_ANSWER, block_hash) is not None
