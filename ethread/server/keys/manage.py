"""Issuing, revoking and reporting on keys: the operations behind ``ethread keys``, the admin
API and the dashboard, so that the three say and check the same things."""

from __future__ import annotations

import time
from typing import Any

from ..billing.ledger import Ledger, utc_day
from ..observe import ABANDONED, ERROR, OK, REFUSED
from .keystore import KeyRecord, KeyStore, KeyStoreError, find, make_record


def issue(store: KeyStore, fields: dict[str, Any]) -> tuple[str, KeyRecord]:
    """A new key with ``fields`` (label, daily_credits, credits_per_second, networks,
    methods; anything else is refused): its text, shown once, and its record, stored."""
    allowed = {"label", "daily_credits", "credits_per_second", "networks", "methods"}
    unknown = sorted(set(fields) - allowed)
    if unknown:
        raise KeyStoreError(f"unknown field(s): {', '.join(u[:40] for u in unknown[:5])}")
    key, record = make_record(**fields)
    store.add(record)
    return key, record


def revoke(store: KeyStore, ident: str) -> KeyRecord:
    """Revoke the issued key ``ident`` names (see :func:`~.keystore.find`)."""
    record = find(store.records(), ident)
    if record.revoked is not None:
        raise KeyStoreError(f"key {record.prefix} is already revoked")
    store.revoke(record.key_id, time.time())
    return record


def usage_report(store: KeyStore, ledger: Ledger, key_id: str, daily_credits: int,
                 ) -> dict[str, Any]:
    """Today's figures of a key: credits spent (the ledger's, exact) and left; requests by
    method and outcome (the workers' counts, at most a second behind): answered, errors,
    refused, and abandoned (started and charged, but the client left before the answer)."""
    day = utc_day(time.time())
    used = ledger.used(key_id)
    counts = store.usage(key_id, day)
    methods: dict[str, dict[str, int]] = {}
    totals = {OK: 0, ERROR: 0, REFUSED: 0, ABANDONED: 0}
    for (method, outcome), n in sorted(counts.items()):
        methods.setdefault(method, {OK: 0, ERROR: 0, REFUSED: 0, ABANDONED: 0})[outcome] = n
        totals[outcome] = totals.get(outcome, 0) + n
    return {"day": day, "credits_used": used, "daily_credits": daily_credits,
            "credits_left": max(0, daily_credits - used),
            "requests": sum(totals.values()), "ok": totals[OK], "errors": totals[ERROR],
            "refused": totals[REFUSED], "abandoned": totals[ABANDONED], "methods": methods}
