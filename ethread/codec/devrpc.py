"""The JSON-RPC methods of a network backed by a dev chain: sending (eth_sendTransaction,
eth_sendRawTransaction) and the test controls the ecosystem calls by these names (evm_*,
anvil_*, and hardhat_* aliases). A network with no dev chain answers each of them -32601, as
a node without them does. (eth_accounts lists the context's accounts, which a dev network
fills with its dev accounts.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..errors import InvalidParams, MethodNotFound
from ..models import Address, CallRequest, Hash32, Header
from .devanvil import ANVIL_METHODS, AnvilChain
from .devfork import ForkedChain
from .devpending import POOL_CONTROLS, PendingChain
from .devsign import SIGNING_METHODS, SigningChain
from .hex import parse_address, parse_data, parse_quantity, parse_storage_key
from .params import parse_bool, parse_call_request
from .txpool_rpc import TxPoolService


class DevControls(SigningChain, AnvilChain, PendingChain, ForkedChain, Protocol):
    """The dev methods' (anvil_*, evm_*, eth_sendTransaction and friends) view of a dev chain:
    what they read and control (:class:`ethread.devchain.DevChain` is one)."""

    automine: bool

    @property
    def served_pool(self) -> TxPoolService:
        """Its pool as txpool_* and testing_buildBlockV1 read it."""
        ...

    @property
    def head(self) -> Header: ...

    def send_request(self, request: CallRequest) -> Hash32: ...

    def submit(self, tx: bytes) -> Hash32: ...

    def mine(self, *, timestamp: int | None = None) -> object: ...

    def snapshot(self) -> int: ...

    def revert(self, snapshot_id: int) -> bool: ...

    def increase_time(self, seconds: int) -> int: ...

    def set_next_block_timestamp(self, timestamp: int) -> None: ...

    def set_balance(self, address: Address, balance: int) -> object: ...

    def set_code(self, address: Address, code: bytes) -> object: ...

    def set_storage(self, address: Address, slot: int, value: int) -> object: ...

    def set_nonce(self, address: Address, nonce: int) -> object: ...

    def impersonate(self, address: Address) -> None: ...

    def stop_impersonating(self, address: Address) -> None: ...


DevHandler = Callable[[DevControls, list[Any]], Any]
MAX_MINE_BLOCKS = 10_000
"""The most blocks one anvil_mine/hardhat_mine call makes."""


def _quantity_or_number(value: Any, what: str) -> int:
    """Test tools send these as hex strings or as JSON numbers."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise InvalidParams(f"{what}: must not be negative")
        return value
    return parse_quantity(value, what, bits=64)


def _word(value: Any, what: str) -> int:
    """A storage value: hex of at most 32 bytes (leading zeros allowed, as tools pad them)."""
    return int.from_bytes(parse_storage_key(value, what), "big")


def _send_transaction(chain: DevControls, params: list[Any]) -> Any:
    return "0x" + chain.send_request(parse_call_request(params[0])).hex()


def _send_raw_transaction(chain: DevControls, params: list[Any]) -> Any:
    return "0x" + chain.submit(parse_data(params[0], "raw transaction")).hex()


def _mine(chain: DevControls, params: list[Any]) -> Any:
    """evm_mine [timestamp], or anvil's options object {"timestamp": t, "blocks": n}: the
    first block at ``t`` (when given), the others at the chain's usual interval."""
    option = params[0] if params else None
    blocks = 1
    if isinstance(option, dict):
        unknown = set(option) - {"timestamp", "blocks"}
        if unknown:
            raise InvalidParams(f"mine options: unknown field {sorted(unknown)[0]}")
        blocks = _quantity_or_number(option["blocks"], "blocks") \
            if option.get("blocks") is not None else 1
        if blocks > MAX_MINE_BLOCKS:
            raise InvalidParams(f"blocks: at most {MAX_MINE_BLOCKS} per call")
        option = option.get("timestamp")
    timestamp = _quantity_or_number(option, "timestamp") if option is not None else None
    for index in range(blocks):
        chain.mine(timestamp=timestamp if index == 0 else None)
    return "0x0"


