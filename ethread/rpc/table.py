"""The method table: every JSON-RPC method ethread answers, each a row declared once in its
namespace's module, gathered here once and never changed after.

===========================  =====================================================
namespace                    module
===========================  =====================================================
eth_*                        :mod:`ethread.rpc.eth`
net_*, web3_*                :mod:`ethread.rpc.node`
debug_*                      :mod:`ethread.rpc.debug`
trace_* (parity's)           :mod:`ethread.rpc.trace`
txpool_*, testing_*, eth_sendRawTransaction  :mod:`ethread.rpc.txpool`
evm_*, anvil_*, hardhat_*    :mod:`ethread.rpc.dev` (sending, mining, state), :mod:`ethread.rpc.anvil`
eth_sign*, personal_sign     :mod:`ethread.rpc.signing`
===========================  =====================================================
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import orjson

from ..backend import Backend
from ..errors import EthreadError
from . import anvil, debug, dev, eth, node, signing, trace, txpool
from .context import DEFAULT_CONTEXT, Context
from .row import Method, Where, check_arity, not_available
from .sources import answer


def _table(*namespaces: tuple[Method, ...]) -> Mapping[str, Method]:
    names = Counter(row.name for namespace in namespaces for row in namespace)
    twice = sorted(name for name, count in names.items() if count > 1)
    if twice:
        raise ValueError(f"methods declared twice: {twice}")
    return MappingProxyType({row.name: row for namespace in namespaces for row in namespace})


TABLE: Mapping[str, Method] = _table(eth.ROWS, node.ROWS, debug.ROWS, trace.ROWS, txpool.ROWS,
                                     dev.ROWS, anvil.ROWS, signing.ROWS)


def available(method: Method, ctx: Context) -> bool:
    """Whether ``method`` is offered on a network with this context."""
    where = method.where
    return where is Where.ANYWHERE or ctx.dev is not None or (
        where is Where.TAKES_TRANSACTIONS and ctx.txpool is not None)


def call_method(backend: Backend, method: str, params: list[Any],
                ctx: Context = DEFAULT_CONTEXT) -> bytes:
    """Run one method; its result as JSON bytes. Raises EthreadError (-32601: not offered here)."""
    row = TABLE.get(method)
    if row is None:
        raise not_available(method)
    return call_row(row, backend, params, ctx)


def call_row(row: Method, backend: Backend, params: list[Any], ctx: Context) -> bytes:
    """:func:`call_method` for a row already found."""
    if row.where is not Where.ANYWHERE and not available(row, ctx):
        raise not_available(row.name)
    check_arity(row, params)
    return orjson.dumps(answer(row, backend, params, ctx))


__all__ = ["TABLE", "Context", "EthreadError", "Method", "call_method", "call_row"]
