"""eth_getLogs: filters, the log index, and the service limits (results, time, parameters)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from benchlib.synthetic_history import SyntheticHistory, synthetic_history

import ethread
from ethread.backend import Deadline, LogQuery
from ethread.devchain import DevChain, contracts
from ethread.errors import LimitExceeded, QueryTimeout
from ethread.methods.logs import LogLimits, get_logs
from ethread.models import LogFilter
from ethread.rpc.context import Context
from ethread.rpc.dispatcher import Dispatcher
from tests.support.rpc_cases import result

BLOCKS = 400


@pytest.fixture(scope="module")
def history() -> tuple[ethread.MemoryBackend, SyntheticHistory]:
    backend = ethread.MemoryBackend()
    return backend, synthetic_history(backend, BLOCKS, emitters=4)


def scan(backend: ethread.MemoryBackend, log_filter: LogFilter) -> list[ethread.Log]:
    """The answer by brute force, to hold the index to."""
    out = []
    for number in range(BLOCKS + 1):
        block_hash = backend.canonical_hash(number)
        assert block_hash is not None
        for receipt in backend.receipts(block_hash) or ():
            for log in receipt.logs:
                query = LogQuery(from_number=0, to_number=0, addresses=log_filter.addresses,
                                 topics=log_filter.topics)
                lo = log_filter.from_block if isinstance(log_filter.from_block, int) else 0
                hi = log_filter.to_block if isinstance(log_filter.to_block, int) else BLOCKS
                if lo <= number <= hi and query.matches(log.address, log.topics):
                    out.append(log)
    return out


def test_index_answers_what_a_full_scan_finds(history: tuple[ethread.MemoryBackend, SyntheticHistory]) -> None:
    backend, info = history
    sender_topic = info.senders[3].rjust(32, b"\x00")
    filters = [
        LogFilter(from_block=0, to_block=BLOCKS),
        LogFilter(from_block=10, to_block=200, addresses=(info.emitters[1],)),
        LogFilter(from_block=0, to_block=BLOCKS, addresses=(info.emitters[0], info.emitters[2])),
        LogFilter(from_block=0, to_block=BLOCKS, topics=(None, (sender_topic,))),
        LogFilter(from_block=5, to_block=BLOCKS, addresses=(info.emitters[3],),
                  topics=((info.transfer_topic,), (sender_topic,))),
        LogFilter(from_block=0, to_block=BLOCKS, topics=((b"\x00" * 32,),)),
        LogFilter(from_block=0, to_block=BLOCKS, addresses=(b"\x01" * 20,)),
    ]
    for log_filter in filters:
        expected = scan(backend, log_filter)
        assert get_logs(backend, log_filter) == expected
    assert len(scan(backend, filters[0])) == BLOCKS


def test_more_results_than_the_limit(history: tuple[ethread.MemoryBackend, SyntheticHistory]) -> None:
    backend, _ = history
    with pytest.raises(LimitExceeded) as exceeded:
        get_logs(backend, LogFilter(from_block=1, to_block=BLOCKS), LogLimits(max_results=100))
    assert exceeded.value.code == -32005
    assert exceeded.value.message == "query returned more than 100 results"
    # The hint names a range that fits: exactly 100 blocks of one log each.
    assert exceeded.value.data == {"from": "0x1", "to": hex(100), "limit": 100}
    fitted = get_logs(backend, LogFilter(from_block=1, to_block=100), LogLimits(max_results=100))
    assert len(fitted) == 100


def test_limit_error_over_json_rpc(history: tuple[ethread.MemoryBackend, SyntheticHistory]) -> None:
    backend, _ = history
    dispatcher = Dispatcher(backend, Context(log_limits=LogLimits(max_results=10)))
    body = b'{"jsonrpc":"2.0","id":4,"method":"eth_getLogs","params":[{"fromBlock":"0x1","toBlock":"latest"}]}'
    answer = json.loads(dispatcher.handle(body))  # type: ignore[arg-type]
    assert answer["error"] == {"code": -32005, "message": "query returned more than 10 results",
                               "data": {"from": "0x1", "to": "0xa", "limit": 10}}


def test_too_many_parameters(history: tuple[ethread.MemoryBackend, SyntheticHistory]) -> None:
    backend, _ = history
    addresses = tuple(i.to_bytes(20, "big") for i in range(5001))
    with pytest.raises(LimitExceeded, match="more than 5000"):
        get_logs(backend, LogFilter(addresses=addresses))
    assert get_logs(backend, LogFilter(addresses=addresses[:5000])) == []


def test_timeout_stops_the_work(history: tuple[ethread.MemoryBackend, SyntheticHistory],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    backend, _ = history
    visited = 0
    original = dict(backend._logs)

    class Counting(dict):  # type: ignore[type-arg]
        def get(self, key: bytes, default: object = None) -> object:
            nonlocal visited
            visited += 1
            return original.get(key, default)

    monkeypatch.setattr(backend, "_logs", Counting(original))
    # A clock that jumps past the deadline after the first stride of candidate blocks.
    readings = iter([0.0, 0.0] + [100.0] * 10_000)
    deadline = Deadline.after(10.0, clock=lambda: next(readings))
    with pytest.raises(QueryTimeout) as timed_out:
        backend.logs(LogQuery(from_number=0, to_number=BLOCKS, deadline=deadline))
    assert timed_out.value.code == -32005
    assert timed_out.value.message == "query timeout exceeded"
    assert 0 < visited < BLOCKS


def test_expired_deadline_visits_nothing(history: tuple[ethread.MemoryBackend, SyntheticHistory]) -> None:
    backend, _ = history
    query = LogQuery(from_number=0, to_number=BLOCKS, deadline=Deadline(0.0))
    with pytest.raises(QueryTimeout):
        backend.logs(query)


def test_block_hash_filter(history: tuple[ethread.MemoryBackend, SyntheticHistory]) -> None:
    backend, _ = history
    block_hash = backend.canonical_hash(7)
    assert block_hash is not None
    logs = get_logs(backend, LogFilter(block_hash=block_hash))
    assert [log.block_number for log in logs] == [7]
    assert get_logs(backend, LogFilter(block_hash=block_hash, addresses=(b"\x01" * 20,))) == []


def emit(dev: DevChain, emitter: bytes, *topics: bytes) -> None:
    dev.send(dev.accounts[0], emitter, data=contracts.log_calldata(list(topics)))


def test_wildcard_positions_need_a_topic_there(dev: DevChain) -> None:
    emitter = dev.deploy_runtime(dev.accounts[0], contracts.LOG_EMITTER)
    dev.mine()
    a, b = b"\xaa" * 32, b"\xbb" * 32
    for topics in ((), (a,), (a, b), (b,)):
        emit(dev, emitter, *topics)
    dev.mine()

    def count(topics: list[Any]) -> list[int]:
        logs = result(dev.backend, "eth_getLogs", {"fromBlock": "0x0", "toBlock": "latest",
                                                   "address": "0x" + emitter.hex(), "topics": topics})
        return [len(entry["topics"]) for entry in logs]

    assert count([]) == [0, 1, 2, 1]
    assert count([None]) == [1, 2, 1]  # logs with no topics do not match one position
    assert count([[]]) == [1, 2, 1]
    assert count(["0x" + a.hex(), None]) == [2]  # [a] alone has no second topic
    assert count([None, None]) == [2]
    assert count([None, None, None, None]) == []
