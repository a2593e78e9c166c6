"""Chain id and fork schedule, read from a geth-style genesis ``config``.

Forks activate by block number up to the merge and by timestamp after it (shanghaiTime,
cancunTime, pragueTime); :meth:`ChainConfig.vm_class` picks the py-evm VM for any
(number, timestamp) pair, for any chain, not by mapping timestamps to numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from .errors import GenesisError

if TYPE_CHECKING:
    from eth.abc import VirtualMachineAPI

# (genesis config key, fork name) in activation order.
BLOCK_FORKS: tuple[tuple[str, str], ...] = (
    ("homesteadBlock", "homestead"),
    ("eip150Block", "tangerine_whistle"),
    ("eip158Block", "spurious_dragon"),
    ("byzantiumBlock", "byzantium"),
    ("constantinopleBlock", "constantinople"),
    ("petersburgBlock", "petersburg"),
    ("istanbulBlock", "istanbul"),
    ("muirGlacierBlock", "muir_glacier"),
    ("berlinBlock", "berlin"),
    ("londonBlock", "london"),
    ("arrowGlacierBlock", "arrow_glacier"),
    ("grayGlacierBlock", "gray_glacier"),
    ("mergeNetsplitBlock", "paris"),
)
TIME_FORKS: tuple[tuple[str, str], ...] = (
    ("shanghaiTime", "shanghai"),
    ("cancunTime", "cancun"),
    ("pragueTime", "prague"),
)
# Blob base fee update fractions when the genesis has no blobSchedule entry (EIP-4844, 7691).
DEFAULT_BLOB_FRACTION = {"cancun": 3338477, "prague": 5007716}
BLOB_GAS_PER_BLOB = 131072
MIN_BLOB_BASE_FEE = 1


@dataclass(frozen=True)
class ChainConfig:
    """A chain's id and fork schedule (by block number, then by timestamp), read from a genesis
    ``config`` object: which rules a block runs under."""

    chain_id: int
    block_forks: tuple[tuple[int, str], ...]
    """(first block number, fork name), ascending; starts with (0, frontier)."""
    time_forks: tuple[tuple[int, str], ...] = ()
    """(first timestamp, fork name), ascending."""
    blob_fractions: dict[str, int] = field(default_factory=dict)
    dao_fork_block: int | None = None
    source: dict[str, Any] = field(default_factory=dict, compare=False)
    """The genesis ``config`` object this was read from, kept for storage."""

    @classmethod
    def from_genesis_config(cls, config: dict[str, Any]) -> ChainConfig:
        """The schedule described by a genesis file's ``config`` object (geth's key names); raises
        :class:`~ethread.errors.GenesisError` on a malformed one."""
        if not isinstance(config, dict) or "chainId" not in config:
            raise GenesisError("genesis config must be an object with a chainId")
        try:
            block_forks = [(0, "frontier")]
            for key, name in BLOCK_FORKS:
                if config.get(key) is not None:
                    block_forks.append((int(config[key]), name))
            time_forks = [
                (int(config[key]), name) for key, name in TIME_FORKS if config.get(key) is not None
            ]
            schedule = config.get("blobSchedule") or {}
            fractions = dict(DEFAULT_BLOB_FRACTION)
            for name, entry in schedule.items():
                if isinstance(entry, dict) and "baseFeeUpdateFraction" in entry:
                    fractions[name] = int(entry["baseFeeUpdateFraction"])
            dao = config.get("daoForkBlock") if config.get("daoForkSupport") else None
            return cls(
                chain_id=int(config["chainId"]),
                block_forks=tuple(sorted(block_forks, key=lambda f: f[0])),
                time_forks=tuple(sorted(time_forks, key=lambda f: f[0])),
                blob_fractions=fractions,
                dao_fork_block=int(dao) if dao is not None else None,
                source=config,
            )
        except (TypeError, ValueError) as exc:
            raise GenesisError(f"genesis config: {exc}") from None

    def fork_at(self, number: int, timestamp: int) -> str:
        """The name of the fork whose rules apply to a block of this number and timestamp."""
        name = "frontier"
        for first, fork in self.block_forks:
            if number >= first:
                name = fork
        for first, fork in self.time_forks:
            if timestamp >= first:
                name = fork
        return name

    def vm_class(self, number: int, timestamp: int) -> type[VirtualMachineAPI]:
        """The py-evm virtual machine class that executes a block of this number and timestamp."""
        return _vm_class(self.fork_at(number, timestamp), self.dao_fork_block)

    def blob_base_fee(self, number: int, timestamp: int, excess_blob_gas: int) -> int:
        """The blob base fee (wei per blob gas) of a block with this excess blob gas, under its
        fork's update fraction."""
        fork = self.fork_at(number, timestamp)
        fraction = self.blob_fractions.get(fork, DEFAULT_BLOB_FRACTION["prague"])
        return fake_exponential(MIN_BLOB_BASE_FEE, excess_blob_gas, fraction)

    def __hash__(self) -> int:
        return hash((self.chain_id, self.block_forks, self.time_forks, self.dao_fork_block))


FORK_ORDER: tuple[str, ...] = ("frontier", *(n for _, n in BLOCK_FORKS), *(n for _, n in TIME_FORKS))


