"""anvil's (and hardhat's) controls of a dev chain: account edits, the clock, the next block's
gas limit and base fee, the chain id, and anvil_reset."""

from __future__ import annotations

from dataclasses import replace

from ..models import Address, Block
from .core import DevChainError, StateEdit
from .inputs import as_address, as_bytes, as_int
from .mining import BlockMining


class AnvilControls(BlockMining):
    """The test controls that change the chain outside any transaction."""

    def increase_time(self, seconds: int) -> int:
        """Move the clock ``seconds`` ahead; the total jump waiting for the next block."""
        as_int(seconds, "seconds")
        with self._lock:
            self._time_offset += seconds
            return self._time_offset

    def set_next_block_timestamp(self, timestamp: int) -> None:
        """The next block's timestamp exactly (it must be after the head's)."""
        as_int(timestamp, "timestamp")
        with self._lock:
            if timestamp <= self.head.timestamp:
                raise DevChainError(f"timestamp {timestamp} is not after the head's "
                                    f"({self.head.timestamp})")
            self._next_timestamp = timestamp

    def set_balance(self, address: Address | str, balance: int) -> Block:
        """Give ``address`` exactly ``balance`` wei; mined at once as a block of its own."""
        return self.edit(StateEdit(as_address(address), balance=as_int(balance, "balance")))

    def set_nonce(self, address: Address | str, nonce: int) -> Block:
        """Set the nonce of ``address`` in a new block of its own (see :meth:`edit`)."""
        return self.edit(StateEdit(as_address(address), nonce=as_int(nonce, "nonce")))

    def set_code(self, address: Address | str, code: bytes | str) -> Block:
        """Install runtime ``code`` at ``address`` as it is."""
        return self.edit(StateEdit(as_address(address), code=as_bytes(code, "code")))

    def set_storage(self, address: Address | str, slot: int | bytes | str,
                    value: int | bytes | str) -> Block:
        """Write one storage slot (slot and value as ints, or 32-byte words)."""
        return self.edit(StateEdit(as_address(address),
                                   storage=((_word(slot, "slot"), _word(value, "value")),)))

    def reset(self) -> None:
        """anvil_reset: back to the genesis (or forked) block, pending transactions, snapshots, the
        clock's jumps and the next block's settings forgotten. Impersonations, the coinbase, a
        gas limit set by :meth:`set_gas_limit` and the chain id stay, as in anvil."""
        with self._lock:
            first = self.backend.pointer("earliest") or 0
            self._rewind(first, "reset needs")
            if self._funding:  # (a fork's)
                self.edit(*self._funding)
            self._forget_pending()
            self._snapshots.clear()
            self._withdrawal_index = None
            self._time_offset = 0
            self._next_timestamp = None
            self._next_base_fee_override = None

    def set_gas_limit(self, gas_limit: int) -> None:
        """evm_setBlockGasLimit: the gas limit of the next blocks, at once (as anvil and hardhat)."""
        as_int(gas_limit, "gas_limit")
        if gas_limit < 5000:
            raise DevChainError(f"gas limit {gas_limit} is below the protocol's minimum 5000")
        with self._lock:
            self._gas_limit = gas_limit

    def set_next_base_fee(self, base_fee: int) -> None:
        """anvil_setNextBlockBaseFeePerGas: the base fee of the next block (EIP-1559 after it)."""
        as_int(base_fee, "base_fee")
        with self._lock:
            if not self.config.rules(self.head.number + 1,
                                     self._next_time(self.head.timestamp)).base_fee:
                raise DevChainError("the next block has no base fee (before London)")
            self._next_base_fee_override = base_fee

    def set_chain_id(self, chain_id: int) -> None:
        """anvil_setChainId: the chain id transactions are signed and checked for from now on."""
        as_int(chain_id, "chain_id")
        if not 0 < chain_id < 1 << 64:
            raise DevChainError("chain id: must be between 1 and 2^64 - 1")
        with self._lock:
            self.chain_id = chain_id
            self.config = replace(self.config, chain_id=chain_id)
            self.importer.config = self.config
            self.backend.store_chain_config(self.config)


def _word(value: int | bytes | str, what: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value < 1 << 256:
            raise ValueError(f"{what}: out of the 256-bit range")
        return value
    raw = as_bytes(value, what)
    if len(raw) > 32:
        raise ValueError(f"{what}: more than 32 bytes")
    return int.from_bytes(raw, "big")
