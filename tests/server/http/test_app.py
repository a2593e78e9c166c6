"""The HTTP transport: keys, credits, limits, networks, and the event loop staying free.

Each test serves a chain in this process on a free loopback port and talks to it with the
standard library's HTTP client, as any outside client would.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import ethread
from ethread.server import make_network
from ethread.server.config import KeyConfig
from tests.support.server_harness import KEY, call, get, post, serve_in_thread, url_of

BLOCK = call("eth_getBlockByNumber", ["0x1", True])
LOGS_ALL = call("eth_getLogs", [{"fromBlock": "0x0", "toBlock": "latest"}])


def _spent(thread: Any, key: str = KEY) -> int:
    service = thread.prepared.service
    found = service.keys.lookup(key)
    assert found is not None
    return int(service.billing.ledger.used(found.key_id))


@pytest.fixture(scope="module", params=[True, False], ids=["lean", "asgi"])
def server(rpc_compat_memory: ethread.MemoryBackend, request: pytest.FixtureRequest) -> Any:
    """The server on each HTTP path: the lean one (the default) and uvicorn's ASGI one."""
    with serve_in_thread(rpc_compat_memory, lean_http=request.param) as thread:
        yield thread


# -- authentication ----------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/v3/", "/v3/not-a-key", "/v3/" + KEY + "x", "/v3/a/b"])
def test_a_missing_or_unknown_key_gets_401_with_a_json_error(server: Any, path: str) -> None:
    status, _, body = post(f"http://127.0.0.1:{server.port}{path}", call("eth_chainId"))
    assert status == 401
    assert body["error"]["code"] == -32001
    assert "API key" in body["error"]["message"]


def test_the_key_is_the_only_credential_and_a_trailing_slash_is_fine(server: Any) -> None:
    status, _, body = post(url_of(server) + "/", call("eth_chainId"))
    assert (status, body["result"]) == (200, "0xc72dd9d5e883e")


def test_health_needs_no_key(server: Any) -> None:
    status, body = get(f"http://127.0.0.1:{server.port}/health")
    assert status == 200
    assert body == {"status": "ok", "networks": {"main": {"head": 45, "status": "ok"}},
                    "workers": {"up": 1, "configured": 1}}


@pytest.mark.parametrize(("method", "headers", "status"), [
    ("GET", {}, 405),
    ("POST", {"Content-Type": "text/plain"}, 415),
])
def test_wrong_http_method_or_content_type(server: Any, method: str, headers: dict[str, str],
                                           status: int) -> None:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url_of(server), data=b"{}" if method == "POST" else None,
                                     headers=headers, method=method)
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(request, timeout=10)
    assert info.value.code == status
    import json

    assert json.loads(info.value.read())["error"]["code"] == -32600


def test_unknown_path_is_404(server: Any) -> None:
    status, _, body = post(f"http://127.0.0.1:{server.port}/v2/{KEY}", call("eth_chainId"))
    assert status == 404 and body["error"]["code"] == -32600


# -- JSON-RPC envelope over HTTP -----------------------------------------------------------------


def test_parse_errors_and_notifications(server: Any) -> None:
    status, _, body = post(url_of(server), None, raw=b"{not json")
    assert status == 200 and body["error"]["code"] == -32700
    status, _, body = post(url_of(server), {"jsonrpc": "2.0", "method": "eth_chainId"})
    assert (status, body) == (204, None)
    status, _, body = post(url_of(server), call("eth_subscribe", ["newHeads"]))
    assert body["error"]["code"] == -32601
    status, _, body = post(url_of(server), {"jsonrpc": "2.0", "method": "eth_subscribe",
                                            "params": ["newHeads"]})
    assert (status, body) == (204, None)


def test_batch_answers_in_order_with_errors_in_place(server: Any) -> None:
    status, _, body = post(url_of(server), [call("eth_blockNumber", [], 1), 7,
                                            call("nope", [], 3), call("eth_chainId", [], "x")])
    assert status == 200
    assert [item["id"] for item in body] == [1, None, 3, "x"]
    assert body[0]["result"] == "0x2d" and body[1]["error"]["code"] == -32600
    assert body[2]["error"]["code"] == -32601 and body[3]["result"] == "0xc72dd9d5e883e"


# -- limits ------------------------------------------------------------------------------------


