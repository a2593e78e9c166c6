"""eth_getProof (``ethread.methods.proof``): keys without 0x, an absent account, and every proof
of the rpc-compat chain verifying against its block's state root."""

from __future__ import annotations

import json
from pathlib import Path

import ethread
from ethread import methods
from ethread.proofs import verify_account_proof
from tests.support.rpc_cases import error, result

EMITTER = bytes.fromhex("7dcd17433742f4c0ca53122ab541d0ba67fc27df")


NOBODY = bytes.fromhex("c1cadaffffffffffffffffffffffffffffffffff")


def test_get_proof_takes_keys_without_0x(rpc_compat_memory: ethread.MemoryBackend) -> None:
    with_prefix = result(rpc_compat_memory, "eth_getProof", "0x" + EMITTER.hex(), ["0x" + "00" * 32], "latest")
    without = result(rpc_compat_memory, "eth_getProof", "0x" + EMITTER.hex(), ["00" * 32], "latest")
    assert without == with_prefix
    short = result(rpc_compat_memory, "eth_getProof", "0x" + EMITTER.hex(), ["1"], "latest")
    assert short["storageProof"][0]["key"] == "0x1"  # not 32 bytes: answered as a quantity
    assert error(rpc_compat_memory, "eth_getProof", "0x" + EMITTER.hex(), ["0x" + "0" * 65]) == (
        -32602, 'storage key too long (want at most 32 bytes): "0x' + "0" * 65 + '"')
    assert error(rpc_compat_memory, "eth_getProof", "0x" + EMITTER.hex(), ["0x00"] * 1025)[1] == \
        "too many storage keys requested (max 1024, got 1025)"


def test_get_proof_of_an_absent_account(rpc_compat_memory: ethread.MemoryBackend) -> None:
    answer = result(rpc_compat_memory, "eth_getProof", "0x" + NOBODY.hex(), ["0x01"], "latest")
    assert answer["codeHash"] == "0x" + "00" * 32
    assert answer["storageHash"] == "0x" + "00" * 32
    assert answer["balance"] == "0x0" and answer["nonce"] == "0x0"
    assert answer["storageProof"] == [{"key": "0x1", "value": "0x0", "proof": []}]
    assert answer["accountProof"]  # a proof of absence
    proof = methods.get_proof(rpc_compat_memory, NOBODY, [b"\x01"], "latest")
    ethread.verify_account_proof(rpc_compat_memory.header_by_hash(  # type: ignore[union-attr]
        rpc_compat_memory.canonical_hash(45)).state_root, proof)  # type: ignore[arg-type]


def test_every_proof_verifies(rpc_compat_dir: Path, rpc_compat_memory: ethread.MemoryBackend) -> None:
    genesis = json.loads((rpc_compat_dir / "genesis.json").read_text())
    addresses = [bytes.fromhex(a.removeprefix("0x")) for a in genesis["alloc"]]
    addresses.append(b"\x42" * 20)  # an account that does not exist: a proof of absence
    for number in (0, 9, 27, 45):
        header = methods.get_block_by_number(rpc_compat_memory, number).header  # type: ignore[union-attr]
        for address in addresses:
            slots = [b"\x00", b"\x01" * 32, b"\x02"]
            proof = methods.get_proof(rpc_compat_memory, address, slots, number)
            verify_account_proof(header.state_root, proof)
            assert proof.storage_proof[0].key == b"\x00"
