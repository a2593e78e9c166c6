"""Forks: what each one changes (:mod:`.table`, one row per fork), when a chain activates them
(:mod:`.schedule`, read from a geth-style genesis), the VM that runs them (:mod:`.vms`) and
the public networks' schedules (:mod:`.networks`)."""

from .networks import KNOWN_NETWORKS, NETWORK_BY_CHAIN_ID, network_config, network_name
from .schedule import BLOB_GAS_PER_BLOB, NO_SCHEDULE, ChainConfig
from .table import (
    BLOCK_FORKS,
    FORK_BY_NAME,
    FORK_ORDER,
    FORKS,
    TIME_FORKS,
    Fork,
    fork_at_least,
    fork_named,
)

__all__ = [
    "BLOB_GAS_PER_BLOB",
    "BLOCK_FORKS",
    "FORKS",
    "FORK_BY_NAME",
    "FORK_ORDER",
    "KNOWN_NETWORKS",
    "NETWORK_BY_CHAIN_ID",
    "NO_SCHEDULE",
    "TIME_FORKS",
    "ChainConfig",
    "Fork",
    "fork_at_least",
    "fork_named",
    "network_config",
    "network_name",
]
