"""The JSON-RPC service over HTTP and WebSocket: an optional extra (``ethread[server]``).

Nothing in the core imports this package, so the library stays usable without uvicorn and
websockets. The pieces, each in its own module:

- :mod:`.config`: networks, keys, limits (from flags or a TOML file);
- :mod:`.auth`: API keys, constant-time lookup, masking;
- :mod:`.credits`: the price of each method and admission against a key's balance and rate;
  :mod:`.ledger_mapped`, :mod:`.ledger_sqlite` and :mod:`.ledger_redis`: the ledger those
  live in;
- :mod:`.networks`: opening backends, routing by port and Host;
- :mod:`.service`: what every request needs (networks, keys, billing, the request
  pipelines of :mod:`ethread.codec.pipeline`); :mod:`.asgi`: the ASGI shapes;
- :mod:`.app`: the ASGI application (HTTP and lifespan); :mod:`.websocket` and
  :mod:`.subscriptions` for WebSocket;
- :mod:`.refusals`: the transport's own refusals (key, route, method, content type, credits);
- :mod:`.execution`: where blocking work runs (event loop or which thread pool);
- :mod:`.runner`: binding sockets and running uvicorn.
"""

from .config import ConfigError, KeyConfig, NetworkConfig, ServerConfig, ServiceLimits, load_config
from .networks import Network, make_network
from .runner import PreparedServer, ServerThread, prepare

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
