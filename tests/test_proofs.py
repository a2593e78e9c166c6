"""The EIP-1186 proof verifier (``ethread.proofs``): a forged balance, slot or root is refused."""

from __future__ import annotations

import pytest

import ethread
from ethread import methods
from ethread.proofs import ProofError, verify_account_proof


def test_a_forged_proof_is_rejected(rpc_compat_memory: ethread.MemoryBackend) -> None:
    address = bytes.fromhex("7dcd17433742f4c0ca53122ab541d0ba67fc27df")
    proof = methods.get_proof(rpc_compat_memory, address, [b"\x00"], "latest")
    header = methods.get_block_by_number(rpc_compat_memory, "latest").header  # type: ignore[union-attr]
    verify_account_proof(header.state_root, proof)
    from dataclasses import replace

    with pytest.raises(ProofError):
        verify_account_proof(header.state_root, replace(proof, balance=proof.balance + 1))
    slot = replace(proof.storage_proof[0], value=proof.storage_proof[0].value + 1)
    with pytest.raises(ProofError):
        verify_account_proof(header.state_root, replace(proof, storage_proof=(slot,)))
    with pytest.raises(ProofError):
        verify_account_proof(b"\x00" * 32, proof)
