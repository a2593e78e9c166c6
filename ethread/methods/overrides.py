"""State and block overrides of eth_call, eth_estimateGas and eth_createAccessList.

They are applied to a state and a header built for one request only (never to the states
that calls share), in geth's order and with geth's refusals: block overrides first, then the
accounts in address order; ``state`` and ``stateDiff`` together are refused; a precompile may
be moved to an address nobody else overrides.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from eth_typing import Address as EvmAddress
from eth_utils import to_checksum_address

from ..errors import ExecutionFailed
from ..models import BlockOverrides, StateOverride

Precompiles = dict[bytes, Callable[[Any], Any]]


def check_block_overrides(overrides: BlockOverrides) -> None:
    """The fields geth accepts in the parameter but refuses for a single call."""
    if overrides.beacon_root is not None:
        raise ExecutionFailed('block override "beaconRoot" is not supported for this RPC method')
    if overrides.withdrawals:
        raise ExecutionFailed('block override "withdrawals" is not supported for this RPC method')


HEADER_FIELDS = (("number", "block_number"), ("difficulty", "difficulty"), ("time", "timestamp"),
                  ("gas_limit", "gas_limit"), ("prev_randao", "mix_hash"))
"""Block override fields and the py-evm header fields they set as they are."""


def override_header(header: Any, overrides: BlockOverrides) -> Any:
    """A copy of a py-evm header with the overridden fields of the block context
    (``baseFeePerGas`` ignored before London; ``blobBaseFee``: :func:`with_blob_base_fee`)."""
    changes: dict[str, Any] = {field: value for name, field in HEADER_FIELDS
                               if (value := getattr(overrides, name)) is not None}
    if overrides.fee_recipient is not None:
        changes["coinbase"] = EvmAddress(overrides.fee_recipient)
    if overrides.base_fee_per_gas is not None and hasattr(header, "base_fee_per_gas"):
        changes["base_fee_per_gas"] = overrides.base_fee_per_gas
    return header.copy(**changes) if changes else header


def with_blob_base_fee(state: Any, fee: int) -> None:
    """Make a state (built for one request) answer ``fee`` as its blob base fee (py-evm
    derives it from the excess blob gas, which no fee maps back to exactly)."""
    if not hasattr(state, "blob_base_fee"):
        return
    base: Any = type(state)
    state.__class__ = _answering_blob_fee(base, fee)


@lru_cache(maxsize=256)
def _answering_blob_fee(base: type, fee: int) -> type:
    """``base`` answering ``fee`` as its blob base fee (one class per state class and fee)."""
    return type(base.__name__, (base,), {"__slots__": (), "blob_base_fee": property(lambda self: fee)})


def check_state_overrides(overrides: StateOverride, precompiles: Precompiles) -> Precompiles:
    """Refuse what geth refuses in a state override set, in its order; answer the precompiles
    the call runs with (some moved or replaced by the overrides)."""
    active = dict(precompiles)
    moved_to: set[bytes] = set()
    overridden = {account.address for account in overrides}
    for account in overrides:
        name = to_checksum_address(account.address)
        if account.address in moved_to:
            raise ExecutionFailed(f"account {name} has already been overridden by a precompile")
        precompile = active.get(account.address)
        if account.move_precompile_to is not None:
            if precompile is None:
                raise ExecutionFailed(f"account {name} is not a precompile")
            if account.move_precompile_to in overridden:
                raise ExecutionFailed(
                    f"account {to_checksum_address(account.move_precompile_to)} is already overridden")
            active[account.move_precompile_to] = precompile
            moved_to.add(account.move_precompile_to)
        if precompile is not None:
            del active[account.address]
        if account.state is not None and account.state_diff is not None:
            raise ExecutionFailed(f"account {name} has both 'state' and 'stateDiff'")
    return active


def set_account(state: Any, address: EvmAddress, *, balance: int | None, nonce: int | None,
                code: bytes | None) -> None:
    """Write an account's balance, nonce and code into a py-evm ``state``; None keeps one."""
    if balance is not None:
        state.set_balance(address, balance)
    if nonce is not None:
        state.set_nonce(address, nonce)
    if code is not None:
        state.set_code(address, code)


def apply_state_overrides(state: Any, overrides: StateOverride) -> None:
    """Write the overridden accounts into ``state`` (one built for this request only), then
    lock them in so that SSTORE prices against them, as geth finalises them."""
    if not overrides:
        return
    computation = state.computation_class
    precompiles = check_state_overrides(overrides, computation.get_precompiles())
    for account in overrides:
        address = EvmAddress(account.address)
        set_account(state, address, balance=account.balance, nonce=account.nonce, code=account.code)
        if account.state is not None:
            state.delete_storage(address)
        for slot, value in account.state or account.state_diff or ():
            state.set_storage(address, int.from_bytes(slot, "big"), int.from_bytes(value, "big"))
    if precompiles != computation.get_precompiles():
        state.computation_class = type(computation.__name__, (computation,),
                                       {"_precompiles": precompiles})
    state.lock_changes()
