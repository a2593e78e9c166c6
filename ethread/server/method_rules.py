"""Which methods a key may call: a list of rules per key, each a method (``eth_call``), a
namespace (``debug_*``; ``*`` alone: every method), or either after ``!`` to deny it.

With no allowing rule a list allows all but the denied (``["!debug_*", "!trace_*"]``: no
tracing); with some, only those less the denied (``["eth_*", "!eth_sendRawTransaction"]``).
A denial always wins. A refused call is answered 403 before any charge, naming the rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

RULE = re.compile(r"^!?(?:\*|[A-Za-z0-9_.:-]{1,64}\*?)$")
"""A rule: an optional ``!``, then a name of letters, digits and ``_.:-``, optionally ending
in ``*`` (a namespace), or ``*`` alone."""


def _matches(pattern: str, method: str) -> bool:
    return method.startswith(pattern[:-1]) if pattern.endswith("*") else method == pattern


@dataclass(frozen=True, slots=True)
class MethodRules:
    """A key's rules, split once into what they allow and what they deny."""

    allowed: tuple[str, ...]
    denied: tuple[str, ...]

    def refusal(self, method: str) -> str | None:
        """Why ``method`` may not be called under these rules (None: it may)."""
        for pattern in self.denied:
            if _matches(pattern, method):
                return f"this API key may not call {method[:64]!r} (denied by {'!' + pattern!r})"
        if self.allowed and not any(_matches(pattern, method) for pattern in self.allowed):
            return f"this API key may not call {method[:64]!r} (not among its allowed methods)"
        return None


@lru_cache(maxsize=1024)
def rules_of(rules: frozenset[str]) -> MethodRules:
    """The rules of a key's list (made once per distinct list)."""
    ordered = sorted(rules)
    return MethodRules(allowed=tuple(r for r in ordered if not r.startswith("!")),
                       denied=tuple(r[1:] for r in ordered if r.startswith("!")))


def invalid_rules(rules: Iterable[object]) -> list[str]:
    """The entries of ``rules`` that are not rules (for the config's and key store's errors)."""
    return [str(r)[:70] for r in rules if not isinstance(r, str) or not RULE.match(r)]
