"""eth_config (EIP-7910): the rules the node runs now, the next fork it has scheduled and the
last, as geth reads them.

Forks are the timestamp-scheduled ones (Shanghai on); the current one is the latest active at
the head's timestamp (none before Shanghai); the next is the fork right after it if scheduled
(a fork skipped in between ends the list), the last the latest scheduled, both null when
nothing comes next. Each carries its activation time (0 at genesis), blob parameters, chain
id, EIP-2124 fork id once active, and precompiles and system contracts by EIP-7910 name.
"""

from __future__ import annotations

from typing import Protocol

from ..backend import ConfigSource
from ..forks import FORK_BY_NAME, FORKS, ChainConfig, Fork
from ..forks.fork_id import fork_id
from ..models import Header
from ..results import ChainForks, ForkConfig
from .resolve import ChainHeaders, header_at

ZERO_ADDRESS = bytes(20)
NO_HEAD = 2**64 - 1
"""The head number a fork id of eth_config is computed at: past every block fork."""


class ConfiguredChain(ChainHeaders, ConfigSource, Protocol):
    """What eth_config reads: the schedule, the genesis and the head."""


def get_config(backend: ConfiguredChain) -> ChainForks | None:
    """eth_config's answer for the chain now (None without a chain or a schedule)."""
    config = backend.chain_config()
    genesis = header_at(backend, 0)
    head_number = backend.pointer("latest")
    head = header_at(backend, head_number) if head_number is not None else None
    if config is None or genesis is None or head is None:
        return None
    scheduled = {name: time for time, name in config.time_forks}
    current = _active_at(scheduled, head.timestamp)
    following = _following(current, scheduled)
    last = max(scheduled, key=lambda name: FORK_BY_NAME[name].index) if scheduled else None

    def describe(name: str | None) -> ForkConfig | None:
        if name is None:
            return None
        return _fork_config(config, config.fork_rules(name), scheduled[name], genesis)

    next_fork = describe(following)
    return ChainForks(current=describe(current), next=next_fork,
                      last=describe(last) if next_fork is not None else None)


def _active_at(scheduled: dict[str, int], timestamp: int) -> str | None:
    """The latest fork (in activation order) of those scheduled at or before ``timestamp``."""
    active = [name for name, time in scheduled.items() if time <= timestamp]
    return max(active, key=lambda name: FORK_BY_NAME[name].index) if active else None


def _following(current: str | None, scheduled: dict[str, int]) -> str | None:
    """The fork after ``current`` (None: the first timestamp fork), if the chain schedules it."""
    if current is None:
        candidate: Fork | None = next(fork for fork in FORKS if fork.by_time)
    else:
        index = FORK_BY_NAME[current].index + 1
        candidate = FORKS[index] if index < len(FORKS) else None
    return candidate.name if candidate is not None and candidate.name in scheduled else None


def _fork_config(config: ChainConfig, rules: Fork, activation: int, genesis: Header
                 ) -> ForkConfig:
    deposit = config.deposit_contract or ZERO_ADDRESS
    return ForkConfig(
        activation_time=0 if genesis.timestamp >= activation else activation,
        blob_schedule=rules.blob,
        chain_id=config.chain_id,
        fork_id=fork_id(config, genesis.hash, genesis.timestamp, NO_HEAD, activation).hash,
        precompiles=rules.precompiles,
        system_contracts=tuple((name, deposit if address is None else address)
                               for name, address in rules.system_contracts),
    )


__all__ = ["ConfiguredChain", "get_config"]
