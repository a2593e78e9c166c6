"""The dashboard in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``, which ``.ci/run`` installs) driven by Selenium, against ``ethread
serve`` on loopback. An administrator logs in, issues a key (shown once), the key makes
calls, the dashboard shows them and their credits, and the key is revoked from the page. A
form posted without its CSRF token is refused; the pages carry the security headers and the
session cookie is HttpOnly and SameSite=Strict."""

from __future__ import annotations

import os
import shutil
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.provider_harness import ADMIN_TOKEN, ProviderServer, within


def _binary(*names: str) -> str:
    for name in names:
        found = shutil.which(name) or next(
            (p for p in (f"/usr/bin/{name}", f"/usr/lib/chromium/{name}") if Path(p).is_file()),
            None)
        if found:
            return found
    pytest.fail(f"{names[0]} is not installed (apt-get install chromium chromium-driver): the "
                "dashboard is tested in a real browser")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    os.environ["SE_OFFLINE"] = "true"  # Selenium must not look for a browser to download
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = _binary("chromium", "chromium-browser")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--disable-gpu", "--no-first-run", "--disable-extensions",
                     "--disable-background-networking", "--disable-sync",
                     "--disable-component-update", "--no-proxy-server"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=_binary("chromedriver")),
                              options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProviderServer]:
    place = tmp_path_factory.mktemp("dashboard")
    (place / "admin-token").write_text(ADMIN_TOKEN)
    with ProviderServer(["--workers", "2", "--ledger", "credits.sqlite3", "--dashboard",
                         "--admin-token-file", "admin-token", "--admin-port", "0",
                         "--no-access-log"], place) as running:
        yield running


def _text(driver: Any, css: str) -> str:
    from selenium.webdriver.common.by import By

    return str(driver.find_element(By.CSS_SELECTOR, css).text)


def _fill(driver: Any, css: str, value: str) -> None:
    from selenium.webdriver.common.by import By

    element = driver.find_element(By.CSS_SELECTOR, css)
    element.clear()
    element.send_keys(value)


def _click(driver: Any, css: str) -> None:
    from selenium.webdriver.common.by import By

    driver.find_element(By.CSS_SELECTOR, css).click()


def _titled(driver: Any, start: str) -> None:
    """Wait for the page titled ``start...`` (a click on a submit button returns before the
    next page may have loaded)."""
    within(10.0, lambda: str(driver.title).startswith(start), pause=0.05)


def _post_form(url: str, fields: dict[str, str], cookies: str) -> int:
    request = urllib.request.Request(url, data=urllib.parse.urlencode(fields).encode(),
                                     headers={"Content-Type": "application/x-www-form-urlencoded",
                                              "Cookie": cookies})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.mark.browser
def test_admin_issues_a_key_sees_its_calls_and_revokes_it(browser: Any,
                                                          server: ProviderServer) -> None:
    assert server.admin is not None
    browser.get(f"{server.admin}/dashboard")
    _fill(browser, "#admin-secret", "not-the-token-at-all")
    _click(browser, "#admin-login")
    within(10.0, lambda: "not known" in browser.page_source, pause=0.05)
    _fill(browser, "#admin-secret", ADMIN_TOKEN)
    _click(browser, "#admin-login")
    _titled(browser, "Keys")
    session = next(c for c in browser.get_cookies() if c["name"] == "ethread_admin")
    assert session["httpOnly"] is True and session["sameSite"] == "Strict"

    _fill(browser, "#label", "browser test")
    _fill(browser, "#daily-credits", "100000")
    _click(browser, "#issue")
    within(10.0, lambda: 'id="new-key"' in browser.page_source, pause=0.05)
    key = _text(browser, "#new-key")
    assert key.startswith("ek_") and len(key) > 30
    prefix = key[:8]

    # a worker learns the key at its next poll of the store; until then it refuses the key
    # (401, not charged and not counted), so each call is made until it is answered
    answered = 0

    def chain_id_answered() -> bool:
        nonlocal answered
        if server.rpc(key, "eth_chainId")[0] != 200:
            return False
        answered += 1
        return True
    within(5.0, chain_id_answered)
    for _ in range(3):
        within(5.0, lambda: server.rpc(key, "eth_getBlockByNumber", ["0x1", True])[0] == 200)
    spent = 3 * 80 + answered * 1

    browser.get(f"{server.admin}/dashboard/admin")
    assert key not in browser.page_source  # shown once only
    _click(browser, f"#row-{prefix} a")
    _titled(browser, "Key usage")

    def shown() -> bool:
        browser.refresh()
        return (_text(browser, "#credits-used") == str(spent)
                and _text(browser, "#requests") == str(3 + answered))

    within(5.0, shown, pause=0.3)
    assert _text(browser, "#credits-left") == str(100000 - spent)
    table = _text(browser, "#methods")
    assert "eth_getBlockByNumber" in table and "eth_chainId" in table

    # CSRF: the revoke form posted without its token (or with a made-up one) is refused
    cookies = "; ".join(f"{c['name']}={c['value']}" for c in browser.get_cookies())
    browser.get(f"{server.admin}/dashboard/admin")
    from selenium.webdriver.common.by import By

    row = browser.find_element(By.CSS_SELECTOR, f"#row-{prefix}")
    key_id = row.find_element(By.CSS_SELECTOR, "input[name=id]").get_attribute("value")
    revoke_url = f"{server.admin}/dashboard/admin/revoke"
    assert _post_form(revoke_url, {"id": key_id}, cookies) == 403
    assert _post_form(revoke_url, {"id": key_id, "csrf": "x" * 43}, cookies) == 403
    assert _post_form(f"{server.admin}/dashboard/admin/issue", {"label": "forged"},
                      cookies) == 403
    time.sleep(0.3)
    assert server.rpc(key, "eth_chainId")[0] == 200  # still live

    _click(browser, f"#revoke-{prefix}")

    def revoked_shown() -> bool:
        from selenium.common.exceptions import WebDriverException

        try:
            return "revoked" in _text(browser, f"#row-{prefix} .state")
        except WebDriverException:  # the page is being replaced
            return False

    within(5.0, revoked_shown, pause=0.1)
    within(1.0, lambda: server.rpc(key)[0] == 401 and server.rpc(key)[0] == 401)


