"""anvil's chain controls beyond sending and snapshots, on a dev chain's network: resetting,
the next blocks' gas limit, base fee, coinbase and chain id, what anvil reports of its node,
and its state files.

- ``anvil_reset`` (``hardhat_reset``): back to genesis. A ``forking`` object is refused until
  the dev chain can fork (-32602);
- ``evm_setBlockGasLimit gas``, ``anvil_setCoinbase address`` (``hardhat_setCoinbase``),
  ``anvil_setNextBlockBaseFeePerGas fee`` (``hardhat_setNextBlockBaseFeePerGas``),
  ``anvil_setChainId id``;
- ``anvil_nodeInfo`` and ``anvil_metadata`` (``hardhat_metadata``) in anvil's shapes;
- ``anvil_dumpState`` (the state gzipped, as hex) and ``anvil_loadState hex`` (gzipped or plain
  JSON; see :mod:`ethread.devchain.state_file`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ..errors import InvalidParams
from ..models import Address, Block, Header
from .client import CLIENT_VERSION
from .hex import parse_address, parse_data, parse_quantity

DEFAULT_TIP = 10**9
"""The priority fee anvil adds to the base fee in the gas price it reports (1 gwei)."""


class ForkedFrom(Protocol):
    """Where a forked dev chain's state comes from (:class:`ethread.devchain.fork.ForkSource`)."""

    @property
    def url(self) -> str: ...

    @property
    def chain_id(self) -> int: ...

    @property
    def header(self) -> Header: ...


class AnvilChain(Protocol):
    """What these controls ask of a dev chain (:class:`ethread.devchain.DevChain` is one)."""

    chain_id: int
    coinbase: Address

    @property
    def head(self) -> Header:
        """The header of the latest block."""
        ...

    @property
    def snapshots(self) -> Mapping[int, int]:
        """The live snapshot ids, each with the block number a revert to it returns to."""
        ...

    def block(self, number: int) -> Block:
        """The canonical block at ``number``."""
        ...

    def next_fork(self) -> str:
        """The name of the fork the next block will run under."""
        ...

    def next_base_fee(self) -> int | None:
        """The next block's base fee, or None when that block is before London."""
        ...

    def next_gas_limit(self) -> int:
        """The next block's gas limit."""
        ...

    def reset(self) -> None:
        """Go back to the chain as it was made, dropping every block above its first."""
        ...

    def set_gas_limit(self, gas_limit: int) -> None:
        """Give the next blocks this gas limit."""
        ...

    def set_next_base_fee(self, base_fee: int) -> None:
        """Give the next block this base fee; later ones follow from it."""
        ...

    def set_chain_id(self, chain_id: int) -> None:
        """Sign and check transactions for this chain id from now on."""
        ...

    def dump_state(self, *, compress: bool = False) -> bytes:
        """The head's state as an anvil state file (JSON bytes, gzipped when ``compress``)."""
        ...

    @property
    def fork_origin(self) -> ForkedFrom | None:
        """The remote node and block a forked chain continues from (None if not forked)."""
        ...

    def load_state(self, state: bytes | str | Mapping[str, Any]) -> object:
        """Write the accounts of an anvil state file into the chain."""
        ...


INSTANCE_ID = "0x" + os.urandom(32).hex()
"""anvil_metadata's instanceId: one per process, as anvil draws one per instance."""


def _number(value: Any, what: str) -> int:
    """Tools send these as hex strings or JSON numbers."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise InvalidParams(f"{what}: must not be negative")
        return value
    return parse_quantity(value, what)


def _reset(chain: AnvilChain, params: list[Any]) -> Any:
    options = params[0] if params else None
    if options not in (None, {}) and not (isinstance(options, dict)
                                           and options.get("forking") in (None, {})):
        raise InvalidParams("anvil_reset: forking is not available on this network")
    chain.reset()
    return None


MIN_GAS_LIMIT = 5000
"""The protocol's smallest block gas limit."""


def _set_block_gas_limit(chain: AnvilChain, params: list[Any]) -> Any:
    gas_limit = _number(params[0], "gas limit")
    if not MIN_GAS_LIMIT <= gas_limit < 1 << 63:
        raise InvalidParams(f"gas limit: must be between {MIN_GAS_LIMIT} and 2^63 - 1")
    chain.set_gas_limit(gas_limit)
    return True


