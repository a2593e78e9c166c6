"""Chain id and fork schedule, read from a geth-style genesis ``config``.

:meth:`ChainConfig.rules` gives the :class:`~ethread.forks.table.Fork` row of any (number,
timestamp), with the chain's blob parameters. A genesis that schedules a fork ethread does not
know is refused, naming the key, rather than run under older rules.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import GenesisError
from ..evm.blobs import GAS_PER_BLOB, BlobParams
from ..evm.blobs import blob_base_fee as price_blob_gas
from .table import FORK_BY_KEY, FORK_BY_NAME, FORKS, Fork

if TYPE_CHECKING:
    from eth.abc import VirtualMachineAPI

BLOB_GAS_PER_BLOB = GAS_PER_BLOB

_OTHER_SCHEDULE_KEYS = frozenset({"daoForkBlock", "eip155Block"})
"""Block keys geth reads that are not forks of their own: the DAO drain, and EIP-155, which
ethread applies with Spurious Dragon (EIP-158) as every public network scheduled them."""


def _is_schedule_key(key: str) -> bool:
    return key.endswith(("Block", "Time"))


@dataclass(frozen=True)
class ChainConfig:
    """A chain's id and fork schedule (by block number, then by timestamp), from a genesis."""

    chain_id: int
    block_forks: tuple[tuple[int, str], ...]
    """(first block number, fork name), ascending; starts with (0, frontier)."""
    time_forks: tuple[tuple[int, str], ...] = ()
    """(first timestamp, fork name), ascending."""
    blob_schedule: dict[str, BlobParams] = field(default_factory=dict)
    """Blob parameters by fork name, for every fork from Cancun on that the chain schedules."""
    dao_fork_block: int | None = None
    deposit_contract: bytes | None = None
    """The chain's deposit contract (``depositContractAddress``), if the genesis names it."""
    source: dict[str, Any] = field(default_factory=dict, compare=False)
    """The genesis ``config`` object this was read from, kept for storage."""
    _rules: dict[str, Fork] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_genesis_config(cls, config: dict[str, Any]) -> ChainConfig:
        """The schedule of a genesis file's ``config`` object (geth's keys);
        :class:`~ethread.errors.GenesisError` when malformed or naming an unknown fork."""
        if not isinstance(config, dict) or "chainId" not in config:
            raise GenesisError("genesis config must be an object with a chainId")
        unknown = sorted(key for key, value in config.items()
                         if _is_schedule_key(key) and value is not None
                         and key not in FORK_BY_KEY and key not in _OTHER_SCHEDULE_KEYS)
        if unknown:
            raise GenesisError(
                f"genesis config schedules a fork ethread does not know: {', '.join(unknown)}"
                " (known: " + ", ".join(FORK_BY_KEY) + ")")
        try:
            block_forks = [(0, "frontier")]
            time_forks: list[tuple[int, str]] = []
            for fork in FORKS:
                if fork.genesis_key is None or config.get(fork.genesis_key) is None:
                    continue
                at = int(config[fork.genesis_key])
                (time_forks if fork.by_time else block_forks).append((at, fork.name))
            merge = _MERGED_AT_DIFFICULTY.get(
                (int(config["chainId"]), config.get("terminalTotalDifficulty")))
            if merge is not None and config.get("mergeNetsplitBlock") is None:
                block_forks.append((merge, "paris"))
            blobs = _blob_schedule(config.get("blobSchedule") or {}, [n for _, n in time_forks])
            dao = config.get("daoForkBlock") if config.get("daoForkSupport") else None
            deposit = config.get("depositContractAddress")
            return cls(
                chain_id=int(config["chainId"]),
                block_forks=tuple(sorted(block_forks, key=lambda f: f[0])),
                time_forks=tuple(sorted(time_forks, key=lambda f: f[0])),
                blob_schedule=blobs,
                dao_fork_block=int(dao) if dao is not None else None,
                deposit_contract=bytes.fromhex(str(deposit).removeprefix("0x"))
                if deposit else None,
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

    def rules(self, number: int, timestamp: int) -> Fork:
        """The rules of a block of this number and timestamp, with this chain's blob parameters."""
        return self.fork_rules(self.fork_at(number, timestamp))

    def fork_rules(self, name: str) -> Fork:
        """The row of the fork ``name`` as this chain runs it (its blob parameters)."""
        rules = self._rules.get(name)
        if rules is None:
            row = FORK_BY_NAME[name]
            blob = self.blob_schedule.get(name, row.blob)
            rules = row if blob == row.blob else dataclasses.replace(row, blob=blob)
            self._rules[name] = rules
        return rules

    @property
    def blob_fractions(self) -> dict[str, int]:
        """The blob base fee update fraction of every blob fork (kept for older callers)."""
        return {name: params.update_fraction for name, params in self.blob_schedule.items()}

    def vm_class(self, number: int, timestamp: int) -> type[VirtualMachineAPI]:
        """The py-evm virtual machine class that executes a block of this number and timestamp."""
        from .vms import vm_class_for

        return vm_class_for(self.rules(number, timestamp), self.dao_fork_block)

    def blob_base_fee(self, number: int, timestamp: int, excess_blob_gas: int) -> int:
        """The blob base fee (wei per blob gas) of a block with this excess blob gas."""
        blob = self.rules(number, timestamp).blob or FORK_BY_NAME["prague"].blob
        assert blob is not None
        return price_blob_gas(blob, excess_blob_gas)

    def __hash__(self) -> int:
        return hash((self.chain_id, self.block_forks, self.time_forks, self.dao_fork_block))


_MERGED_AT_DIFFICULTY: dict[tuple[int, Any], int] = {(1, 58_750_000_000_000_000_000_000): 15_537_394}
"""Where a chain that merged on terminal total difficulty (and names no
``mergeNetsplitBlock``) did so: mainnet's first proof-of-stake block. ethread picks rules by
block number; geth's config for mainnet has only the difficulty."""

NO_SCHEDULE = ChainConfig(chain_id=0, block_forks=((0, "frontier"),))
"""What a store that holds no schedule is read with (Frontier's rules from block 0): receipts'
and blobs' derived fields come out as the model path gives them."""



def _blob_schedule(document: Any, scheduled: list[str]) -> dict[str, BlobParams]:
    """Blob parameters of every blob fork the chain schedules: the genesis ``blobSchedule``
    entry, else the fork's default; a BPO fork has no default and needs its entry; Osaka runs
    Prague's (geth reads no ``osaka`` entry)."""
    if not isinstance(document, dict):
        raise GenesisError("genesis config: blobSchedule must be an object")
    schedule: dict[str, BlobParams] = {}
    for name in ("cancun", "prague", *scheduled):
        row = FORK_BY_NAME[name]
        if not row.at_least("cancun"):
            continue
        if name == "osaka":
            # geth's blobSchedule has no Osaka entry: Osaka runs Prague's parameters
            schedule[name] = schedule["prague"]
            continue
        entry = document.get(name)
        if entry is None:
            if row.blob is None:
                raise GenesisError(
                    f"genesis config schedules {row.genesis_key} but its blobSchedule has no"
                    f" {name!r} entry (target, max, baseFeeUpdateFraction)")
            schedule[name] = row.blob
            continue
        if not isinstance(entry, dict):
            raise GenesisError(f"genesis config: blobSchedule.{name} must be an object")
        default: dict[str, Any] = {}
        if row.blob is not None:
            default = {"target": row.blob.target, "max": row.blob.max,
                       "baseFeeUpdateFraction": row.blob.update_fraction}
        merged = {**default, **entry}
        try:
            schedule[name] = BlobParams(
                target=int(merged["target"]), max=int(merged["max"]),
                update_fraction=int(merged["baseFeeUpdateFraction"]))
        except (KeyError, TypeError, ValueError):
            raise GenesisError(
                f"genesis config: blobSchedule.{name} needs target, max and"
                " baseFeeUpdateFraction as numbers") from None
        params = schedule[name]
        if params.target < 0 or params.max < 0 or params.update_fraction <= 0:
            raise GenesisError(
                f"genesis config: blobSchedule.{name} needs a target and max of at least 0"
                " and a baseFeeUpdateFraction above 0")
    return schedule
