"""anvil_dumpState and anvil_loadState on a dev chain (the file's shape is :mod:`.state_file`'s)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eth_typing import Address as EvmAddress

from ..methods.fees import blob_base_fee
from ..models import Block
from .core import StateEdit
from .mining import BlockMining
from .state_file import DumpedAccount, encode_state, parse_state, state_document


class StateFiles(BlockMining):
    """The head's state written out as anvil's state file, and such a file read back in."""

    def dump_state(self, *, compress: bool = False) -> bytes:
        """The head's state as anvil's state file (gzipped when ``compress``), every account touched."""
        with self._lock:
            head = self.head
            state = self._head_state()
            accounts = []
            for address, slots in self._preimages.slots.items():
                evm_address = EvmAddress(address)
                if not state.account_exists(evm_address):
                    continue
                storage = tuple(sorted(
                    (slot, value) for slot in slots
                    if (value := int(state.get_storage(evm_address, slot))) != 0))
                accounts.append(DumpedAccount(
                    address=address, nonce=int(state.get_nonce(evm_address)),
                    balance=int(state.get_balance(evm_address)),
                    code=bytes(state.get_code(evm_address)), storage=storage))
            document = state_document(head, blob_gas_price=blob_base_fee(self.config, head) or 1,
                                      accounts=accounts)
        return encode_state(document, compress=compress)

    def load_state(self, state: bytes | str | Mapping[str, Any]) -> Block:
        """Write an anvil state file's accounts in a block of their own (no earlier than its block)."""
        loaded = parse_state(state)
        edits = [StateEdit(account.address, balance=account.balance, nonce=account.nonce,
                           code=account.code, storage=account.storage)
                 for account in loaded.accounts]
        with self._lock:
            for change in edits:
                self._preimages.add(change.address, (slot for slot, _ in change.storage))
            when = max(self._next_time(self.head.timestamp), loaded.timestamp or 0)
            return self._mine((), edits=edits, timestamp=max(when, self.head.timestamp + 1))