def _set_coinbase(chain: AnvilChain, params: list[Any]) -> Any:
    chain.coinbase = parse_address(params[0])
    return None


def _set_next_base_fee(chain: AnvilChain, params: list[Any]) -> Any:
    if chain.next_base_fee() is None:
        raise InvalidParams("base fee: the next block has none (it is before London)")
    chain.set_next_base_fee(_number(params[0], "base fee"))
    return None


def _set_chain_id(chain: AnvilChain, params: list[Any]) -> Any:
    chain_id = _number(params[0], "chain id")
    if not 0 < chain_id < 1 << 64:
        raise InvalidParams("chain id: must be between 1 and 2^64 - 1")
    chain.set_chain_id(chain_id)
    return None


def _fork_name(name: str) -> str:
    """anvil names hard forks capitalized ("Prague", "Osaka")."""
    return "".join(part.capitalize() for part in name.split("_"))


def _node_info(chain: AnvilChain, params: list[Any]) -> Any:
    head = chain.head
    base_fee = chain.next_base_fee()
    return {
        "currentBlockNumber": hex(head.number),
        "currentBlockTimestamp": head.timestamp,
        "currentBlockHash": "0x" + head.hash.hex(),
        "hardFork": _fork_name(chain.next_fork()),
        "transactionOrder": "fifo",
        "environment": {
            "baseFee": hex(base_fee or 0),
            "chainId": chain.chain_id,
            "gasLimit": hex(chain.next_gas_limit()),
            "gasPrice": hex((base_fee or 0) + DEFAULT_TIP),
        },
        "forkConfig": _fork_config(chain.fork_origin),
    }


def _fork_config(origin: ForkedFrom | None) -> dict[str, Any]:
    if origin is None:
        return {"forkUrl": None, "forkBlockNumber": None, "forkRetryBackoff": None}
    return {"forkUrl": origin.url, "forkBlockNumber": origin.header.number,
            "forkRetryBackoff": None}


def _metadata(chain: AnvilChain, params: list[Any]) -> Any:
    head = chain.head
    origin = chain.fork_origin
    snapshots = {}
    for snapshot_id, number in chain.snapshots.items():
        snapshots[str(snapshot_id)] = [number, "0x" + chain.block(number).hash.hex()]
    return {
        "clientVersion": CLIENT_VERSION,
        "chainId": chain.chain_id,
        "instanceId": INSTANCE_ID,
        "latestBlockNumber": head.number,
        "latestBlockHash": "0x" + head.hash.hex(),
        "forkedNetwork": None if origin is None else {
            "chainId": origin.chain_id, "forkBlockNumber": origin.header.number,
            "forkBlockHash": "0x" + origin.header.hash.hex()},
        "snapshots": snapshots,
    }


def _dump_state(chain: AnvilChain, params: list[Any]) -> Any:
    return "0x" + chain.dump_state(compress=True).hex()


def _load_state(chain: AnvilChain, params: list[Any]) -> Any:
    chain.load_state(parse_data(params[0], "state"))
    return True


AnvilHandler = Callable[[AnvilChain, list[Any]], Any]

ANVIL_METHODS: dict[str, tuple[AnvilHandler, int, int]] = {
    "evm_setBlockGasLimit": (_set_block_gas_limit, 1, 0),
    "anvil_setChainId": (_set_chain_id, 1, 0),
    "anvil_nodeInfo": (_node_info, 0, 0),
    "anvil_dumpState": (_dump_state, 0, 0),
    "anvil_loadState": (_load_state, 1, 0),
    "anvil_metadata": (_metadata, 0, 0),
    "hardhat_metadata": (_metadata, 0, 0),
}
"""name -> (handler, required params, optional params)."""
for _prefix in ("anvil_", "hardhat_"):
    ANVIL_METHODS.update({
        _prefix + "reset": (_reset, 0, 1),
        _prefix + "setCoinbase": (_set_coinbase, 1, 0),
        _prefix + "setNextBlockBaseFeePerGas": (_set_next_base_fee, 1, 0),
    })

__all__ = ["ANVIL_METHODS", "AnvilChain"]
