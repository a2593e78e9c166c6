"""Signing for the dev accounts beyond transactions: eth_sign and personal_sign (EIP-191's
"Ethereum Signed Message" prefix) and EIP-712 typed data (eth_signTypedData_v4). eth-account
does the hashing and the cryptography; the dev chain only picks the key.

Signatures are 65 bytes, r || s || v with v 27 or 28, as geth, anvil and hardhat return them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InvalidParams
from .signing import DevAccount


class NoSigner(InvalidParams):
    """The address is not one whose key the chain holds (anvil's -32602 and words; an
    impersonated account has no key either)."""

    def __init__(self) -> None:
        super().__init__("No Signer available")


def sign_message(account: DevAccount, message: bytes) -> bytes:
    """eth_sign / personal_sign: the signature of keccak("\\x19Ethereum Signed Message:\\n" +
    len(message) + message)."""
    from eth_account.messages import encode_defunct

    signed = account.local_account.sign_message(encode_defunct(primitive=message))
    return bytes(signed.signature)


def sign_typed_data(account: DevAccount, typed_data: Mapping[str, Any]) -> bytes:
    """eth_signTypedData_v4: the signature of an EIP-712 document (types, primaryType, domain,
    message). A document eth-account cannot encode raises :class:`InvalidParams` with its
    words (a missing type, an array of the wrong length, a value of the wrong type)."""
    from eth_account.messages import encode_typed_data

    if not isinstance(typed_data, Mapping):
        raise InvalidParams("typed data: expected an object with types, primaryType, domain "
                            "and message")
    try:
        encoded = encode_typed_data(full_message=dict(typed_data))
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as exc:
        raise InvalidParams(f"typed data: {_words(exc)}") from None
    signed = account.local_account.sign_message(encoded)
    return bytes(signed.signature)


def _words(exc: BaseException) -> str:
    text = str(exc)
    if isinstance(exc, KeyError):
        return f"missing field {text}"
    return text or type(exc).__name__
