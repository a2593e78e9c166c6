"""eth_call's call object: the parser's shortcut for objects with only ``from``, ``to``,
``data`` and ``input`` answers exactly what the full parser answers (the same request, or
the same error in the same order)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from ethread.codec import params
from ethread.errors import InvalidParams

VALUES: dict[str, tuple[Any, ...]] = {
    "from": (None, "0x" + "11" * 20, "0x" + "11" * 19, 5, "0xzz" + "11" * 19),
    "to": (None, "0x" + "22" * 20, "22" * 20, "0x", []),
    "data": (None, "0x", "0x01ff", "0x1", "01", "0xzz", 7),
    "input": (None, "0xabcd", "0x123", ""),
}
ABSENT = object()


def _objects() -> list[dict[str, Any]]:
    keys = list(VALUES)
    objects = []
    for choice in itertools.product(*[(ABSENT,) + VALUES[key] for key in keys]):
        objects.append({k: v for k, v in zip(keys, choice, strict=True) if v is not ABSENT})
    return objects


def _parsed(value: Any) -> Any:
    try:
        return params.parse_call_request(value)
    except InvalidParams as exc:
        return ("error", exc.code, exc.message, exc.data)


def test_the_plain_call_shortcut_answers_what_the_full_parser_answers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    objects = _objects()
    shortcut = [_parsed(value) for value in objects]
    monkeypatch.setattr(params, "_PLAIN_CALL_KEYS", frozenset())  # every object: the full parser
    full = [_parsed(value) for value in objects]
    assert shortcut == full
    kinds = {type(answer).__name__ for answer in shortcut}
    assert kinds == {"CallRequest", "tuple"}  # both requests and errors were compared
    assert sum(isinstance(answer, tuple) for answer in shortcut) > 1000


def test_an_object_with_any_other_key_takes_the_full_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[Any] = []
    plain = params._plain_call_request

    def noting(value: Any) -> Any:
        taken.append(value)
        return plain(value)

    monkeypatch.setattr(params, "_plain_call_request", noting)
    params.parse_call_request({"to": "0x" + "22" * 20, "gas": "0x5208"})
    params.parse_call_request({"to": "0x" + "22" * 20, "value": None})
    assert taken == []
    params.parse_call_request({"to": "0x" + "22" * 20, "data": "0x"})
    params.parse_call_request({})
    assert len(taken) == 2
