"""EIP-2124 fork identifiers (ethread/forks/fork_id.py) of the public networks against the
values geth's own fork-id tests give (core/forkid), through Osaka and both BPO forks."""

from __future__ import annotations

import pytest

from ethread.forks import network_config
from ethread.forks.fork_id import fork_id

MAINNET_GENESIS = bytes.fromhex("d4e56740f876aef8c010b86a40d5f56745a118d0906a34e69aec8c0db1cb8fa3")
SEPOLIA_GENESIS = bytes.fromhex("25a5cc106eea7138acab33231d7160d69cb777ee0c2c553fcddf5138993e6dd9")
SEPOLIA_GENESIS_TIME = 1633267481

MAINNET = [  # (head number, head time, hash, next)
    (0, 0, 0xFC64EC04, 1150000),
    (1920000, 0, 0x91D1F948, 2463000),
    (2675000, 0, 0x3EDD5B10, 4370000),
    (15050000, 0, 0xF0AFD0E3, 1681338455),
    (20000000, 1681338455, 0xDCE96C2D, 1710338135),
    (30000000, 1710338135, 0x9F3D2254, 1746612311),
    (30000000, 1746612311, 0xC376CF8B, 1764798551),
    (30000000, 1764798551, 0x5167E2A6, 1765290071),
    (30000000, 1765290071, 0xCBA2A1C0, 1767747671),
    (30000000, 1767747671, 0x07C9462E, 0),
]
SEPOLIA = [
    (0, 0, 0xFE3366E7, 1735371),
    (1735371, 0, 0xB96CBD13, 1677557088),
    (1735372, 1677557088, 0xF7F9BC08, 1706655072),
    (1735372, 1741159776, 0xED88B5FD, 1760427360),
    (1735372, 1760427360, 0xE2AE4999, 1761017184),
    (1735372, 1761017184, 0x56078A1E, 1761607008),
    (1735372, 1761607008, 0x268956B6, 0),
]


NETWORKS = {"mainnet": (MAINNET_GENESIS, 0, MAINNET),
            "sepolia": (SEPOLIA_GENESIS, SEPOLIA_GENESIS_TIME, SEPOLIA)}
"""name -> (genesis hash, genesis time, fork ids)."""


@pytest.mark.parametrize(("network", "number", "time", "checksum", "following"), [
    (network, *row) for network, (_, _, rows) in NETWORKS.items() for row in rows])
def test_fork_ids(network: str, number: int, time: int, checksum: int, following: int) -> None:
    genesis, genesis_time, _ = NETWORKS[network]
    config = network_config(network)
    assert config is not None
    found = fork_id(config, genesis, genesis_time, number, time)
    assert (found.hash.hex(), found.next) == (checksum.to_bytes(4, "big").hex(), following)


def test_mainnet_still_runs_proof_of_stake_rules_from_its_merge_block() -> None:
    config = network_config("mainnet")
    assert config is not None
    assert config.rules(15537393, 1663224162).name == "gray_glacier"
    assert config.rules(15537394, 1663224179).name == "paris"
