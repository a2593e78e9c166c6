"""A key's method rules: names, namespaces (``debug_*``, ``trace_*``) and denials (``!``),
from the TOML configuration and from the key store; a refused call is answered 403 naming the
rule, and nothing is charged for the request."""

from __future__ import annotations

from pathlib import Path

import pytest

from ethread.codec.envelope import Call
from ethread.server.billing.credits import Billing, cost_of
from ethread.server.billing.ledger_sqlite import SQLiteLedger
from ethread.server.config import ConfigError, KeyConfig, ServiceLimits, config_from_document
from ethread.server.execution import Execution
from ethread.server.keys.auth import ApiKey
from ethread.server.keys.keystore import KeyStoreError, make_record
from ethread.server.method_rules import rules_of
from ethread.server.service import Service


@pytest.mark.parametrize(("rules", "method", "refused"), [
    ((), "debug_traceTransaction", None),
    (("!debug_*", "!trace_*"), "debug_traceTransaction", "denied by '!debug_*'"),
    (("!debug_*", "!trace_*"), "trace_filter", "denied by '!trace_*'"),
    (("!debug_*", "!trace_*"), "eth_call", None),
    (("!debug_*", "!trace_*"), "debug_getRawBlock", "denied by '!debug_*'"),
    (("eth_*", "trace_transaction"), "trace_transaction", None),
    (("eth_*", "trace_transaction"), "trace_block", "not among its allowed methods"),
    (("eth_*", "!eth_sendRawTransaction"), "eth_sendRawTransaction", "denied"),
    (("eth_*", "!eth_sendRawTransaction"), "eth_getLogs", None),
    (("*", "!trace_filter"), "trace_block", None),
    (("*", "!trace_filter"), "trace_filter", "denied by '!trace_filter'"),
    (("eth_call",), "eth_callMany", "not among"),
])
def test_rules(rules: tuple[str, ...], method: str, refused: str | None) -> None:
    reason = rules_of(frozenset(rules)).refusal(method)
    if refused is None:
        assert reason is None
    else:
        assert reason is not None and refused in reason and repr(method) in reason


def _service() -> tuple[Service, SQLiteLedger]:
    ledger = SQLiteLedger(":memory:")
    service = Service.__new__(Service)  # admission needs the billing and the work in flight
    service.billing = Billing(ledger)
    service.execution = Execution(threads=1, slow_threads=1)
    service.limits = ServiceLimits()
    return service, ledger


def test_refused_before_any_charge() -> None:
    service, ledger = _service()
    key = ApiKey.from_config(KeyConfig(key="no-tracing-0123456789", methods=("!debug_*", "!trace_*")))
    refused = service.admit(key, [Call("eth_blockNumber", [], 1), Call("trace_block", ["0x1"], 2)])
    assert refused is not None and refused.status == 403
    assert "may not call 'trace_block' (denied by '!trace_*')" in refused.error.message
    assert ledger.used(key.key_id) == 0
    assert service.admit(key, [Call("eth_getBalance", [], 1)]) is None
    assert ledger.used(key.key_id) == cost_of("eth_getBalance")


def test_trace_priced_beside_debug() -> None:
    assert cost_of("trace_transaction") == cost_of("debug_traceTransaction") == 300
    assert cost_of("trace_replayTransaction") == cost_of("trace_call") == cost_of("trace_get") == 300
    assert cost_of("trace_block") == cost_of("trace_replayBlockTransactions") == \
        cost_of("debug_traceBlockByNumber") == 1000
    assert cost_of("trace_filter") == 10_000


def test_configuration_file(tmp_path: Path) -> None:
    config = config_from_document({"keys": [
        {"key": "indexer-key-0123456789", "methods": ["eth_*", "trace_*"]},
        {"key": "public-key-0123456789", "methods": ["!debug_*", "!trace_*"]},
    ]}, tmp_path)
    assert [k.methods for k in config.keys] == [("eth_*", "trace_*"), ("!debug_*", "!trace_*")]
    indexer = ApiKey.from_config(config.keys[0])
    assert indexer.methods is not None and rules_of(indexer.methods).refusal("debug_traceCall")
    for bad in (["debug traceCall"], "eth_*", ["**"], ["eth_*x"], [3]):
        with pytest.raises(ConfigError, match="methods"):
            config_from_document({"keys": [{"key": "k-0123456789", "methods": bad}]}, tmp_path)


def test_key_store_records() -> None:
    _, record = make_record(methods=["!debug_*", "!trace_*", "eth_call"])
    assert record.methods == ("!debug_*", "!trace_*", "eth_call")
    key = ApiKey.from_record(record)
    assert key.methods is not None and rules_of(key.methods).refusal("trace_get")
    for bad in (["trace_**"], ["!"], ["a b"]):
        with pytest.raises(KeyStoreError, match=r"ending in \* \(a namespace\)"):
            make_record(methods=bad)
