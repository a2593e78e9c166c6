"""A dev chain's fork schedules (:class:`ForkSchedule`), genesis document and constants."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..forks import BLOCK_FORKS, FORK_BY_NAME, FORK_ORDER, TIME_FORKS, ChainConfig
from .signing import DevAccount

DEV_CHAIN_ID = 1337
GWEI = 10**9
ETHER = 10**18
DEV_BALANCE = 1_000_000 * ETHER
ZERO_ADDRESS = b"\x00" * 20
ZERO_HASH = b"\x00" * 32
ZERO_NONCE = b"\x00" * 8
_GENESIS_KEY = {name: key for key, name in BLOCK_FORKS + TIME_FORKS}
_BLOCK_NAMES = {name for _, name in BLOCK_FORKS}
_MERGE = next(name for name in FORK_ORDER if FORK_BY_NAME[name].proof_of_stake)
_EIP155 = next(name for name in FORK_ORDER if FORK_BY_NAME[name].replay_protection)


@dataclass(frozen=True, slots=True)
class ForkSchedule:
    """When each fork activates: by block number up to the merge (``paris``), by timestamp after.
    Forks left out never activate (Frontier always has)."""

    blocks: tuple[tuple[str, int], ...] = ()
    times: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        time_names = {name for _, name in TIME_FORKS}
        if any(name not in _BLOCK_NAMES for name, _ in self.blocks):
            raise ValueError(f"block forks are among {sorted(_BLOCK_NAMES)}")
        if any(name not in time_names for name, _ in self.times):
            raise ValueError(f"timestamp forks are among {sorted(time_names)}")
        if self.times and _MERGE not in dict(self.blocks):
            raise ValueError(f"{TIME_FORKS[0][1]} and later need the merge ({_MERGE}) first")
        for schedule in (self.blocks, self.times):
            ordered = sorted(schedule, key=lambda f: FORK_ORDER.index(f[0]))
            if [at for _, at in ordered] != sorted(at for _, at in ordered):
                raise ValueError(f"forks must activate in order: {schedule}")

    @classmethod
    def from_genesis(cls, fork: str) -> ForkSchedule:
        """Every fork up to and including ``fork`` active from block 0."""
        upto = FORK_ORDER[1:FORK_ORDER.index(fork) + 1]
        return cls(
            blocks=tuple((name, 0) for name in upto if name in _BLOCK_NAMES),
            times=tuple((name, 0) for name in upto if name not in _BLOCK_NAMES),
        )

    def genesis_config(self, chain_id: int) -> dict[str, Any]:
        """The geth-style ``config`` object of a genesis file with this schedule."""
        config: dict[str, Any] = {"chainId": chain_id}
        for name, at in (*self.blocks, *self.times):
            config[_GENESIS_KEY[name]] = at
        if _EIP155 in dict(self.blocks):  # geth names EIP-155 on its own
            config["eip155Block"] = dict(self.blocks)[_EIP155]
        if _MERGE in dict(self.blocks):
            config["terminalTotalDifficultyPassed"] = True
        return config


RPC_COMPAT_FORKS = ForkSchedule(
    blocks=(
        ("homestead", 0), ("tangerine_whistle", 3), ("spurious_dragon", 6), ("byzantium", 9),
        ("constantinople", 12), ("petersburg", 15), ("istanbul", 18), ("muir_glacier", 21),
        ("berlin", 24), ("london", 27), ("arrow_glacier", 30), ("gray_glacier", 33),
        ("paris", 36),
    ),
    times=(("shanghai", 390), ("cancun", 420), ("prague", 450)),
)
"""The rpc-compat chain's schedule (the demo chain's): with 10-second blocks, Shanghai starts at
block 39, Cancun at 42 and Prague at 45."""


PRAGUE_FORKS = ForkSchedule.from_genesis("prague")
"""Everything active from genesis: the fastest chain to build for post-merge tests."""


OSAKA_FORKS = ForkSchedule.from_genesis("osaka")
"""Every fork through Osaka active from genesis."""


DEFAULT_FORKS = OSAKA_FORKS
"""A dev chain's schedule unless asked otherwise: the newest fork mainnet runs, from genesis."""


def system_contracts() -> dict[str, dict[str, str]]:
    """The EIP-4788 and EIP-2935 system contracts (py-evm updates them only when they hold this code)."""
    from eth.vm.forks.cancun.constants import BEACON_ROOTS_ADDRESS, BEACON_ROOTS_CONTRACT_CODE
    from eth.vm.forks.prague.constants import (
        HISTORY_STORAGE_ADDRESS,
        HISTORY_STORAGE_CONTRACT_CODE,
    )

    return {
        "0x" + bytes(address).hex(): {"balance": "0x0", "nonce": "0x1", "code": "0x" + code.hex()}
        for address, code in (
            (BEACON_ROOTS_ADDRESS, BEACON_ROOTS_CONTRACT_CODE),
            (HISTORY_STORAGE_ADDRESS, HISTORY_STORAGE_CONTRACT_CODE),
        )
    }


def genesis_document(
    *,
    chain_id: int = DEV_CHAIN_ID,
    forks: ForkSchedule = DEFAULT_FORKS,
    accounts: Sequence[DevAccount] = (),
    balance: int = DEV_BALANCE,
    timestamp: int = 0,
    gas_limit: int = 30_000_000,
    extra_data: bytes = b"ethread dev",
    alloc: Mapping[str, Mapping[str, Any]] | None = None,
    base_fee: int | None = None,
) -> dict[str, Any]:
    """A geth-style genesis.json document: ``accounts`` funded with ``balance``, the system
    contracts and ``alloc`` on top. ``base_fee``: the genesis block's (None: EIP-1559's 1 gwei)."""
    merged = ChainConfig.from_genesis_config(forks.genesis_config(chain_id)).fork_at(0, timestamp)
    document_alloc: dict[str, Any] = system_contracts()
    for account in accounts:
        document_alloc["0x" + account.address.hex()] = {"balance": hex(balance)}
    document_alloc.update(alloc or {})
    fee = {} if base_fee is None else {"baseFeePerGas": hex(base_fee)}
    return {
        **fee,
        "config": forks.genesis_config(chain_id),
        "nonce": "0x0",
        "timestamp": hex(timestamp),
        "extraData": "0x" + extra_data.hex(),
        "gasLimit": hex(gas_limit),
        "difficulty": "0x0" if FORK_BY_NAME[merged].proof_of_stake else hex(0x20000),
        "mixHash": "0x" + ZERO_HASH.hex(),
        "coinbase": "0x" + ZERO_ADDRESS.hex(),
        "alloc": document_alloc,
    }
