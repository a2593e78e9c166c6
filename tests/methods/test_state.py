"""Account state as of a block (``ethread.methods.state``): balances, nonces, code and storage
agree with the verified proof, the block argument takes every form geth takes, absent
accounts read as zero, storage keys are read leniently as geth reads them."""

from __future__ import annotations

import pytest
from eth_utils import keccak

import ethread
from ethread import methods
from ethread.errors import HeaderNotFound
from tests.support.rpc_cases import error, result

EMITTER = bytes.fromhex("7dcd17433742f4c0ca53122ab541d0ba67fc27df")


NOBODY = bytes.fromhex("c1cadaffffffffffffffffffffffffffffffffff")


def test_state_methods_agree_with_the_verified_proof(rpc_compat_memory: ethread.MemoryBackend) -> None:
    for number in (5, 27, 45):
        proof = methods.get_proof(rpc_compat_memory, EMITTER, [b"\x00"], number)
        header = methods.get_block_by_number(rpc_compat_memory, number).header  # type: ignore[union-attr]
        ethread.verify_account_proof(header.state_root, proof)
        at = hex(number)
        assert result(rpc_compat_memory, "eth_getBalance", "0x" + EMITTER.hex(), at) == hex(proof.balance)
        assert result(rpc_compat_memory, "eth_getTransactionCount", "0x" + EMITTER.hex(), at) == \
            hex(proof.nonce)
        code = result(rpc_compat_memory, "eth_getCode", "0x" + EMITTER.hex(), at)
        assert keccak(bytes.fromhex(code[2:])) == proof.code_hash
        slot = result(rpc_compat_memory, "eth_getStorageAt", "0x" + EMITTER.hex(), "0x0", at)
        assert int(slot, 16) == proof.storage_proof[0].value and len(slot) == 66


def test_the_block_argument_is_optional_and_takes_every_form(rpc_compat_memory: ethread.MemoryBackend) -> None:
    address = "0x" + EMITTER.hex()
    head_hash = "0x" + rpc_compat_memory.canonical_hash(45).hex()  # type: ignore[union-attr]
    latest = result(rpc_compat_memory, "eth_getBalance", address)
    assert result(rpc_compat_memory, "eth_getBalance", address, "latest") == latest
    assert result(rpc_compat_memory, "eth_getBalance", address, head_hash) == latest
    assert result(rpc_compat_memory, "eth_getBalance", address, {"blockHash": head_hash}) == latest
    assert result(rpc_compat_memory, "eth_getBalance", address, {"blockNumber": "0x2d"}) == latest
    assert error(rpc_compat_memory, "eth_getBalance", address, "0x3e8") == (-32000, "header not found")
    assert error(rpc_compat_memory, "eth_getCode", address, "0x" + "ab" * 32) == \
        (-32000, "header for hash not found")
    with pytest.raises(HeaderNotFound):
        methods.get_balance(rpc_compat_memory, EMITTER, 1000)


def test_absent_accounts_read_as_zero(rpc_compat_memory: ethread.MemoryBackend) -> None:
    assert methods.get_balance(rpc_compat_memory, NOBODY) == 0
    assert methods.get_transaction_count(rpc_compat_memory, NOBODY) == 0
    assert methods.get_code(rpc_compat_memory, NOBODY) == b""
    assert methods.get_storage_at(rpc_compat_memory, NOBODY, b"\x01") == bytes(32)


def test_storage_keys_are_read_leniently_as_geth_does(rpc_compat_memory: ethread.MemoryBackend) -> None:
    address = "0x" + EMITTER.hex()
    zero = result(rpc_compat_memory, "eth_getStorageAt", address, "0x" + "00" * 32)
    for key in ("0x0", "0x", "0", "00", "0X00"):
        assert result(rpc_compat_memory, "eth_getStorageAt", address, key) == zero
    assert error(rpc_compat_memory, "eth_getStorageAt", address, "0xzz") == \
        (-32602, 'invalid hex in storage key: "0xzz"')
    assert error(rpc_compat_memory, "eth_getStorageAt", address, 5) == \
        (-32602, "invalid argument 1: json: cannot unmarshal number into Go value of type string")


def test_get_storage_values(rpc_compat_memory: ethread.MemoryBackend) -> None:
    slot0, slot1 = "0x" + "00" * 32, "0x" + "00" * 31 + "01"
    address = "0x" + EMITTER.hex()
    answer = result(rpc_compat_memory, "eth_getStorageValues",
                    {address: [slot1, slot0], "0x" + NOBODY.hex(): [slot0]}, "0x2d")
    assert answer == {
        address: [result(rpc_compat_memory, "eth_getStorageAt", address, slot1),
                  result(rpc_compat_memory, "eth_getStorageAt", address, slot0)],
        "0x" + NOBODY.hex(): ["0x" + "00" * 32],
    }
    assert error(rpc_compat_memory, "eth_getStorageValues", {address: []}) == (-32602, "empty request")
    too_many = {address: [slot0] * 1000, "0x" + NOBODY.hex(): [slot0] * 25}
    assert error(rpc_compat_memory, "eth_getStorageValues", too_many) == (-32005, "too many slots (max 1024)")
    assert error(rpc_compat_memory, "eth_getStorageValues", [address]) == (
        -32602, "invalid argument 0: json: cannot unmarshal array into Go value of type "
                "map[common.Address][]common.Hash")
