"""The dashboard's HTML. Every value from a key, a form or the store goes through
:func:`html.escape`; the pages hold no script, and their only style is :data:`STYLE`, served
from the dashboard's own address (the content security policy allows nothing else)."""

from __future__ import annotations

import time
from html import escape
from typing import Any

from ...keys.keystore import KeyRecord

STYLE = b"""body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:64rem;
padding:0 1rem;color:#222}h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.3rem .5rem;
border-bottom:1px solid #ddd}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
form.inline{display:inline}fieldset{border:1px solid #ccc;margin:1rem 0}
label{display:block;margin:.4rem 0}input[type=text],input[type=password]{width:24rem}
.key{font:1.05rem monospace;background:#ffd;padding:.6rem;border:1px solid #cc9;
word-break:break-all}.error{color:#a00}.muted{color:#777}nav{float:right}"""


def _page(title: str, body: str, csrf: str | None = None) -> str:
    logout = ("" if csrf is None else
              f'<nav><form class="inline" method="post" action="/dashboard/logout">'
              f'<input type="hidden" name="csrf" value="{escape(csrf)}">'
              f'<button type="submit">Log out</button></form></nav>')
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width">'
            f'<title>{escape(title)} · ethread</title>'
            f'<link rel="stylesheet" href="/dashboard/style.css"></head>'
            f'<body>{logout}<h1>{escape(title)}</h1>{body}</body></html>')


def login(csrf: str, admin: bool, message: str = "") -> str:
    """The login page: with an API key, and (on the admin address) with the admin token."""
    error = f'<p class="error" id="error">{escape(message)}</p>' if message else ""
    logins = [("key", "API key", "Your key", 200, "See my usage")]
    if admin:
        logins.append(("admin", "Administrator", "Admin token", 600, "Log in"))
    forms = "".join(
        f'<form method="post" action="/dashboard/login"><fieldset><legend>{legend}'
        f'</legend><input type="hidden" name="kind" value="{kind}">'
        f'<input type="hidden" name="csrf" value="{escape(csrf)}">'
        f'<label>{label} <input type="password" name="secret" id="{kind}-secret" '
        f'autocomplete="off" required maxlength="{size}"></label>'
        f'<button type="submit" id="{kind}-login">{button}</button></fieldset></form>'
        for kind, legend, label, size, button in logins)
    return _page("Dashboard", error + forms)


def _when(moment: float | None) -> str:
    if moment is None:
        return ""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(moment))


def usage(title: str, record: dict[str, Any], report: dict[str, Any], csrf: str,
          back: bool = False) -> str:
    """A key's figures of the day."""
    rows = "".join(
        f'<tr><td>{escape(method)}</td><td class="n">{counts.get("ok", 0)}</td>'
        f'<td class="n">{counts.get("error", 0)}</td>'
        f'<td class="n">{counts.get("refused", 0)}</td>'
        f'<td class="n">{counts.get("abandoned", 0)}</td></tr>'
        for method, counts in report["methods"].items())
    table = (f'<table id="methods"><tr><th>Method</th><th class="n">Answered</th>'
             f'<th class="n">Errors</th><th class="n">Refused</th>'
             f'<th class="n">Abandoned</th></tr>{rows}</table>'
             if rows else '<p class="muted">No requests today.</p>')
    link = '<p><a href="/dashboard/admin">All keys</a></p>' if back else ""
    body = (f'{link}<p>Key <code>{escape(record["prefix"])}</code> '
            f'{escape(record.get("label") or "")} · UTC day {escape(report["day"])}</p>'
            f'<table id="summary">'
            f'<tr><th>Credits spent today</th><td class="n" id="credits-used">'
            f'{report["credits_used"]}</td></tr>'
            f'<tr><th>Credits left today</th><td class="n" id="credits-left">'
            f'{report["credits_left"]}</td></tr>'
            f'<tr><th>Daily credits</th><td class="n">{report["daily_credits"]}</td></tr>'
            f'<tr><th>Requests</th><td class="n" id="requests">{report["requests"]}</td></tr>'
            f'<tr><th>Errors</th><td class="n" id="errors">{report["errors"]}</td></tr>'
            f'<tr><th>Refused</th><td class="n" id="refused">{report["refused"]}</td></tr>'
            f'<tr><th>Abandoned (charged, the client left before the answer)</th>'
            f'<td class="n" id="abandoned">{report.get("abandoned", 0)}</td></tr>'
            f'</table><h2>Requests by method</h2>{table}'
            f'<p class="muted">Credits are the ledger\'s own figure; requests are counted by '
            f'the workers and may be a second behind.</p>')
    return _page(title, body, csrf)


