"""The JSON-RPC methods of a network backed by a dev chain: eth_sendTransaction and the test
controls (evm_*, anvil_*, and hardhat_* aliases); -32601 without a dev chain. anvil's other
controls are :mod:`ethread.rpc.anvil`'s, signing :mod:`ethread.rpc.signing`'s."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..codec.hex import parse_address, parse_data, parse_hash_param, parse_quantity, parse_storage_key
from ..codec.params import parse_bool, parse_call_request
from ..devchain import DevChain
from ..errors import InvalidParams
from ..models import CallRequest, Hash32
from .row import Param, Scope, anvil_and_hardhat, control, opt

MAX_MINE_BLOCKS = 10_000
"""The most blocks one anvil_mine/hardhat_mine call makes."""


def quantity_or_number(what: str, bits: int = 64) -> Callable[[Any], int]:
    """A parser of a number test tools send as a hex string or as a JSON number."""
    def parse(value: Any) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 0:
                raise InvalidParams(f"{what}: must not be negative")
            return value
        return parse_quantity(value, what, bits=bits)

    return parse


def _word(what: str) -> Callable[[Any], int]:
    """A storage value: hex of at most 32 bytes (leading zeros allowed, as tools pad them)."""
    return lambda value: int.from_bytes(parse_storage_key(value, what), "big")


def chain_call(name: str, answer: Any = None) -> Callable[..., Any]:
    """A control calling the dev chain's method ``name`` with its parameters, answering ``answer``."""
    def run(scope: Scope, *args: Any) -> Any:
        getattr(scope.dev, name)(*args)
        return answer

    run.__wrapped__ = getattr(DevChain, name)  # type: ignore[attr-defined]  # (what the docs name)
    return run


def _send_transaction(scope: Scope, request: CallRequest) -> Any:
    return "0x" + scope.dev.send_request(request).hex()


def _mine_options(option: Any) -> tuple[int | None, int]:
    """evm_mine's parameter (a timestamp or anvil's options): the timestamp (or None) and block count."""
    blocks = 1
    if isinstance(option, dict):
        unknown = set(option) - {"timestamp", "blocks"}
        if unknown:
            raise InvalidParams(f"mine options: unknown field {sorted(unknown)[0]}")
        blocks = quantity_or_number("blocks")(option["blocks"]) \
            if option.get("blocks") is not None else 1
        if blocks > MAX_MINE_BLOCKS:
            raise InvalidParams(f"blocks: at most {MAX_MINE_BLOCKS} per call")
        option = option.get("timestamp")
    return (quantity_or_number("timestamp")(option) if option is not None else None), blocks


def _mine(scope: Scope, options: tuple[int | None, int]) -> Any:
    """evm_mine: the first block at the timestamp (if given), the others at the usual interval."""
    timestamp, blocks = options
    for index in range(blocks):
        scope.dev.mine(timestamp=timestamp if index == 0 else None)
    return "0x0"


def _mine_many(scope: Scope, count: int, interval: int | None) -> Any:
    """anvil_mine / hardhat_mine: ``count`` blocks (default 1), ``interval`` seconds apart."""
    if count > MAX_MINE_BLOCKS:
        raise InvalidParams(f"blocks: at most {MAX_MINE_BLOCKS} per call")
    chain = scope.dev
    for _ in range(count):  # (an interval of 0, as viem's test client sends: the chain's clock)
        chain.mine(timestamp=chain.head.timestamp + interval if interval else None)
    return None


def _snapshot(scope: Scope) -> Any:
    return hex(scope.dev.snapshot())


def _revert(scope: Scope, snapshot_id: int) -> Any:
    return scope.dev.revert(snapshot_id)


def _increase_time(scope: Scope, seconds: int) -> Any:
    return scope.dev.increase_time(seconds)


def _set_automine(scope: Scope, on: bool) -> Any:
    scope.dev.automine = on


def _get_automine(scope: Scope) -> Any:
    return scope.dev.automine


def _drop_transaction(scope: Scope, tx_hash: Hash32) -> Any:
    """anvil's answer: the hash when it was dropped, else null."""
    return "0x" + tx_hash.hex() if scope.dev.drop_transaction(tx_hash) else None


def _hardhat_drop_transaction(scope: Scope, tx_hash: Hash32) -> Any:
    """hardhat's answer: whether it was dropped."""
    return scope.dev.drop_transaction(tx_hash)


ADDRESS = Param("address", parse_address)
TX_HASH = Param("hash", parse_hash_param)
ON = Param("enabled", parse_bool)


ROWS = (
    # anvil's eth_sendUnsignedTransaction: a transaction object sent as eth_sendTransaction
    # sends it (viem's test client sends an impersonated account's transactions so)
    *(control(name, _send_transaction, Param("transaction", parse_call_request))
      for name in ("eth_sendTransaction", "eth_sendUnsignedTransaction")),
    control("evm_mine", _mine, opt("options", _mine_options, (None, 1))),
    control("evm_snapshot", _snapshot),
    control("evm_revert", _revert, Param("id", quantity_or_number("snapshot id"))),
    control("evm_increaseTime", _increase_time, Param("seconds", quantity_or_number("seconds"))),
    control("evm_setNextBlockTimestamp", chain_call("set_next_block_timestamp"),
               Param("timestamp", quantity_or_number("timestamp"))),
    control("evm_setAutomine", _set_automine, ON),
    control("anvil_setAutomine", _set_automine, ON),
    control("anvil_getAutomine", _get_automine),
    control("hardhat_getAutomine", _get_automine),
    *anvil_and_hardhat("setBalance", chain_call("set_balance"), ADDRESS,
           Param("balance", lambda value: parse_quantity(value, "balance"))),
    *anvil_and_hardhat("setCode", chain_call("set_code"), ADDRESS,
           Param("code", lambda value: parse_data(value, "code"))),
    *anvil_and_hardhat("setStorageAt", chain_call("set_storage", True), ADDRESS, Param("slot", _word("slot")),
           Param("value", _word("value"))),
    *anvil_and_hardhat("setNonce", chain_call("set_nonce"), ADDRESS,
           Param("nonce", lambda value: parse_quantity(value, "nonce", bits=64))),
    *anvil_and_hardhat("impersonateAccount", chain_call("impersonate"), ADDRESS),
    *anvil_and_hardhat("stopImpersonatingAccount", chain_call("stop_impersonating"), ADDRESS),
    *anvil_and_hardhat("mine", _mine_many, opt("blocks", quantity_or_number("blocks"), 1),
           opt("interval", quantity_or_number("interval"))),
    control("anvil_dropTransaction", _drop_transaction, TX_HASH),
    control("hardhat_dropTransaction", _hardhat_drop_transaction, TX_HASH),
    control("anvil_dropAllTransactions", chain_call("drop_all_transactions")),
)
