"""What a client asks about the node rather than the chain: eth_syncing, eth_accounts,
net_listening, net_peerCount, web3_sha3. ethread is never syncing, has no peers, listens
while it answers, and holds no keys (a dev chain's accounts come from the dispatcher's
:attr:`ethread.rpc.context.Context.accounts`).
"""

from __future__ import annotations

from collections.abc import Sequence

from eth_utils import keccak

from ..models import Address, Hash32


def syncing() -> bool:
    """False: the chain served is the chain held (geth's answer when not syncing)."""
    return False


def accounts(dev_accounts: Sequence[Address] = ()) -> tuple[Address, ...]:
    """The accounts the node can sign for: the dev chain's, if it has any, else none."""
    return tuple(dev_accounts)


def listening() -> bool:
    """net_listening: always True (a service, not a peer-to-peer node)."""
    return True


def peer_count() -> int:
    """net_peerCount: always 0 (ethread has no peers)."""
    return 0


def sha3(data: bytes) -> Hash32:
    """keccak-256 of ``data`` (web3_sha3)."""
    return keccak(data)
