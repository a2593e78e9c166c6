"""Read ``.io`` request/response cases, ask ethread in process, and compare answers exactly."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ethread
from ethread.rpc.dispatcher import Dispatcher


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


def is_speconly(path: Path) -> bool:
    """Whether a case's comments mark it ``speconly``: checked for shape only, as hive does
    (values such as a gas estimate may differ between correct clients)."""
    return any(line.strip().startswith("//") and "speconly" in line
               for line in path.read_text().splitlines())


def shape_difference(got: Any, want: Any, path: str = "$") -> str | None:
    """Where ``got`` does not have the shape of ``want``, or None; the rules of the shared
    ``rpc-replay`` tool: a result where a result is expected (an error of any code and message
    where an error is), objects with the same keys, values of the same JSON type (any two
    numbers alike, as Python sees them), list elements against the expected list's first element, and a
    ``0x``-string where one is expected."""
    numbers = (int, float)
    if type(got) is not type(want) and not (isinstance(got, numbers) and isinstance(want, numbers)):
        return f"{path}: got a {type(got).__name__}, want a {type(want).__name__}"
    if isinstance(want, dict):
        top = path == "$"
        if top and ("result" in want) != ("result" in got):
            return f"{path}: got {json.dumps(got)[:160]}, want a {'result' if 'result' in want else 'error'}"
        ignored = {"id"} if top else set()
        for key in sorted((set(want) | set(got)) - ignored):
            if key not in got:
                return f"{path}.{key}: missing"
            if key not in want:
                return f"{path}.{key}: unexpected"
            if top and key == "error":
                continue
            diff = shape_difference(got[key], want[key], f"{path}.{key}")
            if diff:
                return diff
        return None
    if isinstance(want, list) and want:
        for i, item in enumerate(got):
            diff = shape_difference(item, want[0], f"{path}[{i}]")
            if diff:
                return diff
    if isinstance(want, str) and want.startswith("0x") and not (isinstance(got, str) and got.startswith("0x")):
        return f"{path}: got {json.dumps(got)[:80]}, want a 0x-prefixed string"
    return None


def answer_of(backend: ethread.MemoryBackend, method: str, *params: Any) -> dict[str, Any]:
    """ethread's answer through its own in-process handle."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}).encode()
    answer = ethread.handle(backend, body)
    assert answer is not None
    return json.loads(answer)  # type: ignore[no-any-return]


def ask(backend: Any, method: str, *params: Any, dispatcher: Dispatcher | None = None) -> Any:
    """The JSON answer of one call, through ``dispatcher`` or ``ethread.handle(backend)``."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)})
    raw = dispatcher.handle(body.encode()) if dispatcher else ethread.handle(backend, body.encode())
    assert raw is not None
    return json.loads(raw)


def result(backend: Any, method: str, *params: Any, dispatcher: Dispatcher | None = None) -> Any:
    """The result of one call, which must not fail."""
    answer = ask(backend, method, *params, dispatcher=dispatcher)
    assert "error" not in answer, answer
    return answer["result"]


def error(backend: Any, method: str, *params: Any) -> tuple[int, str]:
    """(code, message) of one call, which must fail."""
    answer = ask(backend, method, *params)
    assert "result" not in answer, answer
    return answer["error"]["code"], answer["error"]["message"]
