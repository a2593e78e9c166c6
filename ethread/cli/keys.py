"""``ethread keys create | revoke | list | usage``: API keys in the key store beside a ledger
(docs/server.md, "Issuing keys while serving"), named as ``ethread serve`` names it. Only
``create`` makes a key store; a new key is printed once, on standard output.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..extras import install_hint


def register(subparsers: Any) -> None:
    """Add the ``keys`` subcommand and its actions to the parser."""
    parser = subparsers.add_parser(
        "keys", help="issue, revoke, list API keys and show their usage",
        description="Manage the API keys kept beside a credit ledger (SQLite or Redis).")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")

    def common(action: argparse.ArgumentParser) -> None:
        where = action.add_mutually_exclusive_group()
        where.add_argument("--ledger", metavar="PATH|URL",
                           help="the ledger the servers spend from (default: ethread serve's)")
        where.add_argument("--config", metavar="FILE", help="take the ledger from this file")
        action.add_argument("--json", action="store_true", help="print JSON")
        action.set_defaults(run=run)

    create = actions.add_parser("create", help="issue a key (printed once)")
    create.add_argument("--label", default="", help="a name to recognise it by")
    create.add_argument("--daily-credits", type=int, default=3_000_000, metavar="N",
                        help="credits it may spend each UTC day (default 3,000,000)")
    create.add_argument("--credits-per-second", type=float, metavar="R",
                        help="rate limit in credits per second (default none)")
    create.add_argument("--network", action="append", dest="networks", default=[],
                        metavar="NAME", help="a network it may use (repeatable; default all)")
    create.add_argument("--method", action="append", dest="methods", default=[],
                        metavar="NAME", help="a method it may call (repeatable; default all)")
    common(create)
    revoke = actions.add_parser("revoke", help="revoke a key")
    revoke.add_argument("ident", metavar="KEY", help="the key's id, its prefix, or the key")
    common(revoke)
    listing = actions.add_parser("list", help="list issued keys (never their text)")
    common(listing)
    usage = actions.add_parser("usage", help="a key's credits and requests today")
    usage.add_argument("ident", metavar="KEY", help="the key's id, its prefix, or the key")
    common(usage)
    parser.set_defaults(run=lambda args: _help(parser))


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _ledger_spec(args: argparse.Namespace) -> str:
    from ..server.config import DEFAULT_LEDGER, load_config

    if args.ledger:
        return str(args.ledger)
    if args.config:
        return load_config(args.config).ledger
    return DEFAULT_LEDGER


def _missing_store(spec: str) -> str | None:
    """The key store file of the file ledger ``spec`` when it does not exist yet, else None."""
    from ..server.billing.ledger import is_redis_url
    from ..server.keys.keystore import keystore_path

    if is_redis_url(spec):
        return None
    path = keystore_path(spec)
    return None if Path(path).exists() else path


def run(args: argparse.Namespace) -> int:
    """Carry out one ``ethread keys`` action; the exit status."""
    try:
        from ..server.billing.ledger import LedgerError, shown_ledger
        from ..server.config import ConfigError
        from ..server.keys.keystore import KeyStoreError, open_keystore
    except ImportError as exc:
        print(f"ethread keys: the server extra is not installed ({exc.name} is missing): "
              f"{install_hint('server')}", file=sys.stderr)
        return 2
    try:
        spec = _ledger_spec(args)
        if spec == ":memory:":
            raise ConfigError("a ':memory:' ledger lives inside one server: keys are issued "
                              "into a SQLite file or Redis")
        print(f"ethread keys: ledger {shown_ledger(spec)}", file=sys.stderr)
        missing = _missing_store(spec)
        if missing is not None:
            if args.action == "list":  # nothing issued there yet: say so, make no file
                print(f"ethread keys: no key has been issued into this ledger (no key store at "
                      f"{missing}; `ethread keys create` makes it)", file=sys.stderr)
                if args.json:
                    print("[]")
                return 0
            if args.action != "create":
                raise ConfigError(f"no key store at {missing}: no key has been issued into "
                                  "this ledger (name the servers' ledger with --ledger or "
                                  "--config)")
            Path(missing).parent.mkdir(parents=True, exist_ok=True)
        store = open_keystore(spec)
    except (ConfigError, LedgerError) as exc:
        print(f"ethread keys: error: {exc}", file=sys.stderr)
        return 2
    try:
        return _act(args, store, spec)
    except (KeyStoreError, LedgerError) as exc:
        print(f"ethread keys: error: {exc}", file=sys.stderr)
        return 1 if isinstance(exc, KeyStoreError) else 2
    finally:
        store.close()


def _act(args: argparse.Namespace, store: Any, spec: str) -> int:
    from ..server.keys.keystore import KeyStoreError, find, key_id_of
    from ..server.keys.manage import issue, revoke, usage_report

    if args.action == "create":
        key, record = issue(store, {
            "label": args.label, "daily_credits": args.daily_credits,
            "credits_per_second": args.credits_per_second, "networks": args.networks,
            "methods": args.methods})
        if args.json:
            print(json.dumps({"key": key, **record.public()}))
        else:
            print(key)
            print(f"issued {record.prefix}… (id {record.key_id[:16]}…); this is the only "
                  "time the key is shown", file=sys.stderr)
        return 0
    if args.action == "revoke":
        record = revoke(store, args.ident)
        print(json.dumps({"revoked": record.public()}) if args.json
              else f"revoked {record.prefix}… ({record.label or 'no label'})")
        return 0
    if args.action == "list":
        records = store.records()
        if args.json:
            print(json.dumps([r.public() for r in records]))
            return 0
        print(f"{'prefix':<12}{'label':<24}{'daily credits':>16}  {'state':<8} networks")
        for r in records:
            state = "revoked" if r.revoked is not None else "live"
            print(f"{r.prefix + '…':<12}{r.label[:23]:<24}{r.daily_credits:>16,}  {state:<8} "
                  f"{','.join(r.networks) or 'all'}")
        return 0
    from ..server.billing.credits import open_ledger

    try:
        record = find(store.records(), args.ident)
        key_id, daily, shown = record.key_id, record.daily_credits, record.prefix + "…"
    except KeyStoreError:
        # a key of a configuration file: its usage is kept under its digest all the same
        if not args.ident.startswith("ek_") and len(args.ident) >= 8:
            key_id, daily, shown = key_id_of(args.ident), 0, args.ident[:4] + "…"
        else:
            raise
    ledger = open_ledger(spec)
    try:
        report = usage_report(store, ledger, key_id, daily)
    finally:
        ledger.close()
    if args.json:
        print(json.dumps({"id": key_id, **report}))
        return 0
    print(f"key {shown}, UTC day {report['day']}")
    left = f", {report['credits_left']:,} left of {daily:,}" if daily else ""
    print(f"credits spent: {report['credits_used']:,}{left}")
    print(f"requests: {report['requests']:,} ({report['ok']:,} answered, "
          f"{report['errors']:,} errors, {report['refused']:,} refused, "
          f"{report['abandoned']:,} abandoned)")
    for method, counts in report["methods"].items():
        print(f"  {method:<40} {counts['ok']:>8} ok {counts['error']:>6} errors "
              f"{counts['refused']:>6} refused {counts.get('abandoned', 0):>6} abandoned")
    return 0
