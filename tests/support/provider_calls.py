"""JSON-RPC to a dev chain through the in-process web3 provider (``EthreadProvider``), for the
tests of the dev chain's methods: the whole answer, a result that must not fail, an error that
must, and a dev account's checksummed address."""

from __future__ import annotations

from typing import Any

from eth_utils import to_checksum_address

from ethread.devchain import DevChain
from ethread.web3 import EthreadProvider


def rpc(chain: DevChain, method: str, *params: Any) -> dict[str, Any]:
    """The whole answer object (result or error) through the in-process provider."""
    return EthreadProvider(chain).make_request(method, list(params))  # type: ignore[arg-type,return-value]


def ok(chain: DevChain, method: str, *params: Any) -> Any:
    """The result, which must not be an error."""
    answer = rpc(chain, method, *params)
    assert "error" not in answer, answer
    return answer["result"]


def error(chain: DevChain, method: str, *params: Any) -> tuple[int, str]:
    """(code, message) of the error, which the call must answer."""
    answer = rpc(chain, method, *params)
    assert "error" in answer, answer
    return answer["error"]["code"], answer["error"]["message"]


def address_of(chain: DevChain, index: int) -> str:
    """Dev account ``index``, checksummed as clients write it."""
    return to_checksum_address(chain.accounts[index].address)
