"""The method table: built once from the namespaces' rows, read-only, each name once; the
prices and the slow methods the server reads are the rows'; the docs' method list is the one
the table writes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ethread.rpc import anvil, debug, dev, eth, node, signing, trace, txpool
from ethread.rpc.docs import methods_markdown
from ethread.rpc.row import Method, Where
from ethread.rpc.table import TABLE, _table
from ethread.server.billing.credits import CREDITS, DEFAULT_COST, cost_of
from ethread.server.execution import SLOW_METHODS
from tests.support.paths import REPO

NAMESPACES = (eth, node, debug, trace, txpool, dev, anvil, signing)


def test_every_row_of_every_namespace_is_in_the_table_once() -> None:
    rows = [row for namespace in NAMESPACES for row in namespace.ROWS]
    assert len(rows) == len(TABLE) and all(TABLE[row.name] is row for row in rows)


def test_a_name_declared_twice_is_refused() -> None:
    row = Method("eth_chainId", lambda scope: None)
    with pytest.raises(ValueError, match="declared twice: \\['eth_chainId'\\]"):
        _table(eth.ROWS, (row,))


def test_the_table_is_not_changed_after_it_is_built() -> None:
    with pytest.raises(TypeError):
        TABLE["eth_chainId"] = TABLE["eth_blockNumber"]  # type: ignore[index]


def test_each_namespace_holds_its_own_methods() -> None:
    assert all(row.name.startswith("eth_") for row in eth.ROWS)
    assert all(row.name.startswith(("net_", "web3_")) for row in node.ROWS)
    assert all(row.name.startswith("debug_") for row in debug.ROWS)
    assert all(row.name.startswith("trace_") for row in trace.ROWS)
    assert all(row.where is Where.DEV_CHAIN for row in (*dev.ROWS, *anvil.ROWS, *signing.ROWS))
    assert all(row.where is Where.TAKES_TRANSACTIONS for row in txpool.ROWS)


def test_prices_are_the_rows() -> None:
    assert {name: row.price for name, row in TABLE.items()} == CREDITS
    assert cost_of("eth_getLogs") == 255 and cost_of("trace_filter") == 10_000
    assert cost_of("eth_chainId") == cost_of("no_suchMethod") == DEFAULT_COST == 1


def test_slow_methods_are_the_rows() -> None:
    assert {name for name, row in TABLE.items() if row.slow} == SLOW_METHODS
    assert {"eth_call", "eth_getLogs", "debug_traceTransaction", "trace_filter",
            "testing_buildBlockV1"} <= SLOW_METHODS
    assert "eth_chainId" not in SLOW_METHODS


def test_the_docs_method_list_is_the_tables() -> None:
    written = (REPO / "docs" / "methods.md").read_text()
    assert written == methods_markdown(), (
        "docs/methods.md is stale: python -m ethread.rpc.docs > docs/methods.md")
    assert written.count("\n| `") == len(TABLE)


def test_the_docs_are_written_by_the_module() -> None:
    done = subprocess.run([sys.executable, "-m", "ethread.rpc.docs"], capture_output=True,
                          text=True, timeout=120, check=True)
    assert done.stdout == methods_markdown()
