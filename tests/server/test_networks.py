"""Opening served networks: a dev chain served with ``record_traces`` records the traces of
the blocks it mines while serving, as anvil's ``--steps-tracing`` does; a store an older
ethread wrote (without the answers kept beside its blocks) is served with a warning that says
how to upgrade it."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from ethread.backends.lmdb import LMDBBackend
from ethread.backends.memory import MemoryBackend
from ethread.codec.envelope import Call
from ethread.rpc.dispatcher import Dispatcher
from ethread.server.config import NetworkConfig, ServerConfig
from ethread.server.networks import open_network, service_context
from tests.support.storage_backends import lmdb_from


def test_a_served_dev_chain_records_the_blocks_it_mines() -> None:
    config = NetworkConfig(name="demo", record_traces=3)
    network = open_network(config, service_context(ServerConfig(networks=(config,))))
    chain = network.miner.chain
    traces = network.dispatcher.context.traces
    assert traces is not None and traces.recording  # the demo's latest blocks, at start
    a = chain.accounts
    tx_hash = "0x" + chain.send(a[0], a[1].address, value=7).hex()
    chain.mine()
    params = [tx_hash, {"tracer": "callTracer", "timeout": "2s"}]
    recorded = traces.recorded(network.backend, params)
    assert recorded is not None
    assert recorded == Dispatcher(network.backend).result(
        Call("debug_traceTransaction", params, 1))
    # the window is three blocks: the demo's own transactions below it are forgotten
    head = network.backend.pointer("latest")
    assert head is not None
    below = network.backend.block_by_hash(network.backend.canonical_hash(head - 3))
    for tx in () if below is None else below.transactions:
        assert traces.recorded(network.backend, ["0x" + tx.hash.hex()]) is None


def test_a_store_without_kept_answers_is_served_with_a_warning(
        rpc_compat_memory: MemoryBackend, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "store"
    lmdb_from(rpc_compat_memory, path).close()
    config = NetworkConfig(name="chain", backend="db", path=path)
    context = service_context(ServerConfig(networks=(config,)))
    with caplog.at_level(logging.WARNING, logger="ethread.server"):
        open_network(config, context).backend.close()  # type: ignore[attr-defined]
    assert "lacks the answers" not in caplog.text
    with LMDBBackend(path, create=False) as store:  # as an older ethread wrote it
        store.store.write(dict.fromkeys(list(store.store.keys(b"D", b"E"))))
    with caplog.at_level(logging.WARNING, logger="ethread.server"):
        open_network(config, context).backend.close()  # type: ignore[attr-defined]
    assert f"`ethread upgrade --db {path}` adds them" in caplog.text
