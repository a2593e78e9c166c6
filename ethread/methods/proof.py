"""eth_getProof (EIP-1186): Merkle proofs of an account and of storage slots at a block."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import rlp
from eth.constants import BLANK_ROOT_HASH
from eth_utils import keccak
from trie import HexaryTrie
from trie.exceptions import MissingTrieNode

from ..backend import StateSource
from ..errors import ArgumentTypeError, ArgumentValueError, StateUnavailable
from ..models import AccountProof, Address, BlockRef, StorageProof
from ..proofs import ZERO_HASH, account_fields
from ..validation import check_address, check_data
from .resolve import ChainHeaders, require_header


class ProvableChain(ChainHeaders, StateSource, Protocol):
    """A block's header and the state trie under it."""


def _encoded(nodes: Sequence[object]) -> tuple[bytes, ...]:
    return tuple(rlp.encode(node) for node in nodes)


def get_proof(
    backend: ProvableChain, address: Address, storage_keys: Sequence[bytes], block: BlockRef
) -> AccountProof:
    """The account's proof and each key's, as geth answers them. For an account the state
    does not hold, geth reports a zero code hash and a zero storage hash (its state reader
    has no object to ask), with a proof of absence; a key of an account without storage
    (none, or the empty trie) has the value 0 and an empty proof."""
    check_address(address)
    if isinstance(storage_keys, bytes | str):
        raise ArgumentTypeError("storage_keys: pass a sequence of keys (bytes of at most 32), not one key")
    for key in storage_keys:
        if len(check_data(key, "storage key")) > 32:
            raise ArgumentValueError("storage key: at most 32 bytes")
    header = require_header(backend, block)
    db = backend.evm_database().db
    try:
        state = HexaryTrie(db, header.state_root)
        account_key = keccak(address)
        nonce, balance, storage_root, code_hash = account_fields(state.get(account_key))
        account_proof = _encoded(state.get_proof(account_key))  # type: ignore[no-untyped-call]
        slots = []
        has_storage = storage_root not in (BLANK_ROOT_HASH, ZERO_HASH)
        storage = HexaryTrie(db, storage_root) if has_storage else None
        for key in storage_keys:
            if storage is None:
                slots.append(StorageProof(key=key, value=0, proof=()))
                continue
            slot_key = keccak(key.rjust(32, b"\x00"))
            raw = storage.get(slot_key)
            value = int.from_bytes(rlp.decode(raw), "big") if raw else 0
            proof = _encoded(storage.get_proof(slot_key))  # type: ignore[no-untyped-call]
            slots.append(StorageProof(key=key, value=value, proof=proof))
    except MissingTrieNode:
        raise StateUnavailable(f"no state for block {header.number}") from None
    return AccountProof(
        address=address,
        account_proof=account_proof,
        balance=balance,
        code_hash=code_hash,
        nonce=nonce,
        storage_hash=storage_root,
        storage_proof=tuple(slots),
    )
