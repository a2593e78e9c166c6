"""Signing for clients on a dev chain: eth_sign, eth_signTypedData_v4, eth_signTransaction."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models import Address, CallRequest, Transaction
from .inputs import as_bytes
from .messages import NoSigner, sign_message, sign_typed_data
from .requests import transaction_for
from .sending import TransactionSending
from .signing import DevAccount


class ClientSigning(TransactionSending):
    """Signatures the dev accounts make for clients (impersonated accounts have no key)."""

    def signer(self, address: Address | str) -> DevAccount:
        """The dev account that signs for ``address`` (else :class:`~.messages.NoSigner`)."""
        account = self.account(address)
        if account is None:
            raise NoSigner()
        return account

    def sign_message(self, address: Address | str, message: bytes | str) -> bytes:
        """eth_sign: ``address``'s EIP-191 signature of ``message`` (65 bytes)."""
        return sign_message(self.signer(address), as_bytes(message, "message"))

    def sign_typed_data(self, address: Address | str, typed_data: Mapping[str, Any]) -> bytes:
        """eth_signTypedData_v4: ``address``'s EIP-712 signature of ``typed_data``."""
        return sign_typed_data(self.signer(address), typed_data)

    def sign_request(self, request: CallRequest) -> Transaction:
        """eth_signTransaction: what eth_sendTransaction would send for ``request``, not sent."""
        if request.sender is not None:
            self.signer(request.sender)
        with self._lock:
            return transaction_for(self, request)
