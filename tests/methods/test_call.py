"""eth_call (``ethread.methods.call``) on the rpc-compat chain: reverts carry their reason and
data, an old block sees old state, the gas is capped, revert reasons decode. And what a
differential run against another implementation found in eth_call, one test each, with
geth's answer as the expected one (texts from geth's core/state_transition.go, core/error.go
and internal/ethapi/transaction_args.go; eth_call wraps a refusal as
``err: <reason> (supplied gas N)``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from eth_utils import to_checksum_address

import ethread
from ethread import MemoryBackend, methods
from ethread.codec.params import parse_call_request
from ethread.devchain import DevChain
from ethread.devchain.genesis import ForkSchedule
from ethread.errors import EthreadError, ExecutionReverted
from ethread.models import AccountOverride, CallRequest

CHAIN_ID = 3503995874084926
SENDER = bytes.fromhex("2222222222222222222222222222222222222222")
TARGET = bytes.fromhex("3333333333333333333333333333333333333333")
RETURN_42 = bytes.fromhex("602a60005260206000f3")  # MSTORE(0, 42); RETURN(0, 32)


def _error(backend: ethread.MemoryBackend, call: dict[str, Any], block: str = "latest",
           *extra: Any) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "eth_call", "params": [call, block, *extra]}
    answer = json.loads(ethread.handle(backend, json.dumps(body).encode()))  # type: ignore[arg-type]
    assert "error" in answer, answer
    return answer["error"]  # type: ignore[no-any-return]


def test_gas_below_the_intrinsic_gas(rpc_compat_memory: ethread.MemoryBackend) -> None:
    # 35 zero bytes of calldata cost 4 gas each: 21,000 + 140.
    error = _error(rpc_compat_memory, {"to": "0x" + TARGET.hex(), "gas": hex(21_000), "input": "0x" + "00" * 35})
    assert error == {"code": -32000,
                     "message": "err: intrinsic gas too low: have 21000, want 21140 (supplied gas 21000)"}


def test_blob_transaction_without_to(rpc_compat_memory: ethread.MemoryBackend) -> None:
    error = _error(rpc_compat_memory, {"blobVersionedHashes": ["0x01" + "00" * 31], "gas": "0x10000"})
    assert error == {"code": -32000, "message": "err: blob transaction of type create (supplied gas 65536)"}


def test_input_wins_over_data(rpc_compat_memory: ethread.MemoryBackend) -> None:
    """Both given and different: geth runs ``input``. The target echoes its calldata size."""
    size = bytes.fromhex("3660005260206000f3")  # MSTORE(0, CALLDATASIZE); RETURN(0, 32)
    override = (AccountOverride(address=TARGET, code=size),)
    parsed = parse_call_request(
        {"to": "0x" + TARGET.hex(), "data": "0x01", "input": "0x010203"})
    output = methods.call(rpc_compat_memory, parsed, "latest", state_override=override)
    assert int.from_bytes(output, "big") == 3


def test_tip_above_the_fee_cap(rpc_compat_memory: ethread.MemoryBackend) -> None:
    sender = to_checksum_address(SENDER)
    error = _error(rpc_compat_memory, {"from": "0x" + SENDER.hex(), "to": "0x" + TARGET.hex(), "gas": "0x5208",
                                       "maxFeePerGas": "0x1", "maxPriorityFeePerGas": "0x2"})
    assert error == {"code": -32000, "message": "err: max priority fee per gas higher than max fee per gas: "
                     f"address {sender}, maxPriorityFeePerGas: 2, maxFeePerGas: 1 (supplied gas 21000)"}
    # A tip alone: the fee cap defaults to zero, below the tip, and geth answers the same.
    error = _error(rpc_compat_memory, {"from": "0x" + SENDER.hex(), "to": "0x" + TARGET.hex(), "gas": "0x5208",
                                       "maxPriorityFeePerGas": "0x2"})
    assert error["message"] == ("err: max priority fee per gas higher than max fee per gas: "
                                f"address {sender}, maxPriorityFeePerGas: 2, maxFeePerGas: 0 (supplied gas 21000)")


def test_fee_cap_below_the_base_fee_and_insufficient_funds(rpc_compat_memory: ethread.MemoryBackend) -> None:
    sender = to_checksum_address(SENDER)
    call = {"from": "0x" + SENDER.hex(), "to": "0x" + TARGET.hex(), "gas": "0x5208"}
    error = _error(rpc_compat_memory, {**call, "maxFeePerGas": "0x5", "maxPriorityFeePerGas": "0x1"})
    assert error == {"code": -32000, "message": "err: max fee per gas less than block base fee: "
                     f"address {sender}, maxFeePerGas: 5, baseFee: 91635044 (supplied gas 21000)"}
    error = _error(rpc_compat_memory, {**call, "gasPrice": hex(10**9), "value": "0x7"})
    want = 21_000 * 10**9 + 7
    assert error == {"code": -32000, "message": "err: insufficient funds for gas * price + value: "
                     f"address {sender} have 0 want {want} (supplied gas 21000)"}
    # A funded sender passes the same call.
    funded = {"0x" + SENDER.hex(): {"balance": hex(want)}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "eth_call",
            "params": [{**call, "gasPrice": hex(10**9), "value": "0x7"}, "latest", funded]}
    answer = json.loads(ethread.handle(rpc_compat_memory, json.dumps(body).encode()))  # type: ignore[arg-type]
    assert answer["result"] == "0x"


def test_chain_id_must_be_the_chains(rpc_compat_memory: ethread.MemoryBackend) -> None:
    error = _error(rpc_compat_memory, {"to": "0x" + TARGET.hex(), "chainId": "0x1"})
    assert error == {"code": -32000, "message": f"chainId does not match node's (have=1, want={CHAIN_ID})"}
    assert methods.call(rpc_compat_memory, CallRequest(to=TARGET, chain_id=CHAIN_ID), "latest") == b""


def test_initcode_over_the_shanghai_limit(rpc_compat_memory: ethread.MemoryBackend) -> None:
    initcode = "0x" + "00" * 49_153
    error = _error(rpc_compat_memory, {"input": initcode})
    assert error == {"code": -32000, "message": "err: max initcode size exceeded: code size 49153 limit 49152 "
                     "(supplied gas 50000000)"}
    # Block 38 is before Shanghai (timestamp 390): no limit, the zeros run as STOPs.
    assert methods.call(rpc_compat_memory, CallRequest(data=b"\x00" * 49_153), 38) == b""
    # At the limit the creation runs.
    assert methods.call(rpc_compat_memory, CallRequest(data=b"\x00" * 49_152), "latest") == b""


def test_refusals_name_the_zero_address_when_from_is_missing(rpc_compat_memory: ethread.MemoryBackend) -> None:
    with pytest.raises(EthreadError, match="address 0x0000000000000000000000000000000000000000, "):
        methods.call(rpc_compat_memory, CallRequest(to=TARGET, max_fee_per_gas=1, max_priority_fee_per_gas=2),
                     "latest")


def test_call_reverts_carry_reason_and_data(rpc_compat_memory: ethread.MemoryBackend) -> None:
    target = bytes.fromhex("0ee3ab1371c93e7c0c281cc0c2107cdebc8b1930")
    with pytest.raises(ExecutionReverted) as reverted:
        methods.call(rpc_compat_memory, CallRequest(to=target, data=b"\x01", gas=100_000), "latest")
    assert reverted.value.code == 3
    assert reverted.value.message == "execution reverted: user error"
    assert isinstance(reverted.value.data, str) and reverted.value.data.startswith("0x08c379a0")


def test_call_at_an_old_block_sees_old_state(rpc_compat_memory: ethread.MemoryBackend) -> None:
    callenv = bytes.fromhex("9344b07175800259691961298ca11c824e65032d")
    for number in (27, 33, 45):  # BASEFEE, which the contract reads, exists from London on
        output = methods.call(rpc_compat_memory, CallRequest(to=callenv), number)
        assert int.from_bytes(output[:32], "big") == number  # NUMBER is the block's own
    # Before Istanbul the contract's CHAINID is not an opcode yet: the call fails as geth's does.
    with pytest.raises(ethread.EthreadError, match="invalid opcode: CHAINID"):
        methods.call(rpc_compat_memory, CallRequest(to=callenv), 10)


def test_call_gas_is_capped(rpc_compat_memory: ethread.MemoryBackend) -> None:
    callenv = bytes.fromhex("9344b07175800259691961298ca11c824e65032d")
    # Far above the cap: still runs, with the cap (10x the block gas limit) as its gas.
    output = methods.call(rpc_compat_memory, CallRequest(to=callenv, gas=2**63), "latest")
    assert len(output) > 0


def test_revert_reason_decoding() -> None:
    from ethread.methods.call import decode_revert_reason

    assert decode_revert_reason(bytes.fromhex("4e487b71") + (0x11).to_bytes(32, "big")) == \
        "arithmetic underflow or overflow"
    assert decode_revert_reason(bytes.fromhex("4e487b71") + (0x99).to_bytes(32, "big")) == "unknown panic code: 0x99"
    assert decode_revert_reason(b"\x12\x34") is None
    assert decode_revert_reason(bytes.fromhex("08c379a0") + (32).to_bytes(32, "big") + (500).to_bytes(32, "big")) \
        is None


@pytest.mark.parametrize(("fork", "refused"), [("prague", False), ("osaka", True)])
def test_eth_call_refuses_more_than_six_blobs_from_osaka_on(fork: str, refused: bool) -> None:
    """EIP-7594: geth's pre-check refuses a message with seven blob hashes on Osaka (eth_call
    included: it is not one of the checks a call skips); Prague takes them."""
    import ethread
    from ethread.errors import ExecutionFailed

    chain = DevChain(MemoryBackend(), forks=ForkSchedule.from_genesis(fork))
    target = chain.accounts[1].address
    hashes = tuple(b"\x01" + bytes([i]) * 31 for i in range(7))
    request = CallRequest(to=target, blob_versioned_hashes=hashes)
    if refused:
        with pytest.raises(ExecutionFailed, match="blob transaction has too many blobs"):
            ethread.methods.call(chain.backend, request, "latest")
    else:
        assert ethread.methods.call(chain.backend, request, "latest") == b""
    six = CallRequest(to=target, blob_versioned_hashes=hashes[:6])
    assert ethread.methods.call(chain.backend, six, "latest") == b""


MODEXP_ZERO_POWER_INPUT = ((0).to_bytes(32, "big") + (1).to_bytes(32, "big")
                           + (1).to_bytes(32, "big") + b"\x00\x05")
"""MODEXP of an empty base (0), exponent 0, modulus 5."""


@pytest.mark.parametrize("fork", ["byzantium", "istanbul", "berlin", "cancun", "prague", "osaka"])
def test_eth_call_modexp_of_an_empty_base_to_the_power_zero_is_one(fork: str) -> None:
    """EIP-198: 0 ** 0 % 5 is 1 on every fork with the precompile (py-evm answers 0 for an
    empty base; an eth_call at an old block runs the fork table's corrected VM)."""
    chain = DevChain(MemoryBackend(), forks=ForkSchedule.from_genesis(fork))
    request = CallRequest(to=(5).to_bytes(20, "big"), data=MODEXP_ZERO_POWER_INPUT)
    assert methods.call(chain.backend, request, "latest") == b"\x01"
