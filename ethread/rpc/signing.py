"""Signing on a dev chain's network, for the accounts whose keys it holds: eth_sign and
personal_sign (EIP-191), eth_signTypedData_v4 (EIP-712) and eth_signTransaction.

``eth_signTypedData`` answers as ``_v4`` (as hardhat; web3.py calls that name), the typed
data an object or its JSON text (MetaMask sends text). ``eth_signTransaction`` answers geth's
``{"raw": ..., "tx": {...}}`` (web3.py reads it; anvil answers only the raw bytes). An address
the chain holds no key for is -32602 "No Signer available", as in anvil."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from ..codec.hex import parse_address, parse_data
from ..codec.params import parse_call_request
from ..codec.serialize import to_json
from ..errors import InvalidParams
from ..models import Address, CallRequest
from ..rlpcodec.transactions import encode_transaction, transaction_hash
from .row import Param, Scope, control


def _signature(raw: bytes) -> str:
    return "0x" + raw.hex()


def _eth_sign(scope: Scope, address: Address, data: bytes) -> Any:
    return _signature(scope.dev.sign_message(address, data))


def _personal_sign(scope: Scope, data: bytes, address: Address) -> Any:
    return _signature(scope.dev.sign_message(address, data))


def _typed_data(value: Any) -> Mapping[str, Any]:
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            raise InvalidParams("typed data: not valid JSON") from None
    if not isinstance(value, dict):
        raise InvalidParams("typed data: expected an object with types, primaryType, domain "
                            "and message")
    return value


def _sign_typed_data(scope: Scope, address: Address, typed_data: Mapping[str, Any]) -> Any:
    return _signature(scope.dev.sign_typed_data(address, typed_data))


def _sign_transaction(scope: Scope, request: CallRequest) -> Any:
    if request.sender is None:
        raise InvalidParams("from: missing (the account to sign with)")
    tx = scope.dev.sign_request(request)
    tx_json = to_json(tx)
    tx_json["hash"] = "0x" + transaction_hash(tx).hex()
    return {"raw": "0x" + encode_transaction(tx).hex(), "tx": tx_json}


ADDRESS = Param("address", parse_address)
DATA = Param("data", lambda value: parse_data(value, "data"))
TYPED_DATA = Param("typedData", _typed_data)

ROWS = (
    control("eth_sign", _eth_sign, ADDRESS, DATA),
    control("personal_sign", _personal_sign, DATA, ADDRESS),
    control("eth_signTypedData", _sign_typed_data, ADDRESS, TYPED_DATA),
    control("eth_signTypedData_v4", _sign_typed_data, ADDRESS, TYPED_DATA),
    control("eth_signTransaction", _sign_transaction, Param("transaction", parse_call_request)),
)
