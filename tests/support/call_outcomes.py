"""What one message run comes to, as a comparable tuple, and the probe chain and messages the
tests run two ways (the direct path against the transaction envelope, ethread's lean VM
classes against py-evm's).

The probe contract reads what the transaction envelope changes before the code runs: the
sender's balance after buying gas, the gas price, the gas left after the intrinsic gas, the
value, and the address a CREATE gets (the contract's nonce); it writes and clears a slot (a
refund) and logs. Creations read their own address (the sender's nonce)."""

from __future__ import annotations

from typing import Any

from ethread.backends.memory import MemoryBackend
from ethread.devchain import DevChain
from ethread.devchain.contracts import assemble
from ethread.devchain.genesis import ForkSchedule
from ethread.forks import fork_at_least
from ethread.methods.message import Rejected
from ethread.models import AccessListEntry, CallRequest


def outcome_of(run: Any, gas: int, as_transaction: bool) -> tuple[Any, ...]:
    """(output, gas used, peak gas, error class, error text) of ``run`` with ``gas``, or the
    refusal (message, intrinsic gas) when the message is rejected before it runs."""
    try:
        outcome = run.run(gas, as_transaction=as_transaction)
    except Rejected as exc:
        return ("rejected", exc.message, exc.intrinsic)
    error = outcome.error
    return (outcome.output.hex(), outcome.gas_used, outcome.peak_gas_used,
            type(error).__name__, str(error) if error is not None else None)


FORKS = ("frontier", "homestead", "tangerine_whistle", "spurious_dragon", "byzantium",
         "istanbul", "berlin", "london", "paris", "shanghai", "cancun", "prague")

CHILD = bytes.fromhex("60006000f3")  # PUSH1 0 PUSH1 0 RETURN: an empty contract

PROBE = assemble(
    0, "CALLDATALOAD", 0, "BYTE", 0xFF, "EQ", "@fail", "JUMPI",  # BYTE: SHR is Constantinople
    "CALLER", "BALANCE", 0, "MSTORE",
    "GASPRICE", 32, "MSTORE",
    "GAS", 64, "MSTORE",
    "CALLVALUE", 96, "MSTORE",
    "ORIGIN", "BALANCE", 128, "MSTORE",
    1, 0, "SSTORE", 0, 0, "SSTORE",                 # a slot set and cleared: a refund
    CHILD, 0xD8, "SHL", 256, "MSTORE",              # the child's initcode at memory[256:261]
    len(CHILD), 256, 0, "CREATE", 160, "MSTORE",    # its address: this contract's nonce
    "CALLER", 160, 32, "LOG1",
    192, 0, "RETURN",
    "fail:",
    4, 0, "REVERT",                                 # an invalid opcode before Byzantium
)

SELF_AWARE_INIT = assemble("ADDRESS", 0, "MSTORE", "CALLER", "BALANCE", 32, "MSTORE", 64, 0,
                           "RETURN")
"""Creation code returning its own address (the sender's nonce) and the sender's balance as
the new contract's code."""


def probe_chain(fork: str) -> tuple[MemoryBackend, DevChain, bytes]:
    """A chain of ``fork`` holding the probe contract (its address last)."""
    backend = MemoryBackend()
    chain = DevChain(backend, forks=ForkSchedule.from_genesis(fork), accounts=2)
    probe = chain.deploy_runtime(chain.accounts[0], PROBE)
    chain.mine()
    return backend, chain, probe


def probe_requests(fork: str, chain: DevChain, probe: bytes) -> list[CallRequest]:
    """Messages to the probe and creations, each kind of refusal, and the transaction kinds of
    ``fork``."""
    funded = chain.accounts[1].address
    price = 10**9 * 50
    requests = [
        CallRequest(to=probe, data=b"\x01"),
        CallRequest(to=probe, data=b"\x01", sender=funded, gas_price=price, value=12345),
        CallRequest(to=probe, data=b"\x01" + b"\x00" * 40 + b"\x07" * 40, sender=funded,
                    gas=200_000, gas_price=price),
        CallRequest(to=probe, data=b"\xff"),                      # REVERT
        CallRequest(to=probe, data=b"\x01", gas=30_000),          # out of gas
        CallRequest(to=probe, data=b"\x01", gas=21_000),          # intrinsic gas too low
        CallRequest(to=probe, data=b"\x01", sender=b"\x42" * 20, gas_price=1),  # no funds
        CallRequest(to=b"\x99" * 20, value=1, sender=funded),     # a plain transfer
        CallRequest(to=b"\x99" * 20, data=b"\x07" * 1000),        # Prague: the calldata floor
        CallRequest(data=SELF_AWARE_INIT, sender=funded, gas_price=price),  # a creation
        CallRequest(data=SELF_AWARE_INIT),
    ]
    if fork_at_least(fork, "berlin"):
        requests.append(CallRequest(
            to=probe, data=b"\x01", sender=funded, gas_price=price,
            access_list=(AccessListEntry(address=probe, storage_keys=(b"\x00" * 32, b"\x00" * 31 + b"\x01")),
                         AccessListEntry(address=b"\x99" * 20, storage_keys=()))))
    if fork_at_least(fork, "london"):
        requests.append(CallRequest(to=probe, data=b"\x01", sender=funded,
                                    max_fee_per_gas=price, max_priority_fee_per_gas=10**9))
        requests.append(CallRequest(to=probe, data=b"\x01", sender=funded,
                                    max_fee_per_gas=10**6, max_priority_fee_per_gas=0))
    return requests
