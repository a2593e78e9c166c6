"""The JSON-RPC service over HTTP and WebSocket: an optional extra (``ethread[server]``).

Nothing in the core imports this package, so the library stays usable without uvicorn and
websockets. It is laid out by concern, each package owning its state (docs/design.md, "The
service"): configuration, networks, keys, billing, the HTTP and WebSocket transports, where
blocking work runs, observation, the admin site, and the processes that serve.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import ConfigError, KeyConfig, NetworkConfig, ServerConfig, ServiceLimits, load_config
    from .networks import Network, make_network
    from .processes.runner import PreparedServer, ServerThread, prepare

_LAZY = {
    "ConfigError": "config", "KeyConfig": "config", "NetworkConfig": "config",
    "ServerConfig": "config", "ServiceLimits": "config", "load_config": "config",
    "Network": "networks", "make_network": "networks",
    "PreparedServer": "processes.runner", "ServerThread": "processes.runner",
    "prepare": "processes.runner",
}
"""Each name and its module, imported when first read: the configuration (which the
``ethread`` command reads to build its flags) loads neither the chains and methods
(:mod:`.networks`) nor uvicorn (:mod:`.processes.runner`)."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = [
    "ConfigError",
    "KeyConfig",
    "Network",
    "NetworkConfig",
    "PreparedServer",
    "ServerConfig",
    "ServerThread",
    "ServiceLimits",
    "load_config",
    "make_network",
    "prepare",
]
