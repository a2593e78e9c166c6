"""Read ``.io`` request/response cases and compare answers exactly."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Exchange:
    request: str
    expected: Any


def read_case(path: Path) -> list[Exchange]:
    exchanges = []
    request = None
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if line.startswith(">> "):
            request = line[3:]
        elif line.startswith("<< "):
            assert request is not None, f"{path}: response before request"
            exchanges.append(Exchange(request, json.loads(line[3:])))
            request = None
    return exchanges


def first_difference(got: Any, want: Any, path: str = "$") -> str | None:
    """Where two JSON values first differ (key order aside), or None when equal."""
    if type(got) is not type(want):
        return f"{path}: got {json.dumps(got)[:200]} want {json.dumps(want)[:200]}"
    if isinstance(want, dict):
        for key in sorted(set(got) | set(want)):
            if key not in got:
                return f"{path}.{key}: missing"
            if key not in want:
                return f"{path}.{key}: unexpected"
            diff = first_difference(got[key], want[key], f"{path}.{key}")
            if diff:
                return diff
        return None
    if isinstance(want, list):
        if len(got) != len(want):
            return f"{path}: length {len(got)}, want {len(want)}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            diff = first_difference(g, w, f"{path}[{i}]")
            if diff:
                return diff
        return None
    return None if got == want else f"{path}: got {json.dumps(got)[:200]} want {json.dumps(want)[:200]}"