def test_body_and_batch_limits(rpc_compat_memory: ethread.MemoryBackend) -> None:
    with serve_in_thread(rpc_compat_memory,
                         limits={"max_body_bytes": 2000, "max_batch_calls": 3}) as thread:
        status, _, body = post(url_of(thread), None, raw=b'{"pad":"' + b"x" * 3000 + b'"}')
        assert status == 413 and "body too large" in body["error"]["message"]
        assert body["error"]["code"] == -32600
        status, _, body = post(url_of(thread), [call("eth_chainId", [], i) for i in range(4)])
        assert status == 413 and "batch too large" in body["error"]["message"]
        assert _spent(thread) == 0, "a refused request is not charged"
        status, _, body = post(url_of(thread), [call("eth_chainId", [], i) for i in range(3)])
        assert status == 200 and len(body) == 3


def test_get_logs_timeout_stops_the_query(rpc_compat_memory: ethread.MemoryBackend) -> None:
    from ethread.methods.logs import LogLimits
    from ethread.rpc.context import Context

    limits = LogLimits(timeout=1e-9)
    network = make_network("main", rpc_compat_memory, Context(log_limits=limits))
    with serve_in_thread(networks=[network]) as thread:
        _, _, body = post(url_of(thread), LOGS_ALL)
    assert body["error"] == {"code": -32005, "message": "query timeout exceeded"}


def test_get_logs_result_limit(rpc_compat_memory: ethread.MemoryBackend) -> None:
    from ethread.methods.logs import LogLimits
    from ethread.rpc.context import Context

    network = make_network("main", rpc_compat_memory, Context(log_limits=LogLimits(max_results=2)))
    with serve_in_thread(networks=[network]) as thread:
        _, _, body = post(url_of(thread), LOGS_ALL)
    assert body["error"]["code"] == -32005
    assert body["error"]["message"] == "query returned more than 2 results"


