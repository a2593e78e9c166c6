"""Dev accounts and transaction signing for the dev chain.

Transactions are built as :mod:`ethread.models` values and signed here, so the dev chain
speaks the same types as everything else. The payload a signature covers is derived from the
one canonical encoding in :mod:`ethread.encoding` (the envelope minus the signature fields),
so no transaction field is listed a second time here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property

import coincurve
import rlp
from eth_utils import keccak

from ..encoding import int_to_bytes, signing_hash
from ..models import Address, Authorization, Hash32, LegacyTransaction, Transaction

AUTHORIZATION_MAGIC = b"\x05"
"""EIP-7702: what an authorization's signed payload starts with."""
BLOB_HASH_VERSION = b"\x01"
"""EIP-4844: the first byte of a KZG versioned hash."""


@dataclass(frozen=True)
class DevAccount:
    """A funded account whose private key is derived from its index, so every dev chain built
    with the same parameters has the same addresses, transactions and hashes."""

    index: int

    @cached_property
    def key(self) -> coincurve.PrivateKey:
        return coincurve.PrivateKey(keccak(b"ethread dev account %d" % self.index))

    @cached_property
    def address(self) -> Address:
        return keccak(self.key.public_key.format(compressed=False)[1:])[12:]

    def sign(self, message_hash: Hash32) -> tuple[int, int, int]:
        """(y parity, r, s) of a low-s signature. coincurve directly: through eth-keys the same
        signature costs three times as much, which synthetic histories feel."""
        signature = self.key.sign_recoverable(message_hash, hasher=None)
        return signature[64], int.from_bytes(signature[:32], "big"), int.from_bytes(
            signature[32:64], "big")

    def __repr__(self) -> str:
        return f"DevAccount({self.index}, 0x{self.address.hex()})"


def dev_accounts(count: int) -> tuple[DevAccount, ...]:
    return tuple(DevAccount(i) for i in range(count))


def sign_transaction(tx: Transaction, account: DevAccount, chain_id: int | None = None) -> Transaction:
    """``tx`` with ``account``'s signature in place of whatever signature it carried.

    For a legacy transaction, ``chain_id`` chooses EIP-155 protection (see
    :func:`signing_hash`); typed transactions carry their chain id themselves.
    """
    if not isinstance(tx, LegacyTransaction) and chain_id is not None and chain_id != tx.chain_id:
        raise ValueError("a typed transaction is signed for its own chain id")
    parity, r, s = account.sign(signing_hash(tx, chain_id))
    if isinstance(tx, LegacyTransaction):
        v = parity + (35 + 2 * chain_id if chain_id is not None else 27)
        return dataclasses.replace(tx, v=v, r=r, s=s)
    return dataclasses.replace(tx, y_parity=parity, r=r, s=s)


def sign_authorization(account: DevAccount, chain_id: int, address: Address, nonce: int) -> Authorization:
    """An EIP-7702 authorization: ``account`` delegates its code to ``address``. ``nonce`` must
    be the account's nonce when the authorization is applied (one more than its current nonce
    when the account also sends the transaction carrying it). Chain id 0 means any chain."""
    payload = AUTHORIZATION_MAGIC + rlp.encode([int_to_bytes(chain_id), address, int_to_bytes(nonce)])
    parity, r, s = account.sign(keccak(payload))
    return Authorization(chain_id=chain_id, address=address, nonce=nonce, y_parity=parity, r=r,
                         s=s)


def versioned_hash(seed: bytes) -> Hash32:
    """A well-formed blob versioned hash (version byte 0x01) standing for a blob nobody has:
    blocks commit only to these hashes, so import needs no blob data."""
    return BLOB_HASH_VERSION + keccak(seed)[1:]
