"""Polling filters (``ethread.methods.filters``) on a dev chain whose every transaction the test
chose: block and log filters report what came after them, take the ranges geth takes, expire
when unpolled, are bounded, belong to one dispatcher, and report each block once to
concurrent polls."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import ethread
from ethread.devchain import DevChain, contracts
from ethread.methods.filters import FilterRegistry
from ethread.models import LogFilter
from ethread.rpc.dispatcher import Dispatcher
from tests.support.rpc_cases import ask, result


def emit(dev: DevChain, emitter: bytes, *topics: bytes) -> None:
    dev.send(dev.accounts[0], emitter, data=contracts.log_calldata(list(topics)))


def test_block_and_log_filters_report_what_came_after_them(dev: DevChain) -> None:
    emitter = dev.deploy_runtime(dev.accounts[0], contracts.LOG_EMITTER)
    dev.mine()
    dispatcher = Dispatcher(dev.backend)
    blocks = result(None, "eth_newBlockFilter", dispatcher=dispatcher)
    topic = b"\x11" * 32
    logs = result(None, "eth_newFilter", {"address": "0x" + emitter.hex(), "topics": ["0x" + topic.hex()]},
                  dispatcher=dispatcher)
    assert blocks != logs and blocks.startswith("0x") and logs.startswith("0x")
    assert result(None, "eth_getFilterChanges", blocks, dispatcher=dispatcher) == []
    emit(dev, emitter, topic)
    emit(dev, emitter, b"\x22" * 32)
    emit(dev, emitter)
    first = dev.mine()
    emit(dev, emitter, topic, b"\x33" * 32)
    second = dev.mine()
    assert result(None, "eth_getFilterChanges", blocks, dispatcher=dispatcher) == \
        ["0x" + first.hash.hex(), "0x" + second.hash.hex()]
    changes = result(None, "eth_getFilterChanges", logs, dispatcher=dispatcher)
    assert [entry["blockNumber"] for entry in changes] == [hex(first.number), hex(second.number)]
    assert all(entry["topics"][0] == "0x" + topic.hex() for entry in changes)
    assert result(None, "eth_getFilterChanges", logs, dispatcher=dispatcher) == []
    # eth_getFilterLogs runs the whole query (fromBlock defaults to latest: the head's logs).
    assert [e["blockNumber"] for e in result(None, "eth_getFilterLogs", logs, dispatcher=dispatcher)] == \
        [hex(second.number)]
    assert result(None, "eth_uninstallFilter", logs, dispatcher=dispatcher) is True
    assert result(None, "eth_uninstallFilter", logs, dispatcher=dispatcher) is False
    gone = ask(None, "eth_getFilterChanges", logs, dispatcher=dispatcher)
    assert gone["error"] == {"code": -32000, "message": "filter not found"}
    assert ask(None, "eth_getFilterLogs", blocks, dispatcher=dispatcher)["error"]["message"] == \
        "filter not found"  # a block filter has no logs to query


def test_filter_ranges_as_geth_accepts_them(dev: DevChain) -> None:
    dispatcher = Dispatcher(dev.backend)
    for good in ({}, {"fromBlock": "0x1"}, {"fromBlock": "0x1", "toBlock": "0x5"},
                 {"fromBlock": "earliest"}):
        assert result(None, "eth_newFilter", good, dispatcher=dispatcher).startswith("0x")
    for bad, message in (({"fromBlock": "pending"}, "pending logs are not supported"),
                         ({"fromBlock": "0x5", "toBlock": "0x1"}, "invalid block range params"),
                         ({"fromBlock": "latest", "toBlock": "0x5"}, "invalid block range params"),
                         ({"fromBlock": "safe"}, "invalid block range params")):
        assert ask(None, "eth_newFilter", bad, dispatcher=dispatcher)["error"] == \
            {"code": -32602, "message": message}


def test_filters_expire_when_unpolled_and_are_bounded(dev: DevChain) -> None:
    now = [1000.0]
    registry = FilterRegistry(timeout=300, max_filters=3, clock=lambda: now[0])
    polled = registry.new_block_filter(dev.backend)
    idle = registry.new_log_filter(dev.backend, LogFilter())
    registry.new_block_filter(dev.backend)
    with pytest.raises(ethread.errors.LimitExceeded, match="too many filters installed"):
        registry.new_block_filter(dev.backend)
    now[0] += 200
    registry.changes(dev.backend, polled)  # polling keeps a filter alive
    registry.logs(dev.backend, idle)  # eth_getFilterLogs does not (as in geth)
    now[0] += 150
    assert registry.changes(dev.backend, polled) == []
    with pytest.raises(ethread.methods.filters.FilterNotFound):
        registry.changes(dev.backend, idle)
    assert len(registry) == 1  # the two idle ones are gone, so there is room again
    registry.new_block_filter(dev.backend)


def test_dispatchers_do_not_share_filters(dev: DevChain) -> None:
    one, other = Dispatcher(dev.backend), Dispatcher(dev.backend)
    filter_id = result(None, "eth_newBlockFilter", dispatcher=one)
    assert ask(None, "eth_getFilterChanges", filter_id, dispatcher=other)["error"]["message"] == \
        "filter not found"


def test_concurrent_polls_report_each_block_once(dev: DevChain) -> None:
    registry = FilterRegistry()
    filter_id = registry.new_block_filter(dev.backend)
    mined = [dev.mine().hash for _ in range(3)]
    barrier = threading.Barrier(8)
    answers: list[list[Any]] = []

    def poll() -> None:
        barrier.wait()
        answers.append(registry.changes(dev.backend, filter_id))

    threads = [threading.Thread(target=poll) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(h for answer in answers for h in answer) == sorted(mined)
