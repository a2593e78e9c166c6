"""eth_sign and personal_sign (EIP-191) and eth_signTypedData_v4 (EIP-712) for the dev accounts,
by eth-account. Signatures are 65 bytes, r || s || v with v 27 or 28, as geth and anvil return."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..errors import InvalidParams
from .signing import DevAccount


class NoSigner(InvalidParams):
    """The address is not one whose key the chain holds (anvil's -32602 and words)."""

    def __init__(self) -> None:
        super().__init__("No Signer available")


def sign_message(account: DevAccount, message: bytes) -> bytes:
    """eth_sign / personal_sign: the EIP-191 ("\\x19Ethereum Signed Message:\\n") signature of ``message``."""
    from eth_account.messages import encode_defunct

    signed = account.local_account.sign_message(encode_defunct(primitive=message))
    return bytes(signed.signature)


def sign_typed_data(account: DevAccount, typed_data: Mapping[str, Any]) -> bytes:
    """eth_signTypedData_v4: the signature of an EIP-712 document (else :class:`InvalidParams`)."""
    from eth_abi.exceptions import EncodingError
    from eth_account.messages import encode_typed_data

    if not isinstance(typed_data, Mapping):
        raise InvalidParams("typed data: expected an object with types, primaryType, domain "
                            "and message")
    _check_arrays(typed_data)
    try:
        encoded = encode_typed_data(full_message=dict(typed_data))
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError,
            EncodingError) as exc:
        raise InvalidParams(f"typed data: {_words(exc)}") from None
    signed = account.local_account.sign_message(encoded)
    return bytes(signed.signature)


_ARRAY = re.compile(r"^(.*)\[(\d*)\]$")


def _check_arrays(typed_data: Mapping[str, Any]) -> None:
    """Refuse arrays whose length is not their fixed type's, in anvil's words (eth-account does not)."""
    types = typed_data.get("types")
    if not isinstance(types, Mapping):
        return  # eth-account names what is missing
    message = typed_data.get("message")
    primary = typed_data.get("primaryType")
    if isinstance(primary, str):
        _check_value(types, primary, message, depth=0)
    _check_value(types, "EIP712Domain", typed_data.get("domain"), depth=0)


def _check_value(types: Mapping[str, Any], type_name: str, value: Any, depth: int) -> None:
    if depth > 64:
        raise InvalidParams("typed data: nested too deeply")
    array = _ARRAY.match(type_name)
    if array:
        if not isinstance(value, list):
            return  # eth-account refuses it with its own words
        inner, length = array.group(1), array.group(2)
        if length and int(length) != len(value):
            raise InvalidParams(f"typed data: Expected {length} items for array type "
                                f"{type_name}, got {len(value)} items")
        for item in value:
            _check_value(types, inner, item, depth + 1)
        return
    fields = types.get(type_name)
    if not isinstance(fields, list) or not isinstance(value, Mapping):
        return
    for entry in fields:
        if isinstance(entry, Mapping) and isinstance(entry.get("type"), str):
            _check_value(types, entry["type"], value.get(entry.get("name")), depth + 1)


def _words(exc: BaseException) -> str:
    text = str(exc)
    if isinstance(exc, KeyError):
        return f"missing field {text}"
    return text or type(exc).__name__
