"""Dev accounts and transaction signing for the dev chain.

Dev accounts are anvil's and hardhat's: derived from the public test mnemonic ``test test ...
junk`` along ``m/44'/60'/0'/0/i``. Their keys are public: never hold real funds with them.
Transactions are :mod:`ethread.models` values, signed over
:func:`~ethread.rlpcodec.transactions.signing_hash`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import coincurve
import rlp
from eth_utils import keccak

from .. import models
from ..forks import FORKS
from ..models import AccessListEntry, Address, Authorization, Hash32, LegacyTransaction, Transaction
from ..rlpcodec.items import int_to_bytes
from ..rlpcodec.transactions import signing_hash

if TYPE_CHECKING:
    from eth_account.signers.local import LocalAccount

TEST_MNEMONIC = "test test test test test test test test test test test junk"
"""The public test mnemonic of anvil and hardhat."""
DERIVATION_PATH = "m/44'/60'/0'/0/"
"""Where the dev accounts are derived: the account index is appended (anvil's default)."""

AUTHORIZATION_MAGIC = b"\x05"
"""EIP-7702: what an authorization's signed payload starts with."""
BLOB_HASH_VERSION = b"\x01"
"""EIP-4844: the first byte of a KZG versioned hash."""


@lru_cache(maxsize=4)
def _seed(mnemonic: str) -> bytes:
    from eth_account.hdaccount import seed_from_mnemonic

    return seed_from_mnemonic(mnemonic, "")


@lru_cache(maxsize=1024)
def derive_key(index: int, mnemonic: str = TEST_MNEMONIC, path: str = DERIVATION_PATH) -> bytes:
    """The private key at ``path`` followed by ``index`` of ``mnemonic`` (BIP-39/BIP-32)."""
    from eth_account.hdaccount import key_from_seed

    return key_from_seed(_seed(mnemonic), f"{path}{index}")


@dataclass(frozen=True)
class DevAccount:
    """A funded account whose key is the ``index``-th of the test mnemonic (anvil's, in order)."""

    index: int
    mnemonic: str = TEST_MNEMONIC
    path: str = DERIVATION_PATH
    """The derivation path the index is appended to."""

    @cached_property
    def private_key(self) -> bytes:
        return derive_key(self.index, self.mnemonic, self.path)

    @cached_property
    def key(self) -> coincurve.PrivateKey:
        return coincurve.PrivateKey(self.private_key)

    @cached_property
    def local_account(self) -> LocalAccount:
        """The same account as an eth-account ``LocalAccount`` (to sign with web3.py)."""
        from eth_account import Account

        account: LocalAccount = Account.from_key(self.private_key)
        return account

    @cached_property
    def address(self) -> Address:
        return keccak(self.key.public_key.format(compressed=False)[1:])[12:]

    def sign(self, message_hash: Hash32) -> tuple[int, int, int]:
        """(y parity, r, s) of a low-s signature (coincurve directly: eth-keys is slower)."""
        signature = self.key.sign_recoverable(message_hash, hasher=None)
        return signature[64], int.from_bytes(signature[:32], "big"), int.from_bytes(
            signature[32:64], "big")

    def __repr__(self) -> str:
        return f"DevAccount({self.index}, 0x{self.address.hex()})"


def dev_accounts(count: int, mnemonic: str = TEST_MNEMONIC,
                 path: str = DERIVATION_PATH) -> tuple[DevAccount, ...]:
    """The first ``count`` accounts derived from ``mnemonic`` along ``path``."""
    return tuple(DevAccount(i, mnemonic, path) for i in range(count))


def sign_transaction(tx: Transaction, account: DevAccount, chain_id: int | None = None) -> Transaction:
    """``tx`` signed by ``account``; ``chain_id``: a legacy transaction's EIP-155 protection."""
    if not isinstance(tx, LegacyTransaction) and chain_id is not None and chain_id != tx.chain_id:
        raise ValueError("a typed transaction is signed for its own chain id")
    parity, r, s = account.sign(signing_hash(tx, chain_id))
    if isinstance(tx, LegacyTransaction):
        v = parity + (35 + 2 * chain_id if chain_id is not None else 27)
        return dataclasses.replace(tx, v=v, r=r, s=s)
    return dataclasses.replace(tx, y_parity=parity, r=r, s=s)


def sign_authorization(account: DevAccount, chain_id: int, address: Address, nonce: int) -> Authorization:
    """An EIP-7702 authorization: ``account`` delegates its code to ``address``. ``nonce``: the
    account's nonce when it applies (one more if the account also sends it); chain id 0: any chain."""
    payload = AUTHORIZATION_MAGIC + rlp.encode([int_to_bytes(chain_id), address, int_to_bytes(nonce)])
    parity, r, s = account.sign(keccak(payload))
    return Authorization(chain_id=chain_id, address=address, nonce=nonce, y_parity=parity, r=r, s=s)


def versioned_hash(seed: bytes) -> Hash32:
    """A well-formed blob versioned hash for a blob nobody has (blocks commit only to the hashes)."""
    return BLOB_HASH_VERSION + keccak(seed)[1:]


TxKind: TypeAlias = Literal["legacy", "access-list", "dynamic-fee", "blob", "set-code"]
KIND_TYPE: dict[str, int] = {"legacy": 0, "access-list": 1, "dynamic-fee": 2, "blob": 3,
                             "set-code": 4}
"""The transaction type number of each kind."""
KIND_SINCE: dict[str, str] = {
    kind: next(f.name for f in FORKS if tx_type in f.transaction_types)
    for kind, tx_type in KIND_TYPE.items()
}
"""The first fork that accepts each transaction kind (read from the fork table)."""


@dataclass(frozen=True, slots=True)
class Fees:
    """The fee fields of a transaction, each kind using those it has. The defaults clear any base fee a
    dev chain reaches (1 gwei at London and falling, blob base fees from 1 wei)."""

    gas_price: int = 3 * 10**9
    max_fee_per_gas: int = 30 * 10**9
    max_priority_fee_per_gas: int = 1 * 10**9
    max_fee_per_blob_gas: int = 1 * 10**9


DEFAULT_FEES = Fees()


@dataclass(frozen=True, slots=True)
class Draft:
    """A transaction's fields before its kind and fees are applied."""

    nonce: int
    to: Address | None
    value: int
    data: bytes
    gas: int
    access_list: tuple[AccessListEntry, ...]
    blob_hashes: tuple[Hash32, ...]
    authorizations: tuple[Authorization, ...]

    def unsigned(self, kind: TxKind, chain_id: int, fees: Fees) -> Transaction:
        """The transaction of ``kind``, with an empty signature."""
        if kind == "legacy":
            return LegacyTransaction(
                nonce=self.nonce, gas_price=fees.gas_price, gas=self.gas, to=self.to,
                value=self.value, data=self.data, v=0, r=0, s=0,
            )
        if kind == "access-list":
            return models.AccessListTransaction(
                chain_id=chain_id, nonce=self.nonce, gas_price=fees.gas_price, gas=self.gas,
                to=self.to, value=self.value, data=self.data, access_list=self.access_list,
                y_parity=0, r=0, s=0,
            )
        # The EIP-1559 fields, which the blob (EIP-4844) and set-code (EIP-7702) kinds keep.
        fee_market: dict[str, Any] = {
            "chain_id": chain_id, "nonce": self.nonce,
            "max_priority_fee_per_gas": fees.max_priority_fee_per_gas,
            "max_fee_per_gas": fees.max_fee_per_gas, "gas": self.gas, "to": self.to,
            "value": self.value, "data": self.data, "access_list": self.access_list,
            "y_parity": 0, "r": 0, "s": 0,
        }
        if kind == "dynamic-fee":
            return models.DynamicFeeTransaction(**fee_market)
        if kind == "blob":
            return models.BlobTransaction(**fee_market, max_fee_per_blob_gas=fees.max_fee_per_blob_gas,
                                   blob_versioned_hashes=self.blob_hashes)
        return models.SetCodeTransaction(**fee_market, authorization_list=self.authorizations)