def _mine_many(chain: DevControls, params: list[Any]) -> Any:
    """anvil_mine / hardhat_mine: ``count`` blocks (default 1), ``interval`` seconds apart."""
    count = _quantity_or_number(params[0], "blocks") if params and params[0] is not None else 1
    interval = _quantity_or_number(params[1], "interval") if len(params) > 1 and params[1] is not None else None
    if count > MAX_MINE_BLOCKS:
        raise InvalidParams(f"blocks: at most {MAX_MINE_BLOCKS} per call")
    for _ in range(count):  # (an interval of 0, as viem's test client sends: the chain's clock)
        chain.mine(timestamp=chain.head.timestamp + interval if interval else None)
    return None


def _snapshot(chain: DevControls, params: list[Any]) -> Any:
    return hex(chain.snapshot())


def _revert(chain: DevControls, params: list[Any]) -> Any:
    return chain.revert(_quantity_or_number(params[0], "snapshot id"))


def _increase_time(chain: DevControls, params: list[Any]) -> Any:
    return chain.increase_time(_quantity_or_number(params[0], "seconds"))


def _set_next_block_timestamp(chain: DevControls, params: list[Any]) -> Any:
    chain.set_next_block_timestamp(_quantity_or_number(params[0], "timestamp"))
    return None


def _set_balance(chain: DevControls, params: list[Any]) -> Any:
    chain.set_balance(parse_address(params[0]), parse_quantity(params[1], "balance"))
    return None


def _set_code(chain: DevControls, params: list[Any]) -> Any:
    chain.set_code(parse_address(params[0]), parse_data(params[1], "code"))
    return None


def _set_storage_at(chain: DevControls, params: list[Any]) -> Any:
    chain.set_storage(parse_address(params[0]), _word(params[1], "slot"), _word(params[2], "value"))
    return True


def _set_nonce(chain: DevControls, params: list[Any]) -> Any:
    chain.set_nonce(parse_address(params[0]), parse_quantity(params[1], "nonce", bits=64))
    return None


def _impersonate(chain: DevControls, params: list[Any]) -> Any:
    chain.impersonate(parse_address(params[0]))
    return None


def _stop_impersonating(chain: DevControls, params: list[Any]) -> Any:
    chain.stop_impersonating(parse_address(params[0]))
    return None


def _set_automine(chain: DevControls, params: list[Any]) -> Any:
    chain.automine = parse_bool(params[0])
    return None


def _get_automine(chain: DevControls, params: list[Any]) -> Any:
    return chain.automine


# name -> (handler, required params, optional params)
DEV_METHODS: dict[str, tuple[DevHandler, int, int]] = {
    "eth_sendTransaction": (_send_transaction, 1, 0),
    # anvil's: a transaction object sent as eth_sendTransaction sends it (viem's test client
    # sends an impersonated account's transactions so)
    "eth_sendUnsignedTransaction": (_send_transaction, 1, 0),
    "eth_sendRawTransaction": (_send_raw_transaction, 1, 0),
    "evm_mine": (_mine, 0, 1),
    "evm_snapshot": (_snapshot, 0, 0),
    "evm_revert": (_revert, 1, 0),
    "evm_increaseTime": (_increase_time, 1, 0),
    "evm_setNextBlockTimestamp": (_set_next_block_timestamp, 1, 0),
    "evm_setAutomine": (_set_automine, 1, 0),
}
for _prefix in ("anvil_", "hardhat_"):
    DEV_METHODS.update({
        _prefix + "setBalance": (_set_balance, 2, 0),
        _prefix + "setCode": (_set_code, 2, 0),
        _prefix + "setStorageAt": (_set_storage_at, 3, 0),
        _prefix + "setNonce": (_set_nonce, 2, 0),
        _prefix + "impersonateAccount": (_impersonate, 1, 0),
        _prefix + "stopImpersonatingAccount": (_stop_impersonating, 1, 0),
        _prefix + "mine": (_mine_many, 0, 2),
    })
DEV_METHODS.update(SIGNING_METHODS)
DEV_METHODS.update(ANVIL_METHODS)
DEV_METHODS.update(POOL_CONTROLS)
DEV_METHODS["anvil_setAutomine"] = (_set_automine, 1, 0)
DEV_METHODS["anvil_getAutomine"] = (_get_automine, 0, 0)
DEV_METHODS["hardhat_getAutomine"] = (_get_automine, 0, 0)


def not_available(method: str) -> MethodNotFound:
    """The -32601 error geth gives for a method it does not offer."""
    return MethodNotFound(f"the method {method} does not exist/is not available")


__all__ = ["DEV_METHODS", "not_available"]