def admin(records: list[KeyRecord], configured: int, csrf: str, issued: str | None = None,
          issued_record: KeyRecord | None = None, message: str = "") -> str:
    """The administrator's page: issue a key, list and revoke keys."""
    parts = []
    if message:
        parts.append(f'<p class="error" id="error">{escape(message)}</p>')
    if issued is not None and issued_record is not None:
        parts.append(
            f'<h2>New key</h2><p>Copy it now: it is shown this once and stored only as a '
            f'hash.</p><p class="key" id="new-key">{escape(issued)}</p>')
    parts.append(
        '<h2>Issue a key</h2><form method="post" action="/dashboard/admin/issue">'
        f'<input type="hidden" name="csrf" value="{escape(csrf)}">'
        '<label>Label <input type="text" name="label" id="label" maxlength="100"></label>'
        '<label>Daily credits <input type="text" name="daily_credits" id="daily-credits" '
        'value="3000000" maxlength="16"></label>'
        '<label>Credits per second (empty: no rate limit) <input type="text" '
        'name="credits_per_second" maxlength="16"></label>'
        '<label>Networks (comma-separated; empty: all) <input type="text" name="networks" '
        'maxlength="2000"></label>'
        '<label>Methods (comma-separated; empty: all) <input type="text" name="methods" '
        'maxlength="4000"></label>'
        '<button type="submit" id="issue">Issue</button></form>')
    rows = []
    for record in reversed(records):
        state = ("revoked " + _when(record.revoked)) if record.revoked is not None else "live"
        action = "" if record.revoked is not None else (
            f'<form class="inline" method="post" action="/dashboard/admin/revoke">'
            f'<input type="hidden" name="csrf" value="{escape(csrf)}">'
            f'<input type="hidden" name="id" value="{escape(record.key_id)}">'
            f'<button type="submit" id="revoke-{escape(record.prefix)}">Revoke</button></form>')
        rows.append(
            f'<tr id="row-{escape(record.prefix)}"><td><a href="/dashboard/admin/key?id='
            f'{escape(record.key_id)}"><code>{escape(record.prefix)}…</code></a></td>'
            f'<td>{escape(record.label)}</td><td class="n">{record.daily_credits}</td>'
            f'<td>{escape(", ".join(record.networks) or "all")}</td>'
            f'<td>{escape(_when(record.created))}</td><td class="state">{escape(state)}</td>'
            f'<td>{action}</td></tr>')
    parts.append(
        f'<h2>Issued keys</h2><table id="keys"><tr><th>Key</th><th>Label</th>'
        f'<th class="n">Daily credits</th><th>Networks</th><th>Issued</th><th>State</th>'
        f'<th></th></tr>{"".join(rows)}</table>'
        f'<p class="muted">{configured} more key(s) come from the configuration file; they '
        f'are changed there.</p>')
    return _page("Keys", "".join(parts), csrf)


def problem(title: str, message: str) -> str:
    """A page saying what went wrong."""
    return _page(title, f'<p class="error" id="error">{escape(message)}</p>'
                        '<p><a href="/dashboard">Back</a></p>')
