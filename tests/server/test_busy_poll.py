"""Polling after a read (``ethread.server.busy_poll``): the loop keeps turning for the window
after a read or an answer and then sleeps, only while the worker holds few connections and
the machine has a core for every process ready to run, on the HTTP paths and WebSocket."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import time
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import pytest
import uvloop
from websockets.sync.client import connect

import ethread
from ethread.rpc import table
from ethread.server import busy_poll
from ethread.server.busy_poll import (
    CHECK_SECONDS,
    MAX_CONNECTIONS,
    MISSES_BEFORE_REST,
    REST_READS,
    BusyPoll,
    polling,
    runnable_processes,
)
from ethread.server.config import ConfigError, ServerConfig, validate
from tests.support.server_harness import KEY, call, serve_in_thread, ws_url_of


@pytest.fixture
def quiet_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """The servers' windows see a core free for every process ready to run, however busy the
    machine running the tests is (what these tests check is when a window starts)."""
    monkeypatch.setattr(busy_poll, "runnable_processes", lambda: 1)


CHAIN_ID = hex(3503995874084926)  # the rpc-compat chain's (its genesis.json)

@pytest.mark.parametrize("new_loop", [asyncio.new_event_loop, uvloop.new_event_loop],
                         ids=["asyncio", "uvloop"])
@pytest.mark.usefixtures("quiet_machine")
def test_the_loop_turns_through_the_window_then_sleeps(new_loop: Any) -> None:
    window = 0.02
    poll = BusyPoll(window)
    ticks: list[float] = []

    async def scenario() -> tuple[int, int, int]:
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        poll.touch(loop)
        poll.touch(loop)  # a second read within the window does not start a second turner
        assert poll.running
        while poll.running:
            await asyncio.sleep(0)
            ticks.append(time.perf_counter() - started)
        during = poll.turns
        await asyncio.sleep(0.05)  # idle: nothing turns
        after_idle = poll.turns
        poll.touch(loop)  # a later read opens a new window
        await asyncio.sleep(window * 2)
        return during, after_idle, poll.turns

    loop = new_loop()
    try:
        during, after_idle, again = loop.run_until_complete(scenario())
    finally:
        loop.close()
    assert during > 0
    assert ticks[-1] >= window  # it stopped only once the window had passed
    assert after_idle == during
    assert again > after_idle
    assert not poll.running


@pytest.mark.parametrize("new_loop", [asyncio.new_event_loop, uvloop.new_event_loop],
                         ids=["asyncio", "uvloop"])
@pytest.mark.usefixtures("quiet_machine")
def test_the_window_starts_once_the_reads_work_is_done(new_loop: Any) -> None:
    """A request answered on the loop in longer than the window is still followed by a whole
    window, in which its client can send the next."""
    window = 0.02

    async def scenario() -> float:
        poll = BusyPoll(window)
        poll.touch(asyncio.get_running_loop())
        time.sleep(window * 2)  # the read's work, done on the loop
        done = time.perf_counter()
        while poll.running:
            await asyncio.sleep(0)
        return time.perf_counter() - done

    loop = new_loop()
    try:
        assert loop.run_until_complete(scenario()) >= window
    finally:
        loop.close()


@pytest.mark.usefixtures("quiet_machine")
def test_a_client_slower_than_the_window_is_left_alone_a_while() -> None:
    """Windows that catch no read (the client answers later than the window lasts) rest the
    polling for REST_READS reads; a client whose reads come within the window never does."""
    window = 0.005

    async def run_out(poll: BusyPoll) -> None:
        while poll.running:
            await asyncio.sleep(0)

    async def slow() -> list[bool]:
        poll, loop = BusyPoll(window), asyncio.get_running_loop()
        started = []
        for _ in range(MISSES_BEFORE_REST + REST_READS + 1):
            poll.touch(loop)  # a read, after the last window ran out
            poll.touch(loop, read=False)  # its answer
            started.append(poll.running)
            await run_out(poll)
        return started

    async def fast() -> list[bool]:
        poll, loop = BusyPoll(window), asyncio.get_running_loop()
        started = []
        for _ in range(MISSES_BEFORE_REST * 3):
            poll.touch(loop)
            started.append(poll.running)
            await asyncio.sleep(window / 5)
            poll.touch(loop)  # the next read, within the window
            await run_out(poll)
        return started

    loop = uvloop.new_event_loop()
    try:
        slow_started = loop.run_until_complete(slow())
        fast_started = loop.run_until_complete(fast())
    finally:
        loop.close()
    # the last rested read's answer opens a window again (read and answer, sampled together)
    assert slow_started == [True] * MISSES_BEFORE_REST + [False] * (REST_READS - 1) + [True] * 2
    assert all(fast_started)


def test_no_window_while_the_processes_ready_to_run_outnumber_the_cores() -> None:
    """Two looks in a row that find more processes ready than cores stop a window and keep
    the next from starting; one such look (a process caught in passing) does not; a quiet
    look lets windows start again."""
    cores = os.cpu_count() or 1
    ready = [cores + 1]  # the client spins on this core, or a build runs beside the server
    poll = BusyPoll(1.0, runnable=lambda: ready[0])

    async def until_stopped() -> float:
        started = time.perf_counter()
        while poll.running:
            await asyncio.sleep(0)
        return time.perf_counter() - started

    async def scenario() -> tuple[float, bool, bool, float]:
        loop = asyncio.get_running_loop()
        poll.touch(loop)  # one crowded look: the window starts
        stopped_after = await until_stopped()  # the second look, CHECK_SECONDS on, stops it
        poll.touch(loop)
        crowded_start = poll.running
        await asyncio.sleep(CHECK_SECONDS * 2)
        ready[0] = 1  # the machine is quiet again: the next look lets a window start
        poll.touch(loop)
        quiet_start = poll.running
        await asyncio.sleep(CHECK_SECONDS * 3)
        ready[0] = cores + 1  # crowded in the middle of a one-second window
        return stopped_after, crowded_start, quiet_start, await until_stopped()

    loop = uvloop.new_event_loop()
    try:
        stopped_after, crowded_start, quiet_start, stopped_again = loop.run_until_complete(
            scenario())
    finally:
        loop.close()
    assert stopped_after < 0.5  # within two looks, not at the window's end
    assert not crowded_start
    assert quiet_start
    assert stopped_again < 0.5


def test_the_processes_ready_to_run_are_read_from_the_system() -> None:
    ready = runnable_processes()
    if sys.platform.startswith("linux"):
        assert ready >= 1  # this test's own process is running
    else:
        assert ready == 0


def test_a_window_is_positive_and_zero_means_none() -> None:
    with pytest.raises(ValueError):
        BusyPoll(0)
    assert polling(0) is None
    assert polling(0.00025).window == 0.00025  # type: ignore[union-attr]


def test_the_setting_is_bounded() -> None:
    assert ServerConfig().busy_poll_us == 250  # on unless turned off (its figure: scaling.md)
    with pytest.raises(ConfigError, match="busy_poll_us"):
        validate(ServerConfig(busy_poll_us=-1))
    with pytest.raises(ConfigError, match="busy_poll_us"):
        validate(ServerConfig(busy_poll_us=100_001))


def _post(sock: socket.socket, body: dict[str, Any]) -> dict[str, Any]:
    raw = json.dumps(body).encode()
    sock.sendall(f"POST /v3/{KEY} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                 f"application/json\r\nContent-Length: {len(raw)}\r\n\r\n".encode() + raw)
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length")))
    while len(rest) < length:
        rest += sock.recv(65536)
    assert head.startswith(b"HTTP/1.1 200")
    return json.loads(rest)  # type: ignore[no-any-return]


def _settle(poll: BusyPoll) -> int:
    deadline = time.monotonic() + 5
    while poll.running and time.monotonic() < deadline:
        time.sleep(0.005)
    assert not poll.running
    return poll.turns


@pytest.mark.usefixtures("quiet_machine")
@pytest.mark.parametrize("lean", [True, False], ids=["lean", "asgi"])
def test_a_server_polls_only_while_it_holds_few_connections(
        rpc_compat_memory: ethread.MemoryBackend, lean: bool) -> None:
    with serve_in_thread(rpc_compat_memory, busy_poll_us=3000, lean_http=lean) as thread:
        poll = thread.prepared.server.config.http.busy_poll
        assert poll.window == 0.003
        address = ("127.0.0.1", thread.port)
        with socket.create_connection(address) as sock:
            before = _settle(poll)
            answer = _post(sock, call("eth_chainId", []))
            assert answer["result"] == CHAIN_ID
            assert _settle(poll) > before  # one connection: the loop turned after the read
            others = [socket.create_connection(address) for _ in range(MAX_CONNECTIONS)]
            try:
                # the others must be set up in the server before the next read is counted
                for other in others:
                    assert _post(other, call("eth_chainId", []))["id"] == 1
                before = _settle(poll)
                for request_id in range(5):
                    assert _post(sock, call("eth_blockNumber", [], request_id))["id"] == request_id
                assert _settle(poll) == before  # three connections: it slept at once
            finally:
                for other in others:
                    other.close()


@pytest.mark.usefixtures("quiet_machine")
def test_a_websocket_polls_with_the_servers_window(
        rpc_compat_memory: ethread.MemoryBackend) -> None:
    with serve_in_thread(rpc_compat_memory, busy_poll_us=3000) as thread:
        config = thread.prepared.server.config
        poll = config.http.busy_poll
        assert config.ws.busy_poll is poll  # one window for the server's loop
        with connect(ws_url_of(thread), open_timeout=10) as ws:
            before = _settle(poll)
            for request_id in range(3):
                ws.send(json.dumps(call("eth_chainId", [], request_id)))
                assert json.loads(ws.recv(10)) == {"jsonrpc": "2.0", "id": request_id,
                                                    "result": CHAIN_ID}
            assert _settle(poll) > before


@pytest.mark.usefixtures("quiet_machine")
@pytest.mark.parametrize("path", ["lean", "asgi", "websocket"])
def test_an_answer_made_in_a_thread_is_followed_by_a_window(
        rpc_compat_memory: ethread.MemoryBackend, monkeypatch: pytest.MonkeyPatch,
        path: str) -> None:
    """eth_getBalance runs in a pool thread; made to take 0.3 s there, its read's window (0.1 s)
    is long over when the answer is written, and the answer starts a window of its own."""
    row = table.TABLE["eth_getBalance"]

    def slow(*args: Any) -> Any:
        time.sleep(0.3)
        return row.answer(*args)

    monkeypatch.setattr(table, "TABLE", MappingProxyType(
        {**table.TABLE, "eth_getBalance": replace(row, answer=slow, cacheable=False)}))
    request = call("eth_getBalance", ["0x" + "00" * 20, "latest"], 7)
    with serve_in_thread(rpc_compat_memory, busy_poll_us=100_000,
                         lean_http=path != "asgi") as thread:
        poll = thread.prepared.server.config.http.busy_poll
        if path == "websocket":
            with connect(ws_url_of(thread), open_timeout=10) as ws:
                ws.send(json.dumps(request))
                answer = json.loads(ws.recv(10))
                answered = poll.turns
                time.sleep(0.05)
                after = poll.turns
        else:
            with socket.create_connection(("127.0.0.1", thread.port)) as sock:
                answer = _post(sock, request)
                answered = poll.turns
                time.sleep(0.05)
                after = poll.turns
        assert answer["id"] == 7 and answer["result"].startswith("0x")
        assert after > answered  # still turning 50 ms after the answer


def test_a_server_without_a_window_never_polls(rpc_compat_memory: ethread.MemoryBackend) -> None:
    with serve_in_thread(rpc_compat_memory, busy_poll_us=0) as thread:
        config = thread.prepared.server.config
        assert config.http.busy_poll is None
        assert config.ws.busy_poll is None
        with socket.create_connection(("127.0.0.1", thread.port)) as sock:
            assert _post(sock, call("eth_chainId", []))["result"] == CHAIN_ID
