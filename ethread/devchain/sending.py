"""Transactions into a dev chain: made in code (``send``, ``deploy``, ``fund``) or taken as a node
takes them (``submit``, eth_sendTransaction), checked by the pool's rules before they take a nonce."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from eth._utils.address import generate_contract_address
from eth_typing import Address as EvmAddress
from eth_utils import to_checksum_address

from ..errors import TransactionRejected
from ..forks import FORK_BY_NAME
from ..models import AccessListEntry, Address, Authorization, CallRequest, Hash32, Transaction
from . import contracts
from .core import DevChainError
from .inputs import as_address, as_bytes, as_int
from .mining import BlockMining
from .pool import PoolView, admit, decode_raw, evm_transaction, recover_sender
from .requests import transaction_for
from .signing import (
    DEFAULT_FEES,
    KIND_SINCE,
    KIND_TYPE,
    DevAccount,
    Draft,
    Fees,
    TxKind,
    sign_authorization,
    sign_transaction,
)

TRANSFER_GAS = 21_000
CONTRACT_GAS = 1_000_000


class TransactionSending(BlockMining):
    """Transactions made in code or received, checked, pooled (and mined at once when automining)."""

    def send(
        self,
        sender: DevAccount,
        to: Address | str | None = None,
        *,
        value: int = 0,
        data: bytes | str = b"",
        kind: TxKind | None = None,
        gas: int | None = None,
        nonce: int | None = None,
        protected: bool = True,
        access_list: Sequence[AccessListEntry] = (),
        blob_hashes: Sequence[Hash32] = (),
        delegations: Sequence[tuple[DevAccount, Address] | Authorization] = (),
        fees: Fees = DEFAULT_FEES,
    ) -> Hash32:
        """Sign a transaction from ``sender`` and queue it for the next block; its hash. A refused one
        raises :class:`~ethread.errors.TransactionRejected` and takes no nonce.

        ``kind`` defaults to dynamic-fee from London on, legacy before; a legacy one is EIP-155
        protected from Spurious Dragon on unless ``protected`` is False. ``delegations``: signed
        authorizations or (authority, code address) pairs to sign. Gas defaults to
        :data:`TRANSFER_GAS` for a plain transfer, :data:`CONTRACT_GAS` otherwise.
        """
        if not isinstance(sender, DevAccount):
            raise TypeError(f"sender: pass a DevAccount (chain.accounts[i]), not {type(sender).__name__}")
        to_address = None if to is None else as_address(to, "to")
        payload = as_bytes(data, "data")
        as_int(value, "value")
        with self._lock:
            fork = self.next_fork()
            kind = kind or ("dynamic-fee" if FORK_BY_NAME[fork].base_fee else "legacy")
            if kind not in KIND_SINCE:
                raise ValueError(f"kind must be one of {sorted(KIND_SINCE)}, not {kind!r}")
            self._check_kind(fork, kind, to_address, blob_hashes, delegations)
            nonces: dict[Address, int] = {}  # committed only once the transaction is admitted
            own_nonce = self._peek_nonce(sender.address, nonces) if nonce is None else nonce
            nonces[sender.address] = own_nonce + 1
            draft = Draft(
                nonce=own_nonce, to=to_address, value=value, data=payload,
                gas=gas if gas is not None else self._default_gas(to_address, payload, kind),
                access_list=tuple(access_list), blob_hashes=tuple(blob_hashes),
                authorizations=self._authorizations(delegations, nonces),
            )
            tx = draft.unsigned(kind, self.chain_id, fees)
            protect = kind == "legacy" and protected and FORK_BY_NAME[fork].replay_protection
            signed = sign_transaction(tx, sender, self.chain_id if protect else None)
            self._admit(signed, sender.address)
            tx_hash = self.pool.keep(signed, sender.address)
            self._nonces.update(nonces)
            return tx_hash

    def submit(self, tx: Transaction | bytes, *, sender: Address | None = None) -> Hash32:
        """Take a signed transaction (or its bytes) as eth_sendRawTransaction does: mined at once in
        a block of its own while :attr:`automine` is on, else pooled by geth's rules. ``sender``:
        an impersonated account (:meth:`impersonate`), whose signature is not checked."""
        if isinstance(tx, bytes | bytearray | str):
            tx = decode_raw(as_bytes(tx, "raw transaction"))
        with self._lock:
            evm_tx = self._evm_tx(tx)
            if sender is None:
                return self._take(tx, recover_sender(evm_tx))
            origin = as_address(sender, "sender")
            if origin not in self._impersonated:
                raise TransactionRejected(f"invalid sender: {to_checksum_address(origin)} "
                                          "is not impersonated")
            return self._take(tx, origin, impersonated=True)

    def _take(self, tx: Transaction, origin: Address, *, impersonated: bool = False) -> Hash32:
        """Admit a transaction from ``origin`` and mine it when automining, else pool it."""
        if self.automine:
            self._admit(tx, origin)
            tx_hash = self.pool.keep(tx, origin)
        else:
            tx_hash = self.pool.add(tx, sender=origin if impersonated else None)
        if impersonated:
            self._senders[tx_hash] = origin
        if self.automine:
            self.mine()
        return tx_hash

    def send_request(self, request: CallRequest) -> Hash32:
        """eth_sendTransaction from a dev or impersonated account (fields filled in); then :meth:`submit`."""
        with self._lock:
            tx = transaction_for(self, request)
            assert request.sender is not None
            if self.account(request.sender) is None:
                return self.submit(tx, sender=request.sender)
            self._evm_tx(tx)  # refuses, as submit does, a type the next block's VM cannot decode
            return self._take(tx, request.sender)

    def next_nonce(self, address: Address | str) -> int:
        """The nonce the next transaction of ``address`` takes (pending ones counted)."""
        wanted = as_address(address)
        with self._lock:
            taken = self.pool.next_nonce(wanted) if self.pool.holds(wanted) else self.nonce(wanted)
            return max(self._nonces.get(wanted, 0), taken)

    def _evm_tx(self, tx: Transaction) -> Any:
        head = self.head
        return evm_transaction(self.config.vm_class(head.number + 1, self._next_time(head.timestamp)), tx)

    def _admit(self, tx: Transaction, sender: Address) -> None:
        """Refuse, in geth's words, what the next block could not take from ``sender``."""
        head = self.head
        when = self._next_time(head.timestamp)
        state = self._head_state()
        address = EvmAddress(sender)
        base_fee = self._next_base_fee(head, when)
        admit(tx, sender, PoolView(
            chain_id=self.chain_id,
            fork=self.config.fork_at(head.number + 1, when),
            base_fee=base_fee,
            gas_limit=head.gas_limit,
            next_nonce=self.next_nonce(sender),
            spendable=state.get_balance(address) - self.pool.pending_cost(sender),
            code=b"" if sender in self._impersonated else state.get_code(address),
        ))

    @staticmethod
    def _check_kind(fork: str, kind: TxKind, to: Address | None, blob_hashes: Sequence[Hash32],
                    delegations: Sequence[object]) -> None:
        if KIND_TYPE[kind] not in FORK_BY_NAME[fork].transaction_types:
            raise DevChainError(f"the next block is {fork}: no {kind} transactions before "
                                f"{KIND_SINCE[kind]}")
        if (blob_hashes and kind != "blob") or (delegations and kind != "set-code"):
            raise DevChainError("blob hashes need kind='blob', delegations kind='set-code'")
        if kind in ("blob", "set-code") and to is None:
            raise DevChainError(f"a {kind} transaction cannot create a contract")

    def deploy(
        self,
        sender: DevAccount,
        bytecode: bytes | str,
        constructor_args: bytes | str = b"",
        *,
        abi: Sequence[Mapping[str, Any]] | None = None,
        args: Sequence[Any] = (),
        value: int = 0,
        kind: TxKind | None = None,
        gas: int | None = None,
    ) -> Address:
        """Queue a contract's creation from solc's ``bytecode`` and constructor arguments (encoded, or
        ``args`` by ``abi``); its address. If the creation fails, :meth:`mine` raises
        :class:`DevChainError` and stores nothing."""
        code = as_bytes(bytecode, "bytecode")
        if not code:
            raise ValueError("bytecode: empty; pass the contract's creation bytecode")
        encoded = as_bytes(constructor_args, "constructor_args")
        if abi is not None:
            if encoded:
                raise TypeError("pass constructor_args (encoded) or abi and args, not both")
            encoded = encode_constructor_args(abi, args)
        elif args:
            raise TypeError("args need the contract's abi to be encoded")
        return self._create(sender, code + encoded, value=value, kind=kind, gas=gas)

    def deploy_runtime(self, sender: DevAccount, runtime: bytes | str, *, value: int = 0,
                       kind: TxKind | None = None, gas: int | None = None) -> Address:
        """Queue a creation that installs ``runtime`` as the contract's code as it is; its address."""
        code = as_bytes(runtime, "runtime")
        return self._create(sender, contracts.initcode(code), value=value, kind=kind, gas=gas)

    def _create(self, sender: DevAccount, initcode: bytes, *, value: int, kind: TxKind | None,
                gas: int | None) -> Address:
        with self._lock:
            nonce = self._peek_nonce(sender.address, {})
            tx_hash = self.send(sender, None, value=value, data=initcode, kind=kind, gas=gas)
            address = generate_contract_address(EvmAddress(sender.address), nonce)
            self._deployments[tx_hash] = address
            return address

    def fund(self, address: Address | str, value: int, *, sender: DevAccount | None = None) -> Hash32:
        """Queue a plain transfer of ``value`` wei to ``address`` (from the first dev account)."""
        return self.send(sender or self.accounts[0], address, value=value)

    def _peek_nonce(self, address: Address, nonces: dict[Address, int]) -> int:
        if address not in nonces:
            nonces[address] = self.next_nonce(address)
        return nonces[address]

    def _default_gas(self, to: Address | None, data: bytes, kind: TxKind) -> int:
        plain = to is not None and not data and kind != "set-code" and not self.code(to)
        return TRANSFER_GAS if plain else CONTRACT_GAS

    def _authorizations(self, delegations: Sequence[tuple[DevAccount, Address] | Authorization],
                        nonces: dict[Address, int]) -> tuple[Authorization, ...]:
        """Sign (authority, address) pairs with the nonce each authority will have when applied."""
        out = []
        for item in delegations:
            if isinstance(item, Authorization):
                out.append(item)
                continue
            authority, address = item
            nonce = self._peek_nonce(authority.address, nonces)
            nonces[authority.address] = nonce + 1
            out.append(sign_authorization(authority, self.chain_id, as_address(address), nonce))
        return tuple(out)


def encode_constructor_args(abi: Sequence[Mapping[str, Any]], args: Sequence[Any]) -> bytes:
    """ABI-encode ``args`` for the constructor of ``abi`` (none when it has no constructor)."""
    from eth_abi.abi import encode

    constructor = next((item for item in abi if item.get("type") == "constructor"), None)
    inputs = constructor.get("inputs", []) if constructor else []
    if len(inputs) != len(args):
        raise TypeError(f"the constructor takes {len(inputs)} arguments, {len(args)} given")
    return encode([_abi_type(i) for i in inputs], list(args))


def _abi_type(item: Mapping[str, Any]) -> str:
    kind: str = item["type"]
    if kind.startswith("tuple"):
        return "(" + ",".join(_abi_type(c) for c in item["components"]) + ")" + kind[5:]
    return kind
