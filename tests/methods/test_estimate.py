"""eth_estimateGas (``ethread.methods.estimate``) on the rpc-compat chain, with contracts written
into accounts by state overrides: the 63/64 rule within the error ratio, the errors, both
overrides over JSON-RPC."""

from __future__ import annotations

import pytest

import ethread
from ethread import methods
from ethread.errors import ExecutionFailed, ExecutionReverted
from ethread.methods.estimate import ERROR_RATIO
from ethread.models import AccountOverride, BlockOverrides, CallRequest

CALLER = bytes.fromhex("00000000000000000000000000000000000ca11e")
CALLEE = bytes.fromhex("000000000000000000000000000000000000ca11")
SENDER = bytes.fromhex("2222222222222222222222222222222222222222")
OTHER = bytes.fromhex("1111111111111111111111111111111111111111")

# GAS; PUSH3 50000; GT; PUSH1 0x0a; JUMPI; STOP; 0x0a: JUMPDEST; REVERT(0, 0):
# reverts unless it has more than 50,000 gas when it starts.
GREEDY = bytes.fromhex("5a6200c35011600a57005b600080fd")
# CALL(GAS, CALLEE, 0, 0, 0, 0, 0) in bytes 0..32; PUSH1 0x28; JUMPI; REVERT(0, 0);
# 0x28: JUMPDEST; STOP: passes all it may (63/64 of its gas) and fails when the callee does.
FORWARDER = bytes.fromhex("60006000600060006000" + "73" + CALLEE.hex() + "5af1" + "602857" + "600080fd" + "5b00")
HUNGRY = bytes.fromhex("63ffffffff5100")  # MLOAD(0xffffffff): more memory than any gas limit pays


def test_estimate_meets_the_63_64_rule_within_the_error_ratio(rpc_compat_memory: ethread.MemoryBackend) -> None:
    assert FORWARDER[40] == 0x5B  # the JUMPDEST the forwarder jumps to
    overrides = (AccountOverride(address=CALLEE, code=GREEDY), AccountOverride(address=CALLER, code=FORWARDER))
    estimate = methods.estimate_gas(rpc_compat_memory, CallRequest(to=CALLER), "latest", state_override=overrides)
    # Enough gas: through the 63/64 rule the callee starts with more than 50,000.
    assert estimate > 21_000 + 50_000 * 64 // 63
    methods.call(rpc_compat_memory, CallRequest(to=CALLER, gas=estimate), "latest", state_override=overrides)
    # And at most 1.5% more than needed: that much less fails.
    with pytest.raises(ExecutionReverted):
        methods.call(rpc_compat_memory, CallRequest(to=CALLER, gas=int(estimate * (1 - ERROR_RATIO)) - 1),
                     "latest", state_override=overrides)


def test_estimate_errors(rpc_compat_memory: ethread.MemoryBackend) -> None:
    hungry = (AccountOverride(address=CALLER, code=HUNGRY),)
    with pytest.raises(ExecutionFailed, match=r"^gas required exceeds allowance \(75398208\)$"):
        methods.estimate_gas(rpc_compat_memory, CallRequest(to=CALLER), "latest", state_override=hungry)
    # The block's gas limit is the bound unless the caller names one.
    with pytest.raises(ExecutionFailed, match=r"^gas required exceeds allowance \(100000\)$"):
        methods.estimate_gas(rpc_compat_memory, CallRequest(to=CALLER, gas=100_000), "latest", state_override=hungry)
    with pytest.raises(ExecutionFailed, match=r"^gas required exceeds allowance \(40000\)$"):
        methods.estimate_gas(rpc_compat_memory, CallRequest(to=CALLER), "latest", state_override=hungry,
                             block_overrides=BlockOverrides(gas_limit=40_000))
    # A priced message is bounded by what the sender can pay, and may not send all it has.
    funded = (AccountOverride(address=SENDER, balance=10**6),)
    with pytest.raises(ExecutionFailed, match=r"^insufficient funds for transfer$"):
        methods.estimate_gas(rpc_compat_memory, CallRequest(sender=SENDER, to=OTHER, value=10**6, gas_price=10**9),
                             "latest", state_override=funded)
    poor = (AccountOverride(address=SENDER, balance=21_000 * 10**9 - 1),)
    with pytest.raises(ExecutionFailed, match=r"^gas required exceeds allowance \(20999\)$"):
        methods.estimate_gas(rpc_compat_memory, CallRequest(sender=SENDER, to=OTHER, gas_price=10**9),
                             "latest", state_override=poor)
    rich = (AccountOverride(address=SENDER, balance=21_000 * 10**9),)
    assert methods.estimate_gas(rpc_compat_memory, CallRequest(sender=SENDER, to=OTHER, gas_price=10**9),
                                "latest", state_override=rich) == 21_000


def test_estimate_over_json_rpc_takes_both_overrides(rpc_compat_memory: ethread.MemoryBackend) -> None:
    import json

    body = {"jsonrpc": "2.0", "id": 1, "method": "eth_estimateGas", "params": [
        {"to": "0x" + CALLER.hex()}, "latest", {"0x" + CALLER.hex(): {"code": "0x" + HUNGRY.hex()}},
        {"gasLimit": hex(30_000)}]}
    answer = json.loads(ethread.handle(rpc_compat_memory, json.dumps(body).encode()))  # type: ignore[arg-type]
    assert answer["error"] == {"code": -32000, "message": "gas required exceeds allowance (30000)"}
