"""Keys issued and revoked while serving: ``ethread keys`` against ``ethread serve --workers
2`` on a SQLite ledger, and against two servers on two loopback addresses sharing a Redis
ledger. A new key answers everywhere within a second, a revoked one is refused within a
second (kept-alive connections included), the usage matches what was sent, the metrics add up
over the workers, and no store holds a key's text."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.support.provider_harness import (
    ADMIN_TOKEN,
    ProviderServer,
    admin_request,
    create_key,
    keys_cli,
    usage,
    within,
)
from tests.support.redis_server import RedisServer
from tests.support.server_harness import KEY, call, post

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("keys-live")
    (directory / "admin-token").write_text(ADMIN_TOKEN + "\n")
    return directory


@pytest.fixture(scope="module")
def sqlite_server(place: Path) -> Iterator[ProviderServer]:
    with ProviderServer(["--workers", "2", "--ledger", "credits.sqlite3", "--api-key", KEY,
                         "--metrics", "--admin-token-file", "admin-token", "--admin-port", "0",
                         "--no-access-log", "--max-key-failures", "100000"], place) as server:
        yield server


def _answers_everywhere(urls: list[str], key: str, count: int = 24,
                        answered: list[int] | None = None) -> bool:
    """Whether ``count`` requests, each on a new connection (spread over the workers by the
    shared accept), all answer with the key (each one answered is added to ``answered``)."""

    def one(i: int) -> int:
        return post(f"{urls[i % len(urls)]}/v3/{key}", call("eth_chainId"))[0]

    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(one, range(count)))
    if answered is not None:
        answered.append(statuses.count(200))
    return all(status == 200 for status in statuses)


def _refused_everywhere(urls: list[str], key: str, count: int = 24) -> bool:
    def one(i: int) -> int:
        return post(f"{urls[i % len(urls)]}/v3/{key}", call("eth_chainId"))[0]

    with ThreadPoolExecutor(8) as pool:
        return all(status == 401 for status in pool.map(one, range(count)))


def _kept_alive(host: str, port: int, key: str) -> Any:
    connection = http.client.HTTPConnection(host, port, timeout=10)

    def status() -> int:
        connection.request("POST", f"/v3/{key}", json.dumps(call("eth_chainId")),
                           {"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        return response.status

    return connection, status


def test_a_key_created_answers_on_every_worker_and_revoked_is_refused(
        sqlite_server: ProviderServer, place: Path) -> None:
    ledger = str(place / "credits.sqlite3")
    assert sqlite_server.rpc("ek_not-issued-yet-0123456789abcdefgh")[0] == 401
    created = create_key(ledger, place, "--label", "live", "--daily-credits", "100000")
    key = created["key"]
    assert key.startswith("ek_") and created["prefix"] == key[:8]
    took = within(1.0, lambda: _answers_everywhere([sqlite_server.base], key))
    assert took < 1.0
    connection, status = _kept_alive(sqlite_server.host, sqlite_server.port, key)
    assert status() == 200  # the connection's gate passed with the live key
    done = keys_cli("revoke", created["prefix"], "--ledger", ledger, cwd=place)
    assert done.returncode == 0, done.stderr
    within(1.0, lambda: _refused_everywhere([sqlite_server.base], key))
    within(1.0, lambda: status() == 401)  # the same kept-alive connection
    connection.close()
    listed = json.loads(keys_cli("list", "--ledger", ledger, "--json", cwd=place).stdout)
    assert [r["revoked"] is not None for r in listed if r["id"] == created["id"]] == [True]


def test_usage_matches_the_requests_sent(sqlite_server: ProviderServer, place: Path) -> None:
    ledger = str(place / "credits.sqlite3")
    key = create_key(ledger, place, "--daily-credits", "10000")["key"]
    time.sleep(1.0)  # every worker knows it by now (the test above checks the second)
    assert sqlite_server.rpc(key)[0] == 200  # 1 eth_blockNumber (1 credit)

    def send(i: int) -> int:
        if i % 3 == 0:
            return sqlite_server.rpc(key, "eth_getBlockByNumber", ["0x1", False])[0]  # 80
        if i % 3 == 1:
            return sqlite_server.rpc(key, "eth_getBalance", ["0xzz", "latest"])[0]  # error, 80
        return sqlite_server.rpc(key, "eth_chainId")[0]  # 1

    with ThreadPoolExecutor(6) as pool:
        assert set(pool.map(send, range(30))) == {200}
    expected = {"eth_blockNumber": {"ok": 1, "error": 0, "refused": 0, "abandoned": 0},
                "eth_getBlockByNumber": {"ok": 10, "error": 0, "refused": 0, "abandoned": 0},
                "eth_getBalance": {"ok": 0, "error": 10, "refused": 0, "abandoned": 0},
                "eth_chainId": {"ok": 10, "error": 0, "refused": 0, "abandoned": 0}}

    def counted() -> bool:
        return usage(ledger, key[:8], place)["methods"] == expected

    within(3.0, counted, pause=0.2)
    report = usage(ledger, key, place)
    assert report["credits_used"] == 1 + 10 * 80 + 10 * 80 + 10
    assert report["credits_left"] == 10000 - report["credits_used"]
    assert (report["requests"], report["ok"], report["errors"]) == (31, 21, 10)


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    from prometheus_client.parser import text_string_to_metric_families

    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def _metrics(server: ProviderServer) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    import urllib.request

    with urllib.request.urlopen(f"{server.base}/metrics", timeout=10) as response:
        assert response.headers["Content-Type"].startswith("text/plain")
        return _samples(response.read().decode())


def _requests(samples: dict[Any, float], method: str, outcome: str) -> float:
    key = ("ethread_requests_total",
           (("method", method), ("network", "demo"), ("outcome", outcome)))
    return samples.get(key, 0.0)


def test_metrics_add_up_over_the_workers(sqlite_server: ProviderServer) -> None:
    before = _metrics(sqlite_server)
    sent = {("eth_getBlockByNumber", "ok"): 14, ("eth_getCode", "error"): 6,
            ("-", "refused"): 4}

    def send(i: int) -> int:
        if i < 14:
            return sqlite_server.rpc(KEY, "eth_getBlockByNumber", ["0x2", False])[0]
        if i < 20:
            return sqlite_server.rpc(KEY, "eth_getCode", ["0x12", "latest"])[0]
        return sqlite_server.rpc("wrong-key-" + str(i))[0]

    with ThreadPoolExecutor(8) as pool:  # new connections: both workers answer some
        statuses = list(pool.map(send, range(24)))
    assert statuses.count(401) == 4

    def added_up() -> bool:
        after = _metrics(sqlite_server)
        return all(_requests(after, m, o) - _requests(before, m, o) == n
                   for (m, o), n in sent.items())

    within(3.0, added_up, pause=0.2)
    after = _metrics(sqlite_server)
    assert after[("ethread_workers_up", ())] == 2
    assert after[("ethread_store_up", (("network", "demo"),))] == 1
    unauthorized = ("ethread_refusals_total", (("reason", "unauthorized"),))
    assert after[unauthorized] - before.get(unauthorized, 0) == 4
    credits = ("ethread_credits_charged_total", ())
    assert after[credits] - before.get(credits, 0) >= 14 * 80 + 6 * 80
    count = ("ethread_request_duration_seconds_count",
             (("method", "eth_getBlockByNumber"), ("network", "demo")))
    assert after[count] - before.get(count, 0) == 14
    assert after[("ethread_ledger_seconds_count", ())] > 0


def test_the_sqlite_store_holds_no_key_in_plain_text(sqlite_server: ProviderServer,
                                                      place: Path) -> None:
    ledger = str(place / "credits.sqlite3")
    key = create_key(ledger, place)["key"]
    status, body = admin_request(sqlite_server, "POST", "/admin/v1/keys", {"label": "api"})
    assert status == 201
    within(1.0, lambda: sqlite_server.rpc(key)[0] == 200 == sqlite_server.rpc(body["key"])[0])
    stored = b"".join(path.read_bytes() for path in place.glob("credits.sqlite3*"))
    assert b"key_id" in stored or len(stored) > 0
    for text in (key, body["key"], KEY):
        assert text.encode() not in stored
        assert text[3:].encode() not in stored  # not even without its prefix


def test_the_admin_api(sqlite_server: ProviderServer) -> None:
    status, body = admin_request(sqlite_server, "POST", "/admin/v1/keys",
                                 {"label": "scoped", "daily_credits": 500,
                                  "methods": ["eth_chainId"], "networks": ["demo"]})
    assert status == 201, body
    key = body["key"]
    within(1.0, lambda: _answers_everywhere([sqlite_server.base], key, 8))
    status, refused = sqlite_server.rpc(key, "eth_blockNumber")
    assert status == 403 and "may not call" in refused["error"]["message"]
    status, listed = admin_request(sqlite_server, "GET", "/admin/v1/keys")
    assert status == 200 and body["id"] in [k["id"] for k in listed["keys"]]
    assert all("key" not in k for k in listed["keys"])
    status, report = admin_request(sqlite_server, "GET",
                                   f"/admin/v1/keys/{body['prefix']}/usage")
    assert status == 200 and report["credits_used"] >= 8  # 1 credit per eth_chainId
    for bad in ({"daily_credits": -1}, {"daily_credits": "lots"}, {"label": "x" * 500},
                {"networks": ["no spaces allowed"]}, {"owner": "me"}, [1, 2]):
        status, error = admin_request(sqlite_server, "POST", "/admin/v1/keys", bad)
        assert status == 400 and isinstance(error["error"], str), bad
    assert admin_request(sqlite_server, "DELETE", "/admin/v1/keys/ek_nobody")[0] == 404
    assert admin_request(sqlite_server, "DELETE", f"/admin/v1/keys/{body['id']}")[0] == 200
    assert admin_request(sqlite_server, "DELETE", f"/admin/v1/keys/{body['id']}")[0] == 400
    # the admin API is not served on the JSON-RPC port
    assert post(f"{sqlite_server.base}/admin/v1/keys", {})[0] == 404


def test_wrong_credentials_are_slowed_down(sqlite_server: ProviderServer) -> None:
    # each worker counts what it hears: two workers hear at most 2 x 5 wrong tokens
    statuses = [admin_request(sqlite_server, "GET", "/admin/v1/keys", token="wrong" * 4)[0]
                for _ in range(16)]
    assert statuses.count(401) <= 10 and statuses.count(429) >= 6
    assert set(statuses) == {401, 429}


def test_a_client_presenting_unknown_keys_is_refused_for_a_while(tmp_path: Path) -> None:
    with ProviderServer(["--ledger", ":memory:", "--api-key", KEY, "--no-access-log"],
                        tmp_path) as server:
        statuses = [server.rpc(f"guess-{i:04d}")[0] for i in range(20)]
        assert statuses == [401] * 20
        status, body = server.rpc(KEY)  # the address is refused before its key is looked at
        assert status == 429 and "failed authentication" in body["error"]["message"]
        within(3.0, lambda: server.rpc(KEY)[0] == 200, pause=0.2)  # 1 s the first time


def test_a_worker_replaced_is_counted_and_its_counts_stay(sqlite_server: ProviderServer,
                                                         ) -> None:
    import os
    import signal
    from pathlib import Path as _Path

    children = _Path(f"/proc/{sqlite_server.process.pid}/task/{sqlite_server.process.pid}"
                     "/children").read_text().split()
    assert len(children) == 2
    before = _metrics(sqlite_server)
    total = sum(v for (name, _), v in before.items() if name == "ethread_requests_total")
    os.kill(int(children[0]), signal.SIGKILL)

    def replaced() -> bool:
        after = _metrics(sqlite_server)
        return (after.get(("ethread_worker_restarts_total", ()), 0) == 1
                and after[("ethread_workers_up", ())] == 2)

    within(20.0, replaced, pause=0.2)
    after = _metrics(sqlite_server)
    # the dead worker's counts stay in the sum (what it had flushed; the scrapes above each
    # made the worker that answered flush, so at most its last half second is missing)
    assert sum(v for (name, _), v in after.items() if name == "ethread_requests_total") \
        >= total - 10


# -- two servers, two addresses, one Redis -----------------------------------------------------


@pytest.mark.redis
def test_two_hosts_sharing_redis(redis_server: RedisServer, redis_url: str, tmp_path: Path) -> None:
    url = redis_url  # the session's Redis, emptied for this test
    args = ["--ledger", url, "--api-key", KEY, "--no-access-log", "--max-key-failures", "1000"]
    with ProviderServer([*args, "--host", "127.0.0.1"], tmp_path) as one, \
            ProviderServer([*args, "--host", "127.0.0.2"], tmp_path) as two:
        assert (one.host, two.host) == ("127.0.0.1", "127.0.0.2")
        hosts = [one.base, two.base]
        created = create_key(url, tmp_path, "--daily-credits", "5000")
        key = created["key"]
        answered: list[int] = []  # (a host that did not know the key yet did not count it)
        within(1.0, lambda: _answers_everywhere(hosts, key, 16, answered))
        for i in range(20):
            server = one if i % 2 else two
            assert server.rpc(key, "eth_getBlockByNumber", ["0x1", False])[0] == 200
        expected = {"eth_chainId": {"ok": sum(answered), "error": 0, "refused": 0, "abandoned": 0},
                    "eth_getBlockByNumber": {"ok": 20, "error": 0, "refused": 0, "abandoned": 0}}
        within(3.0, lambda: usage(url, key[:8], tmp_path)["methods"] == expected, pause=0.2)
        assert usage(url, key, tmp_path)["credits_used"] == sum(answered) + 20 * 80
        stored = b"".join(redis_server.command("DUMP", name.decode())
                          for name in _redis_keys(redis_server))
        names = b"".join(_redis_keys(redis_server))
        assert key.encode() not in stored + names and key[3:].encode() not in stored + names
        assert keys_cli("revoke", key[:8], "--ledger", url, cwd=tmp_path).returncode == 0
        within(1.0, lambda: _refused_everywhere(hosts, key, 16))


def _redis_keys(server: RedisServer) -> list[bytes]:
    reply = server.command("KEYS", "*")
    return [line for line in reply.split(b"\r\n")[2::2] if line]
