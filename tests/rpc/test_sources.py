"""Which source answers a call (:mod:`ethread.rpc.sources`), from what a row declares and the
network: a dev chain's pool first, then a forked chain's history, then the chain (its
pending state when the block parameter is "pending"); a served chain's pool only where there
is no dev chain; and whether the answer may be cached follows from the same declarations."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from ethread.codec.answers import AnswerStyle
from ethread.errors import InvalidParams
from ethread.methods.call import CallStates
from ethread.rpc.context import Context
from ethread.rpc.fork_history import NOT_HISTORY, Local
from ethread.rpc.pool_reads import NOT_PENDING
from ethread.rpc.row import Method, Param, Scope, opt
from ethread.rpc.sources import answer, cacheable
from ethread.rpc.trace_cache import Key as TraceKey
from ethread.rpc.trace_cache import TraceCache


class Chain:
    """A backend: only its name is read (by :func:`_chain`)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def transaction_location(self, tx_hash: bytes) -> tuple[bytes, int] | None:
        return (b"\x07" * 32, 0)


class Dev:
    """A dev chain as the sources see it: its fork history and its pending state."""

    def __init__(self, history: object | None = None) -> None:
        self.fork_history = history
        self.pending = Chain("pending state")

    def pending_state(self) -> Chain:
        return self.pending


asked: list[str] = []


def _chain(scope: Scope, value: str, block: str) -> Any:
    asked.append("chain")
    if value == "bad":
        raise AssertionError("parsed before")
    return {"from": scope.backend.name, "call_states": scope.ctx.call_states is not None,  # type: ignore[attr-defined]
            "value": value, "block": block}


def _text(value: Any) -> str:
    if not isinstance(value, str) or value == "unparsable":
        raise InvalidParams("not a string")
    return value


def _pool(chain: Any, params: list[Any], style: AnswerStyle) -> Any:
    asked.append("pool")
    return f"pool of {type(chain).__name__}" if params[0] == "pooled" else NOT_PENDING


def _history(history: Any, params: list[Any], local: Local) -> Any:
    asked.append("history")
    _text(params[0])
    return "forked node" if params[0] == "old" else NOT_HISTORY


ROW = Method("test_read", _chain, (Param("value", _text), opt("block", _text, "latest")),
             pool=_pool, served_pool=True, history=_history, pending=1)
PLAIN = Method("test_plain", _chain, ROW.params)


class Pool:
    """A served chain's pool (its type's name is in the pool read's answer)."""


@pytest.fixture(autouse=True)
def _forget() -> None:
    asked.clear()


def _ctx(dev: Dev | None = None, pool: Pool | None = None) -> Context:
    return Context(dev=dev, txpool=pool, call_states=CallStates())  # type: ignore[arg-type]


def test_a_plain_network_answers_from_the_chain() -> None:
    found = answer(ROW, Chain("chain"), ["pooled"], _ctx())  # type: ignore[arg-type]
    assert found["from"] == "chain" and asked == ["chain"]


def test_the_dev_pool_answers_first() -> None:
    assert answer(ROW, Chain("chain"), ["pooled"], _ctx(Dev("history"))) == "pool of Dev"  # type: ignore[arg-type]
    assert asked == ["pool"]


def test_then_the_fork_history_then_the_chain() -> None:
    ctx = _ctx(Dev(history="node"))
    assert answer(ROW, Chain("chain"), ["old"], ctx) == "forked node"  # type: ignore[arg-type]
    assert asked == ["pool", "history"]
    asked.clear()
    assert answer(ROW, Chain("chain"), ["new"], ctx)["from"] == "chain"  # type: ignore[arg-type]
    assert asked == ["pool", "history", "chain"]


def test_a_parameter_the_history_cannot_read_is_the_chains_to_refuse() -> None:
    with pytest.raises(InvalidParams) as caught:
        answer(ROW, Chain("chain"), ["unparsable"], _ctx(Dev(history="node")))  # type: ignore[arg-type]
    assert caught.value.message == "invalid argument 0: not a string"
    assert asked == ["pool", "history"]


def test_an_unforked_dev_chain_asks_no_history() -> None:
    assert answer(ROW, Chain("chain"), ["old"], _ctx(Dev()))["from"] == "chain"  # type: ignore[arg-type]
    assert asked == ["pool", "chain"]


def test_pending_reads_the_dev_chains_pending_state_without_call_states() -> None:
    found = answer(ROW, Chain("chain"), ["new", "pending"], _ctx(Dev()))  # type: ignore[arg-type]
    assert found == {"from": "pending state", "call_states": False, "value": "new",
                     "block": "pending"}
    latest = answer(ROW, Chain("chain"), ["new", "latest"], _ctx(Dev()))  # type: ignore[arg-type]
    assert latest["from"] == "chain" and latest["call_states"]
    plain = answer(ROW, Chain("chain"), ["new", "pending"], _ctx())  # type: ignore[arg-type]
    assert plain["from"] == "chain"  # (no dev chain: the chain reads its own "pending")


def test_a_served_pool_answers_only_where_there_is_no_dev_chain() -> None:
    assert answer(ROW, Chain("chain"), ["pooled"], _ctx(pool=Pool())) == "pool of Pool"  # type: ignore[arg-type]
    asked.clear()
    assert answer(ROW, Chain("chain"), ["pooled"], _ctx(Dev(), Pool())) == "pool of Dev"  # type: ignore[arg-type]
    asked.clear()
    assert answer(PLAIN, Chain("chain"), ["pooled"], _ctx(pool=Pool()))["from"] == "chain"  # type: ignore[arg-type]
    assert asked == ["chain"]


def test_what_a_pool_or_a_pending_state_answers_is_not_cached() -> None:
    dev, pool = _ctx(Dev()), _ctx(pool=Pool())
    assert cacheable(PLAIN, dev) and cacheable(PLAIN, pool) and cacheable(ROW, _ctx())
    assert not cacheable(ROW, dev) and not cacheable(ROW, pool)
    pending_only = Method("test_pending", _chain, ROW.params, pending=1)
    assert cacheable(pending_only, dev, ["x", "latest"]) and cacheable(pending_only, pool, ["x"])
    assert not cacheable(pending_only, dev, ["x", "pending"])
    assert not cacheable(pending_only, dev)  # (any parameters: perhaps "pending")
    assert not cacheable(Method("test_never", _chain, cacheable=False), _ctx())


def test_a_kept_trace_is_answered_from_the_trace_cache() -> None:
    computed: list[int] = []

    def trace(scope: Scope, tx_hash: str) -> Any:
        computed.append(1)
        return {"trace": tx_hash}

    row = Method("test_trace", trace, (Param("hash", _text),), keeps_traces=True)
    cache = TraceCache()
    ctx = Context(traces=cache)
    params = ["0x" + "ab" * 32]
    first = answer(row, Chain("chain"), params, ctx)  # type: ignore[arg-type]
    second = answer(row, Chain("chain"), params, ctx)  # type: ignore[arg-type]
    expected = b'{"trace":"0x' + b"ab" * 32 + b'"}'
    assert orjson.dumps(first) == orjson.dumps(second) == expected
    assert computed == [1] and len(cache) == 1
    key: TraceKey | None = cache.key(Chain("chain"), "test_trace", params)
    assert key is not None and key[1] == b"\x07" * 32
