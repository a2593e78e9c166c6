"""The answer styles (``ethread.codec.answers``): geth 1.17's and 1.16's, named once, and a
dispatcher keeping each style's answers apart."""

from __future__ import annotations

import json

import pytest

import ethread
from ethread.codec.answers import ANSWER_STYLES, GETH_1_16, GETH_1_17, answer_style


def test_answer_styles_are_named_once() -> None:
    assert list(ANSWER_STYLES) == ["geth-1.17", "geth-1.16"]
    assert answer_style("geth-1.16") is GETH_1_16 and GETH_1_17.withheld == frozenset()
    with pytest.raises(ValueError, match=r"known: geth-1\.17, geth-1\.16"):
        answer_style("geth-1.15")


def test_a_dispatcher_keeps_one_style(osaka_memory: ethread.MemoryBackend) -> None:
    """Both styles over one backend, asked in turns: each answer cache and fragment cache
    holds its own style's answers."""
    body = b'{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["0x1e",true]}'
    for _ in range(2):
        new = json.loads(ethread.handle(osaka_memory, body))["result"]  # type: ignore[arg-type]
        old = json.loads(ethread.handle(osaka_memory, body, answers=GETH_1_16))["result"]  # type: ignore[arg-type]
        assert new["transactions"] and all("blockTimestamp" in t for t in new["transactions"])
        assert not any("blockTimestamp" in t for t in old["transactions"])
        assert [{k: v for k, v in t.items() if k != "blockTimestamp"}
                for t in new["transactions"]] == old["transactions"]
