"""eth-tester as bench_testchain.py puts it behind the token suite's provider line (anvil, the
other comparison node, is :class:`benchlib.anvil.Anvil`).

eth-tester through web3.py's ``EthereumTesterProvider`` raises eth-tester's own
``TransactionFailed`` for a revert, with the revert data flattened into a message; a node
answers JSON-RPC error 3 with the data, which web3.py turns into ``ContractLogicError`` or
``ContractCustomError``. :class:`RevertingTesterProvider` answers as a node does, so the same
suite runs on it unchanged; it adds one try/except per request.
"""

from __future__ import annotations

import ast
from typing import Any

from eth_abi import abi
from web3 import EthereumTesterProvider
from web3.types import RPCEndpoint, RPCResponse


class RevertingTesterProvider(EthereumTesterProvider):
    """``EthereumTesterProvider`` answering a revert as a node does: error 3 with its data."""

    def make_request(self, method: RPCEndpoint, params: Any) -> RPCResponse:
        from eth_tester.exceptions import TransactionFailed

        namespace, _, endpoint = method.partition("_")
        delegator = self.api_endpoints.get(namespace, {}).get(endpoint)
        if delegator is None:
            return super().make_request(method, params)
        try:
            result = delegator(self.ethereum_tester, params)
        except TransactionFailed as exc:
            raw = _revert_data(exc)
            message = "execution reverted"
            if raw[:4] == bytes.fromhex("08c379a0"):
                message += ": " + abi.decode(["string"], raw[4:])[0]
            return {"jsonrpc": "2.0", "id": 0,  # type: ignore[typeddict-item]
                    "error": {"code": 3, "message": message, "data": "0x" + raw.hex()}}
        except NotImplementedError:
            return super().make_request(method, params)
        return {"jsonrpc": "2.0", "id": 0, "result": result}  # type: ignore[typeddict-item]


def _revert_data(exc: Exception) -> bytes:
    """The revert payload eth-tester carries: bytes, an exception holding them, or (from
    eth_call) the text of the bytes' repr."""
    raw: Any = exc.args[0] if exc.args else b""
    if isinstance(raw, Exception):
        raw = raw.args[0] if raw.args else b""
    if isinstance(raw, str) and raw.startswith(("b'", 'b"')):
        raw = ast.literal_eval(raw)
    return raw if isinstance(raw, bytes) else b""
