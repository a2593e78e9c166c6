"""What a differential run against another implementation found in eth_call, one test each,
with geth's answer as the expected one (texts from geth's core/state_transition.go,
core/error.go and internal/ethapi/transaction_args.go; eth_call wraps a refusal as
``err: <reason> (supplied gas N)``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from eth_utils import to_checksum_address

import ethread
from ethread import methods
from ethread.codec.params import parse_call_request
from ethread.errors import EthreadError
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
