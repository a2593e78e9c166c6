"""anvil's chain controls beyond sending and snapshots, on a dev chain's network: resetting
(a ``forking`` object is refused, -32602), the next blocks' gas limit, base fee, coinbase and
chain id, ``anvil_nodeInfo`` and ``anvil_metadata`` in anvil's shapes, and its state files
(:mod:`ethread.devchain.state_file`; dumped gzipped, as hex)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..codec.client import CLIENT_VERSION
from ..codec.hex import parse_address, parse_data
from ..devchain.fork.source import ForkPoint
from ..devchain.payload import MIN_GAS_LIMIT
from ..errors import InvalidParams
from ..models import Address
from .dev import chain_call, quantity_or_number
from .row import Param, Scope, anvil_and_hardhat, control, opt

DEFAULT_TIP = 10**9
"""The priority fee anvil adds to the base fee in the gas price it reports (1 gwei)."""

INSTANCE_ID = "0x" + os.urandom(32).hex()
"""anvil_metadata's instanceId: one per process, as anvil draws one per instance."""


def _number(what: str) -> Callable[[Any], int]:
    return quantity_or_number(what, bits=256)


def _forking(options: Any) -> None:
    if options not in (None, {}) and not (isinstance(options, dict)
                                           and options.get("forking") in (None, {})):
        raise InvalidParams("anvil_reset: forking is not available on this network")


def _reset(scope: Scope, options: None) -> Any:
    scope.dev.reset()


def _set_block_gas_limit(scope: Scope, gas_limit: int) -> Any:
    if not MIN_GAS_LIMIT <= gas_limit < 1 << 63:
        raise InvalidParams(f"gas limit: must be between {MIN_GAS_LIMIT} and 2^63 - 1")
    scope.dev.set_gas_limit(gas_limit)
    return True


def _set_coinbase(scope: Scope, coinbase: Address) -> Any:
    scope.dev.coinbase = coinbase


def _set_next_base_fee(scope: Scope, base_fee: int) -> Any:
    chain = scope.dev
    if chain.next_base_fee() is None:
        raise InvalidParams("base fee: the next block has none (it is before London)")
    chain.set_next_base_fee(base_fee)


def _set_chain_id(scope: Scope, chain_id: int) -> Any:
    if not 0 < chain_id < 1 << 64:
        raise InvalidParams("chain id: must be between 1 and 2^64 - 1")
    scope.dev.set_chain_id(chain_id)


def _fork_name(name: str) -> str:
    """anvil names hard forks capitalized ("Prague", "Osaka")."""
    return "".join(part.capitalize() for part in name.split("_"))


def _node_info(scope: Scope) -> Any:
    chain = scope.dev
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


def _fork_config(origin: ForkPoint | None) -> dict[str, Any]:
    if origin is None:
        return {"forkUrl": None, "forkBlockNumber": None, "forkRetryBackoff": None}
    return {"forkUrl": origin.url, "forkBlockNumber": origin.header.number,
            "forkRetryBackoff": None}


def _metadata(scope: Scope) -> Any:
    chain = scope.dev
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


def _dump_state(scope: Scope) -> Any:
    return "0x" + scope.dev.dump_state(compress=True).hex()


ROWS = (
    control("evm_setBlockGasLimit", _set_block_gas_limit, Param("gasLimit", _number("gas limit"))),
    control("anvil_setChainId", _set_chain_id, Param("chainId", _number("chain id"))),
    control("anvil_nodeInfo", _node_info),
    control("anvil_dumpState", _dump_state),
    control("anvil_loadState", chain_call("load_state", True),
            Param("state", lambda value: parse_data(value, "state"))),
    *anvil_and_hardhat("metadata", _metadata),
    *anvil_and_hardhat("reset", _reset, opt("options", _forking)),
    *anvil_and_hardhat("setCoinbase", _set_coinbase, Param("address", parse_address)),
    *anvil_and_hardhat("setNextBlockBaseFeePerGas", _set_next_base_fee, Param("baseFee", _number("base fee"))),
)
