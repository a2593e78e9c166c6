"""The demo chain ``ethread serve`` shows when given no chain: fifty blocks on
:data:`~ethread.devchain.genesis.RPC_COMPAT_FORKS`, quick to build and rich enough to exercise
every read method: every transaction kind of its forks, logs with 0 to 4 topics, storage writes,
reverts, uncles (to block 35), withdrawals (Shanghai at 39), blobs (Cancun at 42), a delegated
account (Prague at 45); safe one block behind the head, finalized two.
"""

from __future__ import annotations

from dataclasses import dataclass

from eth_utils import keccak

from ..backend import WritableBackend
from ..models import AccessListEntry, Address, Block
from . import contracts
from .builder import DevChain
from .genesis import DEV_CHAIN_ID, GWEI, RPC_COMPAT_FORKS
from .signing import DevAccount, Fees, TxKind, versioned_hash

TICK_TOPIC = keccak(b"Tick(uint256,address)")
"""Topic 0 of the log each :meth:`Demo.next_block` transaction emits."""
DEMO_BLOCKS = 50


@dataclass
class Demo:
    """A demo chain and the addresses of the contracts it deployed."""

    chain: DevChain
    log_emitter: Address
    storage: Address
    reverter: Address | None = None
    env_echo: Address | None = None
    delegated: DevAccount | None = None
    """An account whose code is delegated to the log emitter (EIP-7702)."""

    def next_block(self) -> Block:
        """Mine one block with a transaction that emits a log, and move safe and finalized."""
        chain = self.chain
        number = chain.head.number + 1
        sender = chain.accounts[1 + number % (len(chain.accounts) - 1)]
        topics = [TICK_TOPIC, number.to_bytes(32, "big"), sender.address.rjust(32, b"\x00")]
        chain.send(sender, self.log_emitter,
                   data=contracts.log_calldata(topics, b"tick %d" % number))
        block = chain.mine()
        _move_pointers(chain)
        return block

    def _log(self, sender: DevAccount, topic_count: int, tag: int, *,
             kind: TxKind | None = None, tip: int = GWEI) -> None:
        """Queue a call to the log emitter: ``topic_count`` topics derived from ``tag``."""
        topics = [keccak(b"demo topic %d %d" % (tag, i)) for i in range(topic_count)]
        self.chain.send(sender, self.log_emitter, kind=kind, fees=Fees(max_priority_fee_per_gas=tip),
                        data=contracts.log_calldata(topics, b"demo log %d" % tag))


def demo_chain(backend: WritableBackend, *, chain_id: int = DEV_CHAIN_ID) -> Demo:
    """Build the demo chain (see the module docstring) into an empty ``backend``."""
    chain = DevChain(backend, chain_id=chain_id, forks=RPC_COMPAT_FORKS, revalidate=True)
    demo = _homestead(chain)
    _pre_berlin(demo)
    _berlin_to_merge(demo)
    _shanghai_and_cancun(demo)
    _prague(demo)
    chain.mine_until(DEMO_BLOCKS)
    _move_pointers(chain)
    return demo


def _move_pointers(chain: DevChain) -> None:
    head = chain.head.number
    chain.backend.set_pointer("safe", max(head - 1, 0))
    chain.backend.set_pointer("finalized", max(head - 2, 0))


def _homestead(chain: DevChain) -> Demo:
    a = chain.accounts
    chain.fund(a[1].address, 5 * 10**18)
    demo = Demo(chain=chain, log_emitter=chain.deploy_runtime(a[0], contracts.LOG_EMITTER),
                storage=chain.deploy_runtime(a[0], contracts.STORAGE))
    chain.mine()  # 1
    for topics in range(5):
        demo._log(a[1 + topics], topics, tag=topics)
    chain.send(a[6], demo.storage, data=contracts.store_calldata({0: 1, 1: 2, 2: 3}))
    chain.mine()  # 2
    chain.mine(uncles=[chain.sibling()])  # 3, uncle at 2
    chain.send(a[2], a[3].address, value=10**15)
    chain.mine()  # 4
    uncles = [chain.sibling(3), chain.sibling(4)]
    chain.mine(uncles=uncles)  # 5, two uncles
    return demo


