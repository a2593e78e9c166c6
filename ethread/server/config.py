"""What a running service is made of: networks, API keys, limits, the credit ledger.

One dataclass tree, built either from ``ethread serve`` flags or from a TOML file, so that a
flag and a file entry always mean the same thing (both go through :func:`build_config`'s
validation). Nothing here opens a chain or a socket: :mod:`ethread.server.networks` and
:mod:`ethread.server.runner` do that from the values.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from ..methods.logs import LogLimits

BackendKind = Literal["demo", "import", "db", "era"]
BACKEND_KINDS: tuple[BackendKind, ...] = ("demo", "import", "db", "era")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8545
DEMO_KEY = "ethread-demo-key"
"""The key ``ethread serve`` accepts when no key is configured. It guards nothing: the demo
listens on loopback and the key is printed at start, so that the URL can be pasted as is."""
DEFAULT_DAILY_CREDITS = 3_000_000
DEFAULT_LEDGER = "ethread-credits.sqlite3"


class ConfigError(ValueError):
    """A configuration that cannot be served; the message names the offending entry."""


@dataclass(frozen=True, slots=True)
class ServiceLimits:
    """Size limits of the transport, plus the core's eth_getLogs limits.

    Defaults follow geth: a 5 MiB body, 1,000 calls per batch; a WebSocket message may be as
    large as a body. The eth_call gas cap is the core's (10 times the block gas limit).
    """

    max_body_bytes: int = 5 * 1024 * 1024
    max_batch_calls: int = 1_000
    max_ws_message_bytes: int = 5 * 1024 * 1024
    max_ws_subscriptions: int = 100
    logs: LogLimits = field(default_factory=LogLimits)


@dataclass(frozen=True, slots=True)
class NetworkConfig:
    """One chain served at its own base address.

    ``hosts`` are the Host header names (without port) that select this network; ``port`` a
    listening port of its own. A network with neither is the default of the main port.
    """

    name: str
    backend: BackendKind = "demo"
    genesis: Path | None = None
    blocks: Path | None = None
    path: Path | None = None
    """The LevelDB directory (``db``) or the Era1 folder (``era``)."""
    verify_seals: bool = True
    block_time: float = 0.0
    """Seconds between blocks the demo chain mines while serving (0: no mining)."""
    hosts: tuple[str, ...] = ()
    port: int | None = None


@dataclass(frozen=True, slots=True)
class KeyConfig:
    """An API key and what it may spend."""

    key: str
    daily_credits: int = DEFAULT_DAILY_CREDITS
    credits_per_second: float | None = None
    """Optional sustained rate; a request is admitted while the key is not in debt."""
    label: str = ""


@dataclass(frozen=True, slots=True)
class ServerConfig:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    networks: tuple[NetworkConfig, ...] = (NetworkConfig(name="demo"),)
    keys: tuple[KeyConfig, ...] = ()
    limits: ServiceLimits = field(default_factory=ServiceLimits)
    ledger: str = DEFAULT_LEDGER
    """The credit ledger: a SQLite file (shared by the processes of one machine),
    ``redis://HOST:PORT/DB`` (shared by a fleet), or ``:memory:`` (one process, forgotten at
    exit)."""
    access_log: bool = True
    threads: int = 4
    """Worker threads that run the synchronous core off the event loop."""

    def with_default_key(self) -> ServerConfig:
        """The demo key when no key is configured: a server with no key would refuse all."""
        if self.keys:
            return self
        return replace(self, keys=(KeyConfig(key=DEMO_KEY, label="demo"),))


# -- validation, shared by flags and file ----------------------------------------------------


def _positive_int(value: Any, where: str, *, allow_zero: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < (0 if allow_zero else 1):
        raise ConfigError(f"{where} must be a {'non-negative' if allow_zero else 'positive'} "
                          f"integer, got {value!r}")
    return value


def _non_negative_float(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ConfigError(f"{where} must be a non-negative number, got {value!r}")
    return float(value)


def _port(value: Any, where: str) -> int:
    port = _positive_int(value, where, allow_zero=True)
    if port > 65535:
        raise ConfigError(f"{where} must be a port number (0..65535), got {value!r}")
    return port


def validate(config: ServerConfig) -> ServerConfig:
    """Check the cross-entry rules; return the config unchanged when it holds."""
    if not config.networks:
        raise ConfigError("at least one network is needed")
    names = [n.name for n in config.networks]
    if len(set(names)) != len(names):
        raise ConfigError(f"network names must be unique: {names}")
    seen_hosts: dict[tuple[int, str], str] = {}
    defaults: dict[int, str] = {}
    for network in config.networks:
        _check_network(network)
        port = config.port if network.port is None else network.port
        if not network.hosts:
            if port in defaults:
                raise ConfigError(
                    f"networks {defaults[port]!r} and {network.name!r} both serve port {port} "
                    "without a host name: give one of them 'hosts' or its own 'port'")
            defaults[port] = network.name
        for host in network.hosts:
            if (port, host) in seen_hosts:
                raise ConfigError(f"host {host!r} on port {port} is claimed by networks "
                                  f"{seen_hosts[(port, host)]!r} and {network.name!r}")
            seen_hosts[(port, host)] = network.name
    keys = [k.key for k in config.keys]
    if len(set(keys)) != len(keys):
        raise ConfigError("an API key is listed twice")
    for entry in config.keys:
        if not entry.key or "/" in entry.key or any(c.isspace() for c in entry.key):
            raise ConfigError("an API key must be non-empty, without '/' or spaces")
        _positive_int(entry.daily_credits, "daily_credits", allow_zero=True)
        if entry.credits_per_second is not None and entry.credits_per_second <= 0:
            raise ConfigError("credits_per_second must be positive")
    limits = config.limits
    for name in ("max_body_bytes", "max_batch_calls", "max_ws_message_bytes",
                 "max_ws_subscriptions"):
        _positive_int(getattr(limits, name), f"limits.{name}")
    _positive_int(config.threads, "threads")
    _check_ledger(config.ledger)
    return config


def _check_ledger(ledger: str) -> None:
    from .ledger import check_redis_url, is_redis_url

    if not isinstance(ledger, str) or not ledger:
        raise ConfigError("ledger must be a SQLite file, redis://HOST:PORT/DB or :memory:")
    if is_redis_url(ledger):
        problem = check_redis_url(ledger)
        if problem is not None:
            raise ConfigError(f"ledger: {problem}")


def _check_network(network: NetworkConfig) -> None:
    where = f"network {network.name!r}"
    if network.backend not in BACKEND_KINDS:
        raise ConfigError(f"{where}: backend must be one of {', '.join(BACKEND_KINDS)}")
    if network.backend == "import" and network.genesis is None:
        raise ConfigError(f"{where}: an imported chain needs 'genesis' (and usually 'blocks')")
    if network.backend in ("db", "era") and network.path is None:
        raise ConfigError(f"{where}: backend {network.backend!r} needs 'path'")
    if network.backend != "demo" and network.block_time:
        raise ConfigError(f"{where}: only the demo chain mines ('block_time')")


# -- the TOML file ---------------------------------------------------------------------------

_SERVER_KEYS = {"host", "port", "ledger", "access_log", "threads"}
_NETWORK_KEYS = {"name", "backend", "genesis", "blocks", "path", "verify_seals", "block_time",
                 "hosts", "port"}
_KEY_KEYS = {"key", "daily_credits", "credits_per_second", "label"}
_LIMIT_KEYS = {"max_body_bytes", "max_batch_calls", "max_ws_message_bytes",
               "max_ws_subscriptions", "logs_max_results", "logs_timeout_seconds",
               "logs_max_parameters"}


def _table(document: dict[str, Any], name: str) -> dict[str, Any]:
    value = document.get(name, {})
    if not isinstance(value, dict):
        raise ConfigError(f"[{name}] must be a table")
    return value


def _array_of_tables(document: dict[str, Any], name: str) -> list[dict[str, Any]]:
    value = document.get(name, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ConfigError(f"[[{name}]] must be an array of tables")
    return value


def _unknown(entries: dict[str, Any], allowed: set[str], where: str) -> None:
    extra = sorted(set(entries) - allowed)
    if extra:
        raise ConfigError(f"{where}: unknown setting(s) {', '.join(extra)}")


def _path(value: Any, base: Path, where: str) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be a path string")
    path = Path(value).expanduser()
    return path if path.is_absolute() else base / path


def load_config(path: str | Path) -> ServerConfig:
    """Read a TOML service description; relative paths are relative to the file."""
    path = Path(path)
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    return config_from_document(document, path.parent)


def config_from_document(document: dict[str, Any], base: Path) -> ServerConfig:
    _unknown(document, {"server", "limits", "networks", "keys"}, "top level")
    server = _table(document, "server")
    _unknown(server, _SERVER_KEYS, "[server]")
    limits_table = _table(document, "limits")
    _unknown(limits_table, _LIMIT_KEYS, "[limits]")
    defaults = ServiceLimits()
    log_defaults = defaults.logs
    limits = ServiceLimits(
        max_body_bytes=limits_table.get("max_body_bytes", defaults.max_body_bytes),
        max_batch_calls=limits_table.get("max_batch_calls", defaults.max_batch_calls),
        max_ws_message_bytes=limits_table.get("max_ws_message_bytes",
                                              defaults.max_ws_message_bytes),
        max_ws_subscriptions=limits_table.get("max_ws_subscriptions",
                                              defaults.max_ws_subscriptions),
        logs=LogLimits(
            max_results=_positive_int(
                limits_table.get("logs_max_results", log_defaults.max_results),
                "limits.logs_max_results"),
            timeout=_non_negative_float(
                limits_table.get("logs_timeout_seconds", log_defaults.timeout),
                "limits.logs_timeout_seconds"),
            max_parameters=_positive_int(
                limits_table.get("logs_max_parameters", log_defaults.max_parameters),
                "limits.logs_max_parameters"),
        ),
    )
    networks = []
    for index, entry in enumerate(_array_of_tables(document, "networks")):
        where = f"[[networks]] #{index + 1}"
        _unknown(entry, _NETWORK_KEYS, where)
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{where}: 'name' is required")
        hosts = entry.get("hosts", [])
        if isinstance(hosts, str):
            hosts = [hosts]
        if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
            raise ConfigError(f"{where}: 'hosts' must be a list of host names")
        networks.append(NetworkConfig(
            name=name,
            backend=entry.get("backend", "demo"),
            genesis=_path(entry.get("genesis"), base, f"{where}.genesis"),
            blocks=_path(entry.get("blocks"), base, f"{where}.blocks"),
            path=_path(entry.get("path"), base, f"{where}.path"),
            verify_seals=bool(entry.get("verify_seals", True)),
            block_time=_non_negative_float(entry.get("block_time", 0.0), f"{where}.block_time"),
            hosts=tuple(h.lower() for h in hosts),
            port=None if entry.get("port") is None else _port(entry["port"], f"{where}.port"),
        ))
    keys = []
    for index, entry in enumerate(_array_of_tables(document, "keys")):
        where = f"[[keys]] #{index + 1}"
        _unknown(entry, _KEY_KEYS, where)
        key = entry.get("key")
        if not isinstance(key, str):
            raise ConfigError(f"{where}: 'key' is required")
        rate = entry.get("credits_per_second")
        keys.append(KeyConfig(
            key=key,
            daily_credits=_positive_int(entry.get("daily_credits", DEFAULT_DAILY_CREDITS),
                                        f"{where}.daily_credits", allow_zero=True),
            credits_per_second=None if rate is None else _non_negative_float(
                rate, f"{where}.credits_per_second"),
            label=str(entry.get("label", "")),
        ))
    ledger = server.get("ledger", DEFAULT_LEDGER)
    if not isinstance(ledger, str):
        raise ConfigError("[server] ledger must be a path string, redis://HOST:PORT/DB "
                          "or ':memory:'")
    from .ledger import is_redis_url

    if ledger != ":memory:" and not is_redis_url(ledger):
        ledger = str(_path(ledger, base, "[server] ledger"))
    config = ServerConfig(
        host=str(server.get("host", DEFAULT_HOST)),
        port=_port(server.get("port", DEFAULT_PORT), "[server] port"),
        networks=tuple(networks) if networks else (NetworkConfig(name="demo"),),
        keys=tuple(keys),
        limits=limits,
        ledger=ledger,
        access_log=bool(server.get("access_log", True)),
        threads=server.get("threads", 4),
    )
    return validate(config)
