"""A chain read under another fork schedule (and, optionally, another head): what eth_config
and eth_baseFee read, for schedules the conformance chains do not have."""

from __future__ import annotations

from typing import Any

import ethread
from ethread.forks import ChainConfig
from ethread.models import Hash32, Header


class Rescheduled:
    """A chain's headers and pointers under another fork schedule (and, optionally, another
    head): what eth_config and eth_baseFee read."""

    def __init__(self, backend: ethread.MemoryBackend, config: dict[str, Any],
                 head: int | None = None) -> None:
        self.backend = backend
        self.config = ChainConfig.from_genesis_config(config)
        self.head = head

    def chain_config(self) -> ChainConfig:
        return self.config

    def canonical_hash(self, number: int) -> Hash32 | None:
        return self.backend.canonical_hash(number)

    def header_by_hash(self, block_hash: Hash32) -> Header | None:
        return self.backend.header_by_hash(block_hash)

    def pointer(self, name: Any) -> int | None:
        return self.head if self.head is not None and name == "latest" else self.backend.pointer(name)
