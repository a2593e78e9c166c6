"""The method list of the docs, written from the table: ``python -m ethread.rpc.docs >
docs/methods.md`` (a test fails when the file differs from what the table writes)."""

from __future__ import annotations

import inspect
import sys

from .row import Method, Source, Where
from .table import TABLE

_WHERE = {Where.ANYWHERE: "", Where.DEV_CHAIN: "dev chain",
          Where.TAKES_TRANSACTIONS: "dev chain, `--txpool`"}
_SOURCES = {Source.FORK_HISTORY: "fork history", Source.DEV_POOL: "dev pool",
            Source.SERVED_POOL: "served pool", Source.PENDING_STATE: "pending state"}


def _params(method: Method) -> str:
    return ", ".join(param.name if param.required else f"[{param.name}]"
                     for param in method.params)


def _answered_by(method: Method) -> str:
    """The function that answers it (for one made by a helper, the function it calls)."""
    function = inspect.unwrap(method.answer)
    return f"`{function.__module__.removeprefix('ethread.')}.{function.__name__}`"


def _row(method: Method) -> str:
    sources = ", ".join(text for source, text in _SOURCES.items() if source in method.sources)
    flags = ", ".join(flag for flag, on in (("slow", method.slow),
                                           ("not cached", not method.cacheable)) if on)
    return (f"| `{method.name}` | {_params(method)} | {method.price} | {_WHERE[method.where]} "
            f"| {sources} | {flags} | {_answered_by(method)} |")


def methods_markdown() -> str:
    """docs/methods.md: every method of the table, by namespace."""
    lines = [
        "# Methods",
        "",
        "Every JSON-RPC method ethread answers, written from the method table",
        "(`ethread/rpc/table.py`; regenerate with `python -m ethread.rpc.docs > docs/methods.md`).",
        "Parameters in brackets may be left out. *Price*: credits per call on a server with keys",
        "(a method not listed costs 1). *Where*: a method offered only on a dev chain's network",
        "or where transactions are taken answers -32601 elsewhere. *Also from*: the sources that",
        "answer before the chain (`ethread/rpc/sources.py`). *Slow*: run off the event loop.",
        "",
        "| method | parameters | price | where | also from | | answered by |",
        "|---|---|---|---|---|---|---|",
    ]
    lines.extend(_row(TABLE[name]) for name in sorted(TABLE))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(methods_markdown())