def _pre_berlin(demo: Demo) -> None:
    """Spurious Dragon to Muir Glacier: replay protection, reverts, a steady trickle of logs."""
    chain, a = demo.chain, demo.chain.accounts
    chain.mine_until_fork("spurious_dragon")
    chain.send(a[3], a[4].address, value=10**15)  # protected (EIP-155)
    chain.send(a[4], a[3].address, value=10**15, protected=False)
    demo._log(a[5], 2, tag=6)
    chain.mine()  # 6
    chain.mine_until_fork("byzantium")
    demo.reverter = chain.deploy_runtime(a[0], contracts.REVERTER)
    chain.mine()  # 9
    for call in (contracts.PANIC_CALL, contracts.ERROR_CALL, contracts.BARE_REVERT_CALL, b"\x07"):
        chain.send(a[7], demo.reverter, data=call)
    demo._log(a[8], 1, tag=10)
    chain.mine()  # 10
    while chain.head.number < 23:
        number = chain.head.number + 1
        demo._log(a[1 + number % 9], number % 5, tag=number)
        uncles = [chain.sibling()] if number % 4 == 0 else []
        chain.mine(uncles=uncles)


def _berlin_to_merge(demo: Demo) -> None:
    """Access lists from Berlin, fee-market transactions from London, the last uncles."""
    chain, a = demo.chain, demo.chain.accounts
    slot = (1).to_bytes(32, "big")
    entry = AccessListEntry(address=demo.storage, storage_keys=(slot,))
    chain.send(a[2], demo.storage, data=contracts.store_calldata({1: 20}), kind="access-list",
               access_list=[entry])
    chain.send(a[3], demo.storage, data=contracts.store_calldata({3: 4}), kind="access-list")
    chain.mine()  # 24
    chain.mine_until_fork("london")
    chain.send(a[4], a[5].address, value=10**15, kind="dynamic-fee")
    chain.send(a[5], a[6].address, value=10**15, kind="legacy", fees=Fees(gas_price=2 * GWEI))
    chain.send(a[6], demo.storage, data=contracts.store_calldata({4: 5}), kind="access-list",
               access_list=[entry])
    demo._log(a[7], 3, tag=27, kind="dynamic-fee", tip=2 * GWEI)
    chain.mine(uncles=[chain.sibling()])  # 27
    while chain.head.number < 35:
        number = chain.head.number + 1
        demo._log(a[1 + number % 9], 1 + number % 4, tag=number)
        chain.mine(uncles=[chain.sibling()] if number % 3 == 0 else [])
    chain.mine()  # 36, the first proof-of-stake block
    chain.send(a[1], demo.storage, data=contracts.store_calldata({5: 6}))
    chain.mine()  # 37


def _shanghai_and_cancun(demo: Demo) -> None:
    chain, a = demo.chain, demo.chain.accounts
    chain.mine_until_fork("shanghai")
    chain.mine(withdrawals=[(a[1].address, 10**9), (a[2].address, 2 * 10**9),
                            (b"\x99" * 20, 32 * 10**9)])  # 39, one to a fresh address
    demo._log(a[3], 4, tag=40)
    chain.mine(withdrawals=[(a[1].address, 1)])  # 40
    chain.mine_until_fork("cancun")
    demo.env_echo = chain.deploy_runtime(a[0], contracts.ENV_ECHO)
    chain.send(a[4], a[5].address, kind="blob",
               blob_hashes=[versioned_hash(b"demo blob 1"), versioned_hash(b"demo blob 2")])
    chain.mine()  # 42
    chain.send(a[5], demo.log_emitter, kind="blob",
               data=contracts.log_calldata([keccak(b"blob carrier")], b""),
               blob_hashes=[versioned_hash(b"demo blob %d" % i) for i in range(3, 6)])
    chain.send(a[6], demo.storage, data=contracts.store_calldata({6: 7}))
    chain.mine(withdrawals=[(a[2].address, 3)])  # 43


def _prague(demo: Demo) -> None:
    chain, a = demo.chain, demo.chain.accounts
    chain.mine_until_fork("prague")
    demo.delegated = a[9]
    chain.send(a[8], a[9].address, kind="set-code", delegations=[(a[9], demo.log_emitter)])
    chain.mine()  # 45
    demo.chain.send(a[1], a[9].address,
                    data=contracts.log_calldata([keccak(b"delegated")], b"from an EOA"))
    chain.send(a[2], a[3].address, kind="blob", blob_hashes=[versioned_hash(b"prague blob")])
    chain.mine(withdrawals=[(a[3].address, 7)])  # 46
    for number in range(47, DEMO_BLOCKS + 1):
        sender = a[1 + number % 9]
        kind: TxKind = ("legacy", "access-list", "dynamic-fee", "blob")[number % 4]
        if kind == "blob":
            chain.send(sender, a[0].address, kind="blob",
                       blob_hashes=[versioned_hash(b"blob %d" % number)])
        else:
            demo._log(sender, number % 5, tag=number, kind=kind)
        chain.mine()