class _SlowLogs:
    """The rpc-compat backend, except that eth_getLogs takes a while (as a store waiting for
    its disk would: so not history in memory, whose queries the server tries on its loop)."""

    holds_history_in_memory = False

    def __init__(self, inner: Any, release: threading.Event) -> None:
        self._inner = inner
        self._release = release
        self.started = threading.Event()
        """Set once a slow call is running (holding a worker until released)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def logs(self, query: Any) -> Any:
        self.started.set()
        self._release.wait(30)
        return self._inner.logs(query)


def test_a_slow_call_does_not_block_other_clients(rpc_compat_memory: ethread.MemoryBackend) -> None:
    release = threading.Event()
    slow_backend = _SlowLogs(rpc_compat_memory, release)
    network = make_network("main", slow_backend)  # type: ignore[arg-type]
    with serve_in_thread(networks=[network]) as thread, ThreadPoolExecutor(1) as pool:
        slow = pool.submit(post, url_of(thread), LOGS_ALL)
        assert slow_backend.started.wait(30), "the slow call never reached the backend"
        for _ in range(20):  # answered while the slow call is still running
            _, _, body = post(url_of(thread), call("eth_getBlockByNumber", ["0x2", False]))
            assert body["result"]["number"] == "0x2"
        assert not slow.done()
        release.set()
        assert slow.result(timeout=30)[2]["result"]


# -- credits -----------------------------------------------------------------------------------


def test_every_call_of_a_batch_is_charged(rpc_compat_memory: ethread.MemoryBackend) -> None:
    with serve_in_thread(rpc_compat_memory) as thread:
        post(url_of(thread), [BLOCK, LOGS_ALL, call("eth_chainId"), call("eth_getBlockReceipts",
                                                                         ["0x1"]), 42])
        assert _spent(thread) == 80 + 255 + 1 + 1000  # the invalid element costs nothing
        post(url_of(thread), {"jsonrpc": "2.0", "method": "eth_getProof",
                              "params": ["0x" + "00" * 20, [], "latest"]})
        assert _spent(thread) == 1336 + 150, "a notification does work and is charged"


def test_exhausted_balance_answers_429_until_midnight_utc(
        rpc_compat_memory: ethread.MemoryBackend) -> None:
    keys = (KeyConfig(key=KEY, daily_credits=200),)
    with serve_in_thread(rpc_compat_memory, keys=keys) as thread:
        assert post(url_of(thread), BLOCK)[0] == 200
        assert post(url_of(thread), BLOCK)[0] == 200
        status, headers, body = post(url_of(thread), BLOCK)
        assert status == 429
        assert body["error"]["code"] == -32005
        assert "daily credit limit" in body["error"]["message"]
        assert body["id"] == BLOCK["id"]
        now = time.gmtime()
        to_midnight = 86400 - (now.tm_hour * 3600 + now.tm_min * 60 + now.tm_sec)
        assert abs(int(headers["retry-after"]) - to_midnight) <= 5
        assert _spent(thread) == 160, "the refused call is not charged"
        status, _, body = post(url_of(thread), [call("eth_chainId", [], 1), BLOCK])
        assert status == 429 and [e["error"]["code"] for e in body] == [-32005, -32005]
        assert post(url_of(thread), call("eth_chainId"))[0] == 200  # 161: still fits
        assert _spent(thread) == 161


def test_usage_survives_a_restart(rpc_compat_memory: ethread.MemoryBackend, tmp_path: Path) -> None:
    ledger = str(tmp_path / "credits.sqlite3")
    keys = (KeyConfig(key=KEY, daily_credits=100),)
    with serve_in_thread(rpc_compat_memory, keys=keys, ledger=ledger) as thread:
        assert post(url_of(thread), BLOCK)[0] == 200
    with serve_in_thread(rpc_compat_memory, keys=keys, ledger=ledger) as thread:
        assert _spent(thread) == 80
        status, _, body = post(url_of(thread), BLOCK)
        assert status == 429 and body["error"]["code"] == -32005


@pytest.mark.parametrize("ledger", ["file", ":memory:"])
def test_concurrent_requests_never_spend_more_than_the_balance(
        rpc_compat_memory: ethread.MemoryBackend, tmp_path: Path, ledger: str) -> None:
    keys = (KeyConfig(key=KEY, daily_credits=80 * 10 + 79),)
    path = str(tmp_path / "l.sqlite3") if ledger == "file" else ledger
    with serve_in_thread(rpc_compat_memory, keys=keys, ledger=path) as thread, \
            ThreadPoolExecutor(16) as pool:
        statuses = list(pool.map(lambda i: post(url_of(thread), call(
            "eth_getBlockByNumber", [hex(i % 40), False], i))[0], range(48)))
        assert statuses.count(200) == 10 and statuses.count(429) == 38
        assert _spent(thread) == 800


def test_rate_limit_has_the_same_error_shape(rpc_compat_memory: ethread.MemoryBackend) -> None:
    keys = (KeyConfig(key=KEY, credits_per_second=100),)
    with serve_in_thread(rpc_compat_memory, keys=keys) as thread:
        answers = [post(url_of(thread), BLOCK) for _ in range(4)]
        refused = [a for a in answers if a[0] == 429]
        assert refused, "four 80-credit calls at once exceed 100 credits per second"
        _, headers, body = refused[0]
        assert body["error"]["code"] == -32005 and "rate limit" in body["error"]["message"]
        assert int(headers["retry-after"]) >= 1


# -- networks and logging ----------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def dev_backend() -> ethread.MemoryBackend:
    from ethread.devchain import DevChain

    backend = ethread.MemoryBackend()
    DevChain(backend).mine()
    return backend


def test_networks_by_host_header_and_by_port(rpc_compat_memory: ethread.MemoryBackend,
                                             dev_backend: ethread.MemoryBackend) -> None:
    own_port = _free_port()
    networks = [
        make_network("compat", rpc_compat_memory, hosts=("compat.localhost",)),
        make_network("dev", dev_backend, hosts=("dev.localhost",)),
        make_network("dev-port", dev_backend, port=own_port),
    ]
    with serve_in_thread(networks=networks) as thread:
        def chain_id(host: str, port: int) -> tuple[int, Any]:
            status, _, body = post(f"http://127.0.0.1:{port}/v3/{KEY}", call("eth_chainId"),
                                   headers={"Host": host})
            return status, body["result"] if status == 200 else body["error"]["message"]

        assert chain_id("compat.localhost", thread.port) == (200, "0xc72dd9d5e883e")
        assert chain_id("DEV.localhost:8545", thread.port) == (200, "0x539")
        assert chain_id("anything", own_port) == (200, "0x539")
        status, message = chain_id("unknown.localhost", thread.port)
        assert status == 404 and "unknown network" in message


def test_access_log_masks_keys(rpc_compat_memory: ethread.MemoryBackend,
                               caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="ethread.access"), \
            serve_in_thread(rpc_compat_memory, access_log=True) as thread:
        post(url_of(thread), call("eth_chainId"))
        post(url_of(thread, "wrong-key-abcdef"), call("eth_chainId"))
    lines = [r.getMessage() for r in caplog.records if r.name == "ethread.access"]
    assert any("eth_chainId 200" in line and KEY[:4] + "…" in line for line in lines)
    assert any(" 401 " in line for line in lines)
    assert not any(KEY in line or "wrong-key-abcdef" in line for line in lines)


