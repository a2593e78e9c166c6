"""eth_estimateGas and eth_createAccessList on the rpc-compat chain, with contracts written into
accounts by state overrides."""

from __future__ import annotations

import pytest

import ethread
from ethread import methods
from ethread.errors import ExecutionFailed, ExecutionReverted
from ethread.methods.estimate import ERROR_RATIO
from ethread.models import AccessListEntry, AccountOverride, BlockOverrides, CallRequest

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


def test_access_list_of_a_contract_that_reads(rpc_compat_memory: ethread.MemoryBackend) -> None:
    # SLOAD(7); BALANCE(OTHER); BALANCE(SENDER); STOP: the sender is left out, OTHER is in.
    code = bytes.fromhex("600754" + "73" + OTHER.hex() + "31" + "73" + SENDER.hex() + "31" + "00")
    overrides = (AccountOverride(address=CALLER, code=code), AccountOverride(address=SENDER, balance=10**24))
    result = methods.create_access_list(rpc_compat_memory, CallRequest(sender=SENDER, to=CALLER), "latest",
                                        lambda: 1, state_override=tuple(sorted(overrides, key=lambda o: o.address)))
    assert result.error is None
    assert result.access_list == (
        AccessListEntry(address=CALLER, storage_keys=((7).to_bytes(32, "big"),)),
        AccessListEntry(address=OTHER, storage_keys=()),
    )
    # The gas with that list: 21,000 + 2,400 + 1,900 (list) + 3 PUSH + 100 warm SLOAD
    # + 3 + 100 warm BALANCE + 3 + 100 warm BALANCE (the sender is warm anyway).
    assert result.gas_used == 21_000 + 2_400 * 2 + 1_900 + 3 + 100 + 3 + 100 + 3 + 100


def test_an_access_list_is_made_on_a_block_before_berlin() -> None:
    """Before Berlin a message carries no access-list transaction kind, yet
    eth_createAccessList traces one: it runs as a legacy message whose list is charged its
    intrinsic gas (2,400 an address, 1,900 a key, as geth charges any message's list), never an
    internal error."""
    from ethread.devchain import DevChain
    from ethread.devchain.builder import ForkSchedule
    from ethread.devchain.contracts import assemble
    from ethread.methods.message import execution

    for fork, listed in (("istanbul", True), ("berlin", False)):
        backend = ethread.MemoryBackend()
        chain = DevChain(backend, forks=ForkSchedule.from_genesis(fork), accounts=1)
        reader = chain.deploy_runtime(chain.accounts[0], assemble(  # reads another's balance
            b"\x42" * 20, "BALANCE", 0, "MSTORE", 32, 0, "RETURN"))
        chain.mine()
        request = CallRequest(sender=chain.accounts[0].address, to=reader)
        made = methods.create_access_list(backend, request, "latest", lambda: 0)
        assert made.error is None
        assert [entry.address for entry in made.access_list] == [b"\x42" * 20]
        with execution(backend, request, "latest") as run:
            plain = run.run(1_000_000).gas_used
        if listed:  # the list costs its intrinsic gas and warms nothing
            assert made.gas_used == plain + 2_400
        else:  # from Berlin the listed address is warm: 2,400 up front, 2,500 less to read it
            assert made.gas_used == plain + 2_400 - 2_500
