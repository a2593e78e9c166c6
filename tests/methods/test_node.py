"""The node's own answers (``ethread.methods.node``): accounts as a hook of the dev chain,
syncing, listening, peers, web3_sha3."""

from __future__ import annotations

from eth_utils import keccak

import ethread
from ethread.devchain import DevChain
from ethread.rpc.context import Context
from ethread.rpc.dispatcher import Dispatcher
from tests.support.rpc_cases import error, result


def test_accounts_are_a_hook_for_the_dev_chain(dev: DevChain) -> None:
    assert result(dev.backend, "eth_accounts") == []
    addresses = tuple(a.address for a in dev.accounts[:2])
    dispatcher = Dispatcher(dev.backend, Context(accounts=addresses))
    assert result(None, "eth_accounts", dispatcher=dispatcher) == ["0x" + a.hex() for a in addresses]


def test_node_answers(rpc_compat_memory: ethread.MemoryBackend) -> None:
    assert result(rpc_compat_memory, "eth_syncing") is False
    assert result(rpc_compat_memory, "net_listening") is True
    assert result(rpc_compat_memory, "net_peerCount") == "0x0"
    assert result(rpc_compat_memory, "web3_sha3", "0x68656c6c6f20776f726c64") == \
        "0x47173285a8d7341e5e972fc677286384f802f8ef42a5ec5f03bbfa254cb01fad"
    assert result(rpc_compat_memory, "web3_sha3", "0x") == "0x" + keccak(b"").hex()
    assert error(rpc_compat_memory, "web3_sha3", "68") == (
        -32602, "invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go "
                "value of type hexutil.Bytes")
