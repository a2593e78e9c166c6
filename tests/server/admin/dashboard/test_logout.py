"""A dashboard logout ends the session on the server side (issue 38): a copy of the cookie
taken before the logout opens nothing after it, for the administrator and for a key's holder
alike (the cookie alone, signed and unexpired, used to stay good for its 8 hours)."""

from __future__ import annotations

import http.client
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.provider_harness import ADMIN_TOKEN
from tests.support.server_harness import KEY, serve_in_thread, shared_demo


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    token = tmp_path_factory.mktemp("dashboard") / "admin-token"
    token.write_text(ADMIN_TOKEN)
    with serve_in_thread(shared_demo().chain.backend, admin_token_file=str(token),
                         admin_port=0, dashboard=True) as thread:
        yield thread


def exchange(port: int, method: str, path: str, cookies: dict[str, str],
             form: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    """(status, the cookies set, body) of one request carrying ``cookies``."""
    from urllib.parse import urlencode

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())}
    body = None
    if form is not None:
        body = urlencode(form).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    connection.request(method, path, body, headers)
    response = connection.getresponse()
    set_cookies = {}
    for name, value in response.getheaders():
        if name.lower() == "set-cookie":
            pair = value.split(";", 1)[0]
            cookie, _, content = pair.partition("=")
            set_cookies[cookie] = content
    text = response.read().decode()
    connection.close()
    return response.status, set_cookies, text


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, page[:300]
    return found.group(1)


def log_in(port: int, kind: str, secret: str) -> dict[str, str]:
    status, cookies, page = exchange(port, "GET", "/dashboard", {})
    assert status == 200
    status, session, _ = exchange(port, "POST", "/dashboard/login", cookies,
                                  {"csrf": csrf_of(page), "kind": kind, "secret": secret})
    assert status in (302, 303), status
    return {**cookies, **{k: v for k, v in session.items() if v}}


@pytest.mark.parametrize(("kind", "page"), [("admin", "/dashboard/admin"),
                                             ("key", "/dashboard/key")])
def test_a_logged_out_session_is_refused_even_with_a_copy_of_its_cookie(
        server: Any, kind: str, page: str) -> None:
    admin_site = server.prepared.service.admin
    port = admin_site.admin_port if kind == "admin" else server.port
    cookies = log_in(port, kind, ADMIN_TOKEN if kind == "admin" else KEY)
    status, _, body = exchange(port, "GET", page, cookies)
    assert status == 200
    copy = dict(cookies)
    status, cleared, _ = exchange(port, "POST", "/dashboard/logout", cookies,
                                  {"csrf": csrf_of(body)})
    assert status in (302, 303)
    assert all(value == "" for name, value in cleared.items() if name != "ethread_login")
    status, _, _ = exchange(port, "GET", page, copy)
    assert status in (302, 303)  # sent back to the login page: the session is over
    # a new login opens a new session
    assert exchange(port, "GET", page, log_in(port, kind, ADMIN_TOKEN if kind == "admin"
                                                else KEY))[0] == 200


def test_the_key_store_keeps_an_ended_session_until_it_would_expire(tmp_path: Path) -> None:
    import time

    from ethread.server.keys.keystore import SQLiteKeyStore

    for store in (SQLiteKeyStore(":memory:"), SQLiteKeyStore(str(tmp_path / "keys.sqlite3"))):
        assert not store.session_ended("abc")
        store.end_session("abc", time.time() + 60)
        store.end_session("old", time.time() - 1)
        assert store.session_ended("abc")
        assert not store.session_ended("old")
        store.close()
