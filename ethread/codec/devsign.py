"""Signing on a dev chain's network, for the accounts whose keys it holds: eth_sign and
personal_sign (EIP-191), eth_signTypedData_v4 (EIP-712) and eth_signTransaction.

- ``eth_sign [address, data]`` and ``personal_sign [data, address]``: the 65-byte signature;
- ``eth_signTypedData_v4 [address, typedData]``, and ``eth_signTypedData`` the same way (as
  hardhat answers it; web3.py's ``sign_typed_data`` calls that name); the typed data as an
  object or as its JSON text (MetaMask sends text);
- ``eth_signTransaction [tx]``: the transaction eth_sendTransaction would send, signed and not
  sent, as geth answers it: ``{"raw": ..., "tx": {...}}`` (anvil answers only the raw bytes;
  web3.py reads geth's object).

An address the chain holds no key for (impersonated ones included) is -32602 "No Signer
available", as in anvil."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import orjson

from ..errors import InvalidParams
from ..models import Address, CallRequest, Transaction
from ..rlpcodec.transactions import encode_transaction, transaction_hash
from .hex import parse_address, parse_data
from .params import parse_call_request
from .serialize import to_json


class SigningChain(Protocol):
    """What signing asks of a dev chain (:class:`ethread.devchain.DevChain` is one)."""

    def sign_message(self, address: Address, message: bytes) -> bytes:
        """``address``'s EIP-191 signature of ``message``, 65 bytes."""
        ...

    def sign_typed_data(self, address: Address, typed_data: Mapping[str, Any]) -> bytes:
        """``address``'s EIP-712 signature of ``typed_data``, 65 bytes."""
        ...

    def sign_request(self, request: CallRequest) -> Transaction:
        """The transaction eth_sendTransaction would send for ``request``, signed, not sent."""
        ...


def _signature(raw: bytes) -> str:
    return "0x" + raw.hex()


def _eth_sign(chain: SigningChain, params: list[Any]) -> Any:
    return _signature(chain.sign_message(parse_address(params[0]), parse_data(params[1], "data")))


def _personal_sign(chain: SigningChain, params: list[Any]) -> Any:
    return _signature(chain.sign_message(parse_address(params[1]), parse_data(params[0], "data")))


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


def _sign_typed_data(chain: SigningChain, params: list[Any]) -> Any:
    return _signature(chain.sign_typed_data(parse_address(params[0]), _typed_data(params[1])))


def _sign_transaction(chain: SigningChain, params: list[Any]) -> Any:
    request = parse_call_request(params[0])
    if request.sender is None:
        raise InvalidParams("from: missing (the account to sign with)")
    tx = chain.sign_request(request)
    tx_json = to_json(tx)
    tx_json["hash"] = "0x" + transaction_hash(tx).hex()
    return {"raw": "0x" + encode_transaction(tx).hex(), "tx": tx_json}


SigningHandler = Callable[[SigningChain, list[Any]], Any]

SIGNING_METHODS: dict[str, tuple[SigningHandler, int, int]] = {
    "eth_sign": (_eth_sign, 2, 0),
    "personal_sign": (_personal_sign, 2, 0),
    "eth_signTypedData": (_sign_typed_data, 2, 0),
    "eth_signTypedData_v4": (_sign_typed_data, 2, 0),
    "eth_signTransaction": (_sign_transaction, 1, 0),
}
"""name -> (handler, required params, optional params)."""

__all__ = ["SIGNING_METHODS", "SigningChain"]
