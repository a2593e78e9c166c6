"""The eth_call chain of bench_load.py and bench_workers.py: a dev chain with the storage
contract (:data:`ethread.devchain.contracts.STORAGE`) deployed and 64 of its slots set, so that
a call to it runs real code in py-evm."""

from __future__ import annotations

from ethread.backend import WritableBackend
from ethread.devchain import DevChain, contracts


def calls_chain(backend: WritableBackend) -> bytes:
    """The chain in ``backend``; the contract's address."""
    chain = DevChain(backend)
    storage = chain.deploy_runtime(chain.accounts[0], contracts.STORAGE)
    chain.mine()
    chain.send(chain.accounts[1], storage,
               data=contracts.store_calldata({slot: slot * 7 + 1 for slot in range(64)}))
    chain.mine()
    return storage
