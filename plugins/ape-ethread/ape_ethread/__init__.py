"""Ape provider plugin for ethread's dev chain: ``ape test --network ethereum:local:ethread``.

Registers the ``ethread`` provider for Ape's local network and for a fork of each Ethereum
network Ape knows (``ethereum:mainnet-fork:ethread``...), and the ``ethread:`` section of
``ape-config.yaml`` (:class:`~ape_ethread.config.EthreadConfig`). The provider and ethread
itself are imported only when Ape asks for them.
"""

from typing import Any

from ape import plugins


@plugins.register(plugins.Config)
def config_class() -> Any:
    from .config import EthreadConfig

    return EthreadConfig


@plugins.register(plugins.ProviderPlugin)
def providers() -> Any:
    from ape.api.networks import LOCAL_NETWORK_NAME
    from ape_ethereum.ecosystem import NETWORKS

    from .provider import EthreadForkProvider, EthreadProvider

    yield "ethereum", LOCAL_NETWORK_NAME, EthreadProvider
    for network in NETWORKS:
        yield "ethereum", f"{network}-fork", EthreadForkProvider


def __getattr__(name: str) -> Any:
    if name in ("EthreadProvider", "EthreadForkProvider", "EthreadProviderError"):
        from . import provider

        return getattr(provider, name)
    if name in ("EthreadConfig", "EthreadForkConfig"):
        from . import config

        return getattr(config, name)
    raise AttributeError(name)


__all__ = ["EthreadConfig", "EthreadForkConfig", "EthreadForkProvider", "EthreadProvider",
           "EthreadProviderError"]
