"""Traces compared with anvil's, field by field: the same dev chain (Prague) in ethread and in
anvil (the same signed transactions, block by block, as tests/differential/test_anvil.py
feeds it), then debug_traceTransaction of every transaction with callTracer (with and
without logs), prestateTracer (with and without diffMode) and the opcode logger.

The transactions: a router contract that logs, calls a storage contract, delegate-calls it,
calls the sha256 and identity precompiles, calls a contract that reverts with a reason (and
goes on), creates contracts with CREATE and CREATE2 (one of which self-destructs in its
constructor), reverts with a custom error, and reverts after a successful inner call; a plain
self-destruct; a plain transfer.

anvil runs with ``--steps-tracing``: it records each transaction's steps when it mines it and
answers the opcode logger from that record; without the flag it records none and answers
every transaction with an empty step list (whatever the request's options).

Where anvil answers otherwise than geth, ethread follows geth (its sources are named) and the
difference is listed in KNOWN_DIFFERENCES, which the test requires exactly.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.router import CONFIGS, Traced
from tests.support.rpc_cases import answer_of, first_difference

pytestmark = pytest.mark.anvil

KNOWN_DIFFERENCES: dict[tuple[str, int], str] = {
    # the router's CREATE: geth reports the step's cost before the opcode runs (core/vm/
    # interpreter.go, OnOpcode), and opCreate takes the gas it hands the new contract while it
    # runs (instructions.go), so the cost is 32,000 and the memory's; anvil counts that gas too
    (name, 5): "$.structLogs[21].gasCost: got 32002 want 964111"
    for name in ("structLogs", "structLogs-memory")
} | {
    # the router's call that logs and then reverts: geth drops a reverted frame's logs
    # (call.go, clearFailedLogs); anvil keeps them
    ("callTracer-withLog", 7): "$.logs: missing",
}
"""(config, transaction index) -> the first difference left after :func:`_as_geth`."""


def _as_geth(name: str, mine: Any, theirs: Any) -> tuple[Any, Any]:
    """Both answers with the differences where anvil departs from geth 1.17 taken out:

    - prestateTracer: geth writes each account's ``codeHash`` (``eth/tracers/native/
      prestate.go``, ``account.CodeHash``); anvil writes none. geth drops accounts that were
      empty before the transaction unless ``includeEmpty`` (``OnTxEnd``); anvil keeps them
      (a precompile called, a contract about to be created).
    - the opcode logger: geth's ``gas`` is the transaction's receipt gas (``logger.go``,
      ``OnTxEnd``: ``receipt.GasUsed``); anvil answers the block's cumulative gas. geth leaves
      out a step's zero ``refund``, its empty ``memory`` and empty ``returnData``
      (``toLegacyJSON``, ``omitempty``); anvil writes them.
    - callTracer: geth's top frame has the transaction's gas limit as ``gas`` (``call.go``,
      ``OnTxStart``) and its receipt's gas as ``gasUsed`` (``OnTxEnd``); anvil gives the gas
      left after the intrinsic gas, and the block's cumulative gas.
    """
    if name.startswith("prestateTracer"):
        def clean(accounts: dict[str, Any], drop_empty: bool) -> dict[str, Any]:
            out = {}
            for address, account in accounts.items():
                account = {k: v for k, v in account.items() if k != "codeHash"}
                empty = (account.get("balance", "0x0") == "0x0" and not account.get("nonce")
                         and not account.get("code") and not account.get("storage"))
                if drop_empty and empty:
                    continue
                out[address] = account
            return out
        if "pre" in mine and "post" in mine:
            return ({"pre": clean(mine["pre"], False), "post": clean(mine["post"], False)},
                    {"pre": clean(theirs["pre"], True), "post": clean(theirs["post"], False)})
        return clean(mine, False), clean(theirs, True)
    if name.startswith("structLogs"):
        mine = {k: v for k, v in mine.items() if k != "gas"}
        theirs = {k: v for k, v in theirs.items() if k != "gas"}
        theirs["structLogs"] = [{k: v for k, v in step.items()
                                 if (k, v) not in (("refund", 0), ("memory", []), ("returnData", "0x"))}
                                for step in theirs["structLogs"]]
    if name.startswith("callTracer"):  # geth: the transaction's gas limit (call.go, OnTxStart)
        mine = {**mine, "gas": None, "gasUsed": None}
        theirs = {**theirs, "gas": None, "gasUsed": None}
    return mine, theirs


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_traces_agree_with_anvil(traced: Traced, name: str) -> None:
    config = CONFIGS[name]
    differences = {}
    for index, tx_hash in enumerate(traced.hashes):
        mine = answer_of(traced.backend, "debug_traceTransaction", tx_hash, config)
        theirs = traced.peer.raw("debug_traceTransaction", tx_hash, config)
        assert "error" not in mine, (name, index, mine)
        if "error" in theirs:
            differences[index] = f"anvil: {theirs['error']}"
            continue
        diff = first_difference(*_as_geth(name, mine["result"], theirs["result"]))
        if diff is not None:
            differences[index] = diff
    expected = {index: why for (config_name, index), why in KNOWN_DIFFERENCES.items()
                if config_name == name}
    assert differences == expected, json.dumps(differences, indent=1)
