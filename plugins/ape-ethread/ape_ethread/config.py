"""The ``ethread:`` section of an ``ape-config.yaml``.

    ethread:
      mode: process            # or: node (an ``ethread node`` the plugin starts and stops)
      host: http://127.0.0.1:8545   # node mode: use the node already running there instead
      fork:
        ethereum:
          mainnet:
            upstream_provider: node    # the provider of ethereum:mainnet whose URL is forked
            block_number: 21000000
            cache: .ethread-fork-cache # where the fork keeps what it read (LMDB; optional)

Each setting can also come from the environment: ``APE_ETHREAD_MODE=node ape test``.
"""

from __future__ import annotations

from typing import Literal

from ape.api.config import PluginConfig
from pydantic_settings import SettingsConfigDict

DEFAULT_CHAIN_ID = 1337
"""Ape's local network's chain id (as its eth-tester provider has it)."""


class EthreadForkConfig(PluginConfig):
    """Where a ``<network>-fork`` network reads from."""

    upstream_provider: str | None = None
    """The provider of the forked network whose URL is forked (its default when None)."""
    block_number: int | None = None
    """The block to fork (the upstream's latest when None)."""
    cache: str | None = None
    """An LMDB directory keeping what the fork read, for the next runs (in memory when None)."""

    model_config = SettingsConfigDict(extra="allow", env_prefix="APE_ETHREAD_FORK_")


class EthreadConfig(PluginConfig):
    """How ``ethereum:local:ethread`` (and the ``-fork`` networks) run."""

    mode: Literal["process", "node"] = "process"
    """``process``: the dev chain in Ape's own process, no server (the fast one for ``ape
    test``); ``node``: an ``ethread node`` over HTTP, started and stopped by the plugin unless
    ``host`` names one already running."""
    host: str | None = None
    """Node mode: the URL of a running node (when nothing answers there and it is on this
    machine, the plugin starts one on its port)."""
    manage_process: bool = True
    """Node mode: start ``ethread node`` when nothing answers at ``host``."""
    chain_id: int = DEFAULT_CHAIN_ID
    hardfork: str | None = None
    """The fork the dev chain runs (``cancun``, ``prague``, ...; ethread's newest when None)."""
    auto_mine: bool = True
    gas_limit: int = 30_000_000
    request_timeout: int = 30
    fork: dict[str, dict[str, EthreadForkConfig]] = {}
    """ecosystem -> network -> where its fork reads from."""

    model_config = SettingsConfigDict(extra="allow", env_prefix="APE_ETHREAD_")