@pytest.mark.browser
def test_a_key_holder_sees_their_usage_on_the_public_port(browser: Any,
                                                          server: ProviderServer) -> None:
    from tests.support.provider_harness import admin_request

    status, body = admin_request(server, "POST", "/admin/v1/keys",
                                 {"label": "holder", "daily_credits": 1000})
    assert status == 201
    key = body["key"]
    answered = 0

    def calls_answer() -> bool:
        nonlocal answered
        for _ in range(2):
            if server.rpc(key)[0] != 200:
                return False
            answered += 1
        return True
    within(5.0, calls_answer)
    browser.delete_all_cookies()
    browser.get(f"{server.base}/dashboard")
    from selenium.webdriver.common.by import By

    assert not browser.find_elements(By.CSS_SELECTOR, "#admin-secret")  # not on this port
    # the worker that takes the login may not have polled the store for the new key yet:
    # it answers "not known" until it has (within a poll), and the login is tried again
    def logged_in() -> bool:
        from selenium.common.exceptions import WebDriverException

        try:
            _fill(browser, "#key-secret", key)
            _click(browser, "#key-login")
            within(10.0, lambda: str(browser.title).startswith("Your usage")
                   or "not known" in browser.page_source, pause=0.05)
        except WebDriverException:  # the page was being replaced
            return False
        return str(browser.title).startswith("Your usage")
    within(10.0, logged_in, pause=0.3)

    def shown() -> bool:
        browser.refresh()
        return (_text(browser, "#credits-used") == str(answered)
                and _text(browser, "#requests") == str(answered))

    within(5.0, shown, pause=0.3)
    assert _text(browser, "#credits-left") == str(1000 - answered)
    # the admin pages are not served on the public port, whatever the cookie
    browser.get(f"{server.base}/dashboard/admin")
    assert "Keys" not in browser.title


def test_the_pages_carry_the_security_headers(server: ProviderServer) -> None:
    assert server.admin is not None
    with urllib.request.urlopen(f"{server.admin}/dashboard", timeout=10) as response:
        headers = response.headers
        policy = headers["Content-Security-Policy"]
        assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
        assert headers["X-Frame-Options"] == "DENY"
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert "no-store" in headers["Cache-Control"]
        set_cookie = headers["Set-Cookie"]
        assert "HttpOnly" in set_cookie and "SameSite=Strict" in set_cookie
    # a login posted without the login page's token is refused, and so is one from elsewhere
    assert _post_form(f"{server.admin}/dashboard/login",
                      {"kind": "admin", "secret": ADMIN_TOKEN}, "") == 403
    request = urllib.request.Request(
        f"{server.admin}/dashboard/login", data=b"kind=admin", method="POST",
        headers={"Content-Type": "application/x-www-form-urlencoded",
                 "Origin": "http://evil.example"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 403
