"""A node in this process for a fork to read: a dev chain answering through ethread's own
JSON-RPC, as a node over HTTP would (with a hook to alter its answers and a record of what it
was asked); and the calls the fork's tests make of a node over HTTP and of a forked chain."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import ethread
from ethread.devchain import DevChain, contracts
from ethread.devchain.fork.remote import RemoteError
from ethread.web3 import EthreadProvider
from tests.support.server_harness import post

Alter = Callable[[str, list[Any], Any], Any]
"""(method, params, result) -> the result the node answers instead."""


def remote_call(url: str, method: str, *params: Any) -> Any:
    answer = post(url, {"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)})[2]
    assert "error" not in answer, answer
    return answer["result"]


def local_call(chain: DevChain, method: str, *params: Any) -> Any:
    answer = EthreadProvider(chain).make_request(method, list(params))  # type: ignore[arg-type]
    assert "error" not in answer, answer
    return answer["result"]


class InProcessNode:
    """A :class:`~ethread.devchain.fork.remote.RemoteNode` stand-in: ``call`` and ``batch``
    answered by ``chain`` through :class:`~ethread.web3.EthreadProvider`."""

    shown_url = "in-process"

    def __init__(self, chain: DevChain, alter: Alter | None = None) -> None:
        self.chain = chain
        self.alter = alter
        self.asked: list[str] = []
        self._provider = EthreadProvider(chain)

    def call(self, method: str, params: Sequence[Any] = ()) -> Any:
        return self.batch([(method, params)])[0]

    def batch(self, calls: Sequence[tuple[str, Sequence[Any]]]) -> list[Any]:
        results = []
        for method, params in calls:
            self.asked.append(method)
            answer = self._provider.make_request(method, list(params))  # type: ignore[arg-type]
            if "error" in answer:
                raise RemoteError(f"the forked node answered {method} with {answer['error']}")
            result = copy.deepcopy(answer["result"])
            if self.alter is not None:
                result = self.alter(method, list(params), result)
            results.append(result)
        return results


class NodeChain:
    """The chain the in-process node serves: a storage contract with slots 1..3 set, a
    funded account, a few blocks."""

    def __init__(self) -> None:
        self.chain = DevChain(ethread.MemoryBackend(), accounts=2)
        owner = self.chain.accounts[0]
        self.storage = self.chain.deploy_runtime(owner, contracts.STORAGE)
        self.chain.mine()
        self.chain.send(owner, self.storage, data=contracts.store_calldata({1: 11, 2: 22, 3: 33}))
        self.rich = b"\x42" * 20
        self.chain.fund(self.rich, 10**18)
        self.chain.mine()
        self.chain.mine()
