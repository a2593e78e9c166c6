"""The admin API (``/admin/v1/keys``) and the dashboard, for a server with an admin token
(docs/server.md, "The admin API and the dashboard", lists the requests and answers).

Both are answered on the admin address, a socket of its own; a key holder's dashboard pages
also on the JSON-RPC ports when ``dashboard = true``. The API takes ``Authorization: Bearer
<token>`` (wrong ones count against the address: :mod:`..keys.abuse`). An issued or revoked key
reloads this worker's keys at once; the others within a second (:mod:`..keys.sync`).
"""

from __future__ import annotations

import hmac
import logging
from typing import Any

import orjson

from ..asgi import Receive, Scope, Send
from ..billing.ledger import LedgerError
from ..keys.abuse import FailedAttempts, address_of
from ..keys.keystore import KeyStore, KeyStoreError, find
from ..keys.manage import issue, revoke, usage_report
from ..service import Service
from .dashboard import Dashboard
from .dashboard.sessions import Sessions
from .web import BadRequest, headers_of, read_body, send_json

log = logging.getLogger("ethread.server")

API = "/admin/v1/keys"


class AdminSite:
    """The admin API and the dashboard of one server process."""

    def __init__(self, service: Service, token: str, admin_port: int | None,
                 public_dashboard: bool) -> None:
        assert service.key_sync is not None
        self.service = service
        self.store: KeyStore = service.key_sync.store
        self.admin_port = admin_port
        self.public_dashboard = public_dashboard
        self._token = token.encode()
        self.failed_logins = FailedAttempts(limit=5, window=300.0, first_penalty=10.0)
        """Wrong admin tokens and dashboard logins, per address: stricter than unknown keys."""
        self.dashboard = Dashboard(self, Sessions(token))

    def serves(self, path: str) -> bool:
        """Whether ``path`` is the admin API's or the dashboard's."""
        return path.startswith(("/admin/", "/dashboard")) or path == "/admin"

    def token_matches(self, presented: str) -> bool:
        """Whether ``presented`` is the admin token (compared in constant time)."""
        return hmac.compare_digest(presented.encode()[:1024], self._token)

    async def reload(self) -> None:
        """Read the keys again in this worker, off the event loop."""
        sync = self.service.key_sync
        if sync is not None:
            try:
                await self.service.execution.blocking(sync.load)
            except LedgerError as exc:
                log.error("reloading the keys failed: %s", exc)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        server = scope.get("server")
        on_admin = server is not None and server[1] == self.admin_port
        path: str = scope["path"]
        if path.startswith("/dashboard") and (on_admin or self.public_dashboard):
            await self.dashboard(scope, receive, send, admin=on_admin)
        elif path.startswith("/admin") and on_admin:
            await self.api(scope, receive, send)
        else:
            await send_json(send, 404, {"error": "not found"})

    async def api(self, scope: Scope, receive: Receive, send: Send) -> None:
        """One request of the admin API."""
        address = address_of(scope.get("client"))
        wait = self.failed_logins.refused_for(address)
        if wait:
            await send_json(send, 429, {"error": f"too many failed attempts: retry after "
                                                 f"{wait} s"},
                            ((b"retry-after", str(wait).encode()),))
            return
        auth = headers_of(scope).get(b"authorization", b"")
        scheme, _, presented = auth.partition(b" ")
        if scheme.lower() != b"bearer" or not hmac.compare_digest(presented.strip()[:1024],
                                                                  self._token):
            self.failed_logins.failed(address)
            await send_json(send, 401, {"error": "the admin token is missing or wrong"},
                            ((b"www-authenticate", b"Bearer"),))
            return
        self.failed_logins.succeeded(address)
        try:
            status, answer = await self._route(scope, receive)
        except BadRequest as exc:
            status, answer = exc.status, {"error": exc.message}
        except KeyStoreError as exc:
            status = 404 if str(exc).startswith("no issued key") else 400
            answer = {"error": str(exc)}
        except LedgerError as exc:
            log.error("admin API: %s", exc)
            status, answer = 503, {"error": "the key store or the ledger cannot be reached"}
        await send_json(send, status, answer)

    async def _route(self, scope: Scope, receive: Receive) -> tuple[int, Any]:
        method, path = scope["method"], scope["path"].rstrip("/")
        blocking = self.service.execution.blocking
        store = self.store
        if path == API and method == "GET":
            records = await blocking(store.records)
            return 200, {"keys": [r.public() for r in records],
                         "configured": self.service.keys.configured}
        if path == API and method == "POST":
            body = await read_body(receive)
            try:
                fields = orjson.loads(body) if body.strip() else {}
            except orjson.JSONDecodeError:
                raise BadRequest(400, "the body is not JSON") from None
            if not isinstance(fields, dict):
                raise BadRequest(400, "the body is a JSON object of the key's fields")
            key, record = await blocking(issue, store, fields)
            await self.reload()
            return 201, {"key": key, **record.public()}
        if path.startswith(API + "/"):
            rest = path[len(API) + 1:]
            ident, _, tail = rest.partition("/")
            if method == "DELETE" and not tail:
                record = await blocking(revoke, store, ident)
                await self.reload()
                return 200, {"revoked": record.public()}
            if method == "GET" and tail == "usage":
                record = find(await blocking(store.records), ident)
                report = await blocking(usage_report, store, self.service.billing.ledger,
                                        record.key_id, record.daily_credits)
                return 200, {**record.public(), **report}
        raise BadRequest(404 if method in ("GET", "POST", "DELETE") else 405,
                         "not found: see docs/server.md for the admin API")
