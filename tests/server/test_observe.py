"""Usage counts (``ethread.server.observe``): how an answer is classed, and method labels
bounded."""

from __future__ import annotations

import pytest

from ethread.server.observe import method_label, outcome_of


@pytest.mark.parametrize(("status", "answer", "outcome"), [
    (200, b'{"jsonrpc":"2.0","id":1,"result":"0x1"}', "ok"),
    (200, b'{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}', "error"),
    (200, b'[{"jsonrpc":"2.0","id":1,"error":{"code":3}}]', "error"),
    (401, b'{"jsonrpc":"2.0","id":null,"error":{"code":-32001}}', "refused"),
    (429, None, "refused"),
    (204, None, "ok"),
])
def test_answers_are_classed(status: int, answer: bytes | None, outcome: str) -> None:
    assert outcome_of(status, answer) == outcome


def test_method_labels_are_bounded() -> None:
    assert method_label("eth_call") == "eth_call"
    assert method_label("batch(7)") == "batch"
    assert method_label("x" * 1000) == "other"
    assert method_label("invalid") == "invalid"
