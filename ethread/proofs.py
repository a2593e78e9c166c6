"""Verify EIP-1186 proofs against a state root, for users of eth_getProof: each node of the path
must hash to the reference its parent holds (or be embedded in it, under 32 bytes).
"""

from __future__ import annotations

from collections.abc import Sequence

import rlp
from eth.constants import BLANK_ROOT_HASH
from eth_utils import keccak

from .models import AccountProof, Hash32

ZERO_HASH = bytes(32)
"""What geth answers as the code and storage hash of an account the state does not hold."""


class ProofError(ValueError):
    """The proof does not show what it claims under the given root."""


def _nibbles(key: bytes) -> list[int]:
    out = []
    for byte in key:
        out += [byte >> 4, byte & 0x0F]
    return out


def _decode_path(encoded: bytes) -> tuple[list[int], bool]:
    nibbles = _nibbles(encoded)
    flag = nibbles[0]
    is_leaf = flag >= 2
    return (nibbles[1:] if flag % 2 else nibbles[2:]), is_leaf


def prove_value(root: Hash32, key: bytes, proof: Sequence[bytes]) -> bytes:
    """The value stored at ``keccak``-hashed ``key`` under ``root`` as the proof shows it;
    ``b""`` when the proof shows the key absent. Raises ProofError if the proof is invalid."""
    path = _nibbles(key)
    expected: bytes | list[object] = root
    nodes = list(proof)
    position = 0
    if root in (BLANK_ROOT_HASH, ZERO_HASH) and not nodes:
        return b""  # an empty trie, or geth's zero storage hash of an absent account
    for index, encoded in enumerate(nodes):
        if isinstance(expected, bytes):
            if keccak(encoded) != expected:
                raise ProofError(f"proof node {index} does not hash to its parent's reference")
            node = rlp.decode(encoded)
        else:
            node = expected
        while True:
            if len(node) == 17:
                if position == len(path):
                    return bytes(node[16])
                child = node[path[position]]
                position += 1
                if child == b"":
                    if index != len(nodes) - 1:
                        raise ProofError("proof continues past an absent branch")
                    return b""
            elif len(node) == 2:
                segment, is_leaf = _decode_path(node[0])
                if path[position:position + len(segment)] != segment:
                    return b""  # the path diverges: the key is absent
                position += len(segment)
                if is_leaf:
                    return bytes(node[1]) if position == len(path) else b""
                child = node[1]
            else:
                raise ProofError(f"proof node {index} is not a trie node")
            if not isinstance(child, list):  # (a reference: the next proof node is the child)
                expected = child
                break
            node = child  # (a child shorter than 32 bytes, embedded in its parent)
    raise ProofError("proof ends before reaching a value")


def account_fields(account_rlp: bytes) -> tuple[int, int, bytes, bytes]:
    """(nonce, balance, storage root, code hash) of an account's trie value; for an account
    the state does not hold (no value), geth's zeros."""
    if not account_rlp:
        return 0, 0, ZERO_HASH, ZERO_HASH
    nonce, balance, storage_root, code_hash = rlp.decode(account_rlp)
    return int.from_bytes(nonce, "big"), int.from_bytes(balance, "big"), storage_root, code_hash


def verify_account_proof(state_root: Hash32, proof: AccountProof) -> None:
    """Check every part of an eth_getProof answer against the block's state root; ProofError
    names the first claim the proof does not support."""
    claimed = account_fields(prove_value(state_root, keccak(proof.address), proof.account_proof))
    if claimed != (proof.nonce, proof.balance, proof.storage_hash, proof.code_hash):
        raise ProofError("account fields differ from what the account proof shows")
    for slot in proof.storage_proof:
        raw = prove_value(proof.storage_hash, keccak(slot.key.rjust(32, b"\x00")), slot.proof)
        value = int.from_bytes(rlp.decode(raw), "big") if raw else 0
        if value != slot.value:
            raise ProofError(f"storage slot 0x{slot.key.hex()} differs from its proof")