def fork_at_least(fork: str, minimum: str) -> bool:
    """Whether ``fork`` is ``minimum`` or a later one."""
    return FORK_ORDER.index(fork) >= FORK_ORDER.index(minimum)


def fake_exponential(factor: int, numerator: int, denominator: int) -> int:
    """EIP-4844's integer approximation of ``factor * e ** (numerator / denominator)``."""
    i = 1
    output = 0
    accum = factor * denominator
    while accum > 0:
        output += accum
        accum = (accum * numerator) // (denominator * i)
        i += 1
    return output // denominator


@cache
def _vm_class(fork: str, dao_fork_block: int | None) -> type[VirtualMachineAPI]:
    from eth.vm import forks

    classes: dict[str, Any] = {
        "frontier": forks.FrontierVM,
        "homestead": forks.HomesteadVM,
        "tangerine_whistle": forks.TangerineWhistleVM,
        "spurious_dragon": forks.SpuriousDragonVM,
        "byzantium": forks.ByzantiumVM,
        "constantinople": forks.ConstantinopleVM,
        "petersburg": forks.PetersburgVM,
        "istanbul": forks.IstanbulVM,
        "muir_glacier": forks.MuirGlacierVM,
        "berlin": forks.BerlinVM,
        "london": forks.LondonVM,
        "arrow_glacier": forks.ArrowGlacierVM,
        "gray_glacier": forks.GrayGlacierVM,
        "paris": forks.ParisVM,
        "shanghai": forks.ShanghaiVM,
        "cancun": forks.CancunVM,
        "prague": forks.PragueVM,
    }
    vm = classes[fork]
    if fork == "homestead":
        # py-evm's Homestead applies the mainnet DAO drain unless told otherwise.
        if dao_fork_block is None:
            vm = vm.configure(__name__="HomesteadVM", support_dao_fork=False)
        else:
            vm = vm.configure(__name__="HomesteadVM", _dao_fork_block_number=dao_fork_block)
    if fork in ("cancun", "prague"):
        vm = _without_code_rewrite(vm)
    return vm  # type: ignore[no-any-return]


def _without_code_rewrite(vm: Any) -> Any:
    """``vm`` with a state class that skips py-evm's ``set_system_contracts``.

    py-evm's Cancun and Prague states call it whenever one is built (each executed block,
    each eth_call and estimate): it writes the beacon-roots (and block-history) contract's code
    at its address when the address holds exactly that code already, and does nothing
    otherwise (``if not get_code(...) != CODE``). Writing what is there changes no account, no
    state root and no warm address; it only costs the state two account reads from the trie
    and a code write, about 0.4 ms a state. tests/test_forks.py holds py-evm to that."""
    state = vm.get_state_class()
    quiet = state.configure(__name__=state.__name__, set_system_contracts=_keep_system_contracts)
    return vm.configure(__name__=vm.__name__, _state_class=quiet)


def _keep_system_contracts(state: Any) -> None:
    """In place of py-evm's ``set_system_contracts``: leave the state as it is."""


# The public networks Era1 files are published for, chosen by the network name in the file
# names (Era1 files carry no chain id of their own).
_MAINNET = {
    "chainId": 1,
    "homesteadBlock": 1150000,
    "daoForkBlock": 1920000,
    "daoForkSupport": True,
    "eip150Block": 2463000,
    "eip155Block": 2675000,
    "eip158Block": 2675000,
    "byzantiumBlock": 4370000,
    "constantinopleBlock": 7280000,
    "petersburgBlock": 7280000,
    "istanbulBlock": 9069000,
    "muirGlacierBlock": 9200000,
    "berlinBlock": 12244000,
    "londonBlock": 12965000,
    "arrowGlacierBlock": 13773000,
    "grayGlacierBlock": 15050000,
    "mergeNetsplitBlock": 15537394,
    "shanghaiTime": 1681338455,
    "cancunTime": 1710338135,
    "pragueTime": 1746612311,
}

_SEPOLIA = {
    "chainId": 11155111,
    **{key: 0 for key in (
        "homesteadBlock", "eip150Block", "eip155Block", "eip158Block", "byzantiumBlock",
        "constantinopleBlock", "petersburgBlock", "istanbulBlock", "muirGlacierBlock",
        "berlinBlock", "londonBlock",
    )},
    "mergeNetsplitBlock": 1735371,
    "shanghaiTime": 1677557088,
    "cancunTime": 1706655072,
    "pragueTime": 1741159776,
}

KNOWN_NETWORKS = {"mainnet": _MAINNET, "sepolia": _SEPOLIA}
NETWORK_BY_CHAIN_ID = {int(doc["chainId"]): name for name, doc in KNOWN_NETWORKS.items()}  # type: ignore[call-overload]


def network_config(name: str) -> ChainConfig | None:
    """The config of a known network name, or None."""
    document = KNOWN_NETWORKS.get(name)
    return ChainConfig.from_genesis_config(dict(document)) if document is not None else None


def network_name(config: ChainConfig | None) -> str | None:
    """The Era1 network name of a known chain id."""
    return NETWORK_BY_CHAIN_ID.get(config.chain_id) if config is not None else None
