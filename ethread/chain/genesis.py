"""Read a geth-style ``genesis.json``: the chain config, the genesis header and the allocation."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eth_utils import decode_hex, to_canonical_address

from ..errors import GenesisError
from ..forks import ChainConfig

AccountState = dict[str, Any]
"""py-evm's genesis account form: balance, nonce, code, storage."""


@dataclass(frozen=True)
class Genesis:
    """A parsed genesis file: fork schedule, genesis header fields and allocated accounts."""

    config: ChainConfig
    header_params: dict[str, Any]
    """py-evm ``create_genesis_header`` keyword arguments."""
    alloc: dict[bytes, AccountState]


def _quantity(value: Any, name: str) -> int:
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value, 16) if value.lower().startswith("0x") else int(value)
        except ValueError:
            pass
    raise GenesisError(f"genesis {name}: not a number: {value!r}")


def _data(value: Any, name: str) -> bytes:
    if not isinstance(value, str):
        raise GenesisError(f"genesis {name}: not a hex string: {value!r}")
    try:
        return decode_hex(value)
    except ValueError:
        raise GenesisError(f"genesis {name}: not a hex string: {value!r}") from None


def parse_genesis(document: dict[str, Any]) -> Genesis:
    """Parse a genesis document loaded from JSON (:class:`~ethread.errors.GenesisError` if malformed)."""
    if not isinstance(document, dict):
        raise GenesisError("genesis must be a JSON object")
    config = ChainConfig.from_genesis_config(document.get("config", {}))
    params: dict[str, Any] = {
        "difficulty": _quantity(document.get("difficulty", "0x0"), "difficulty"),
        "extra_data": _data(document.get("extraData", "0x"), "extraData"),
        "gas_limit": _quantity(document.get("gasLimit", "0x0"), "gasLimit"),
        "nonce": _quantity(document.get("nonce", "0x0"), "nonce").to_bytes(8, "big"),
        "mix_hash": _data(document.get("mixHash", "0x" + "00" * 32), "mixHash"),
        "timestamp": _quantity(document.get("timestamp", "0x0"), "timestamp"),
        "coinbase": _data(document.get("coinbase", "0x" + "00" * 20), "coinbase"),
    }
    for key, name in (("baseFeePerGas", "base_fee_per_gas"), ("excessBlobGas", "excess_blob_gas"),
                      ("blobGasUsed", "blob_gas_used")):
        if document.get(key) is not None:
            params[name] = _quantity(document[key], key)
    if config.rules(0, params["timestamp"]).beacon_root:
        # EIP-4788: a genesis has no parent beacon block; geth hashes the zero root, where
        # py-evm would default to the empty-trie root.
        params["parent_beacon_block_root"] = _data(
            document.get("parentBeaconBlockRoot", "0x" + "00" * 32), "parentBeaconBlockRoot")
    alloc: dict[bytes, AccountState] = {}
    raw_alloc = document.get("alloc", {})
    if not isinstance(raw_alloc, dict):
        raise GenesisError("genesis alloc must be an object")
    for raw_address, account in raw_alloc.items():
        try:
            address = to_canonical_address(raw_address if raw_address.startswith("0x")
                                           else "0x" + raw_address)
        except ValueError:
            raise GenesisError(f"genesis alloc: bad address {raw_address!r}") from None
        if not isinstance(account, dict):
            raise GenesisError(f"genesis alloc {raw_address}: not an object")
        storage = account.get("storage") or {}
        alloc[address] = {
            "balance": _quantity(account.get("balance", "0x0"), f"alloc {raw_address} balance"),
            "nonce": _quantity(account.get("nonce", "0x0"), f"alloc {raw_address} nonce"),
            "code": _data(account.get("code", "0x"), f"alloc {raw_address} code"),
            "storage": {
                _quantity(k, "storage key"): _quantity(v, "storage value")
                for k, v in storage.items()
            },
        }
    return Genesis(config=config, header_params=params, alloc=alloc)


def load_genesis(path: str | Path) -> Genesis:
    """Read and parse a geth-style genesis.json file (else :class:`~ethread.errors.GenesisError`)."""
    try:
        document = json.loads(Path(path).read_bytes())
    except OSError as exc:
        raise GenesisError(f"cannot read genesis file {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise GenesisError(f"genesis file {path} is not JSON: {exc}") from None
    return parse_genesis(document)
