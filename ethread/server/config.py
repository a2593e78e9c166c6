"""What a running service is made of: networks, API keys, limits, the credit ledger.

One dataclass tree, built from ``ethread serve`` flags or a TOML file. Every scalar setting of
the ``[server]`` and ``[limits]`` tables is declared once, with its help text and bounds
(:func:`setting`); the TOML check here and the flags (:mod:`ethread.cli.serve`) both derive
from the declarations, so a flag and a file entry mean the same and pass the same checks.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields, replace
from functools import cache
from pathlib import Path
from typing import Any, Literal, get_type_hints

from ..codec.answers import ANSWER_STYLES, DEFAULT_ANSWERS
from ..home import default_ledger
from ..methods.logs import LogLimits
from .method_rules import invalid_rules

BackendKind = Literal["demo", "import", "db", "era", "fork"]
BACKEND_KINDS: tuple[BackendKind, ...] = ("demo", "import", "db", "era", "fork")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8545
DEMO_KEY = "ethread-demo-key"
"""The key ``ethread serve`` accepts when no key is configured. It guards nothing: the demo
listens on loopback and the key is printed at start, so that the URL can be pasted as is."""
DEFAULT_DAILY_CREDITS = 3_000_000
UNLIMITED_CREDITS = 2**63 - 1
"""The daily balance of the built-in demo key (the ledgers count in int64): a bulk extractor
must not run dry on a server its user started for themself. Configure keys to meter."""
DEFAULT_LEDGER = default_ledger()
"""The credit ledger when none is named: ``credits.ledger`` in ethread's data folder
(:mod:`ethread.home`), made when first used."""
MAX_WORKERS = 256
DEFAULT_BUSY_POLL_US = 250
"""On by default (benchmarks/results/bench_vs_anvil_knob_busy_poll.txt); a process holding more
than two connections, or on a machine without a free core, never polls."""


class ConfigError(ValueError):
    """A configuration that cannot be served; the message names the offending entry."""


@dataclass(frozen=True, slots=True)
class Setting:
    """What a setting's declaration says besides its name, type and default."""

    help: str
    minimum: float | None = None
    maximum: float | None = None
    flag: str | None = None
    """The ``ethread serve`` flag; by default ``--`` and the name with dashes (``--no-`` and
    the name for a setting that is on by default)."""
    metavar: str | None = None
    relative_path: bool = False
    """In a file, a relative path is relative to the file (``:memory:`` and a ``redis://``
    URL stay as they are)."""
    choices: tuple[str, ...] | None = None
    """The values a text setting may take (None: any)."""


def setting(default: Any, help: str, *, minimum: float | None = None,
            maximum: float | None = None, flag: str | None = None, metavar: str | None = None,
            relative_path: bool = False, choices: tuple[str, ...] | None = None) -> Any:
    """Declare a field of :class:`ServerConfig` or :class:`ServiceLimits` as a setting."""
    return field(default=default, metadata={"setting": Setting(
        help, minimum, maximum, flag, metavar, relative_path, choices)})


@dataclass(frozen=True, slots=True)
class Declared:
    """One declared setting: where it lives, its type and default, and its declaration."""

    section: str
    """The TOML table: ``server`` or ``limits``."""
    name: str
    kind: type
    default: Any
    setting: Setting

    @property
    def flag(self) -> str:
        """The command-line flag of this setting (``--no-...`` for a boolean that defaults to on).
        """
        if self.setting.flag is not None:
            return self.setting.flag
        dashed = self.name.replace("_", "-")
        return f"--no-{dashed}" if self.kind is bool and self.default else f"--{dashed}"

    def check(self, value: Any, where: str) -> Any:
        """The value, typed, if it is of the right kind and within bounds; else ConfigError."""
        kind, declared = self.kind, self.setting
        if kind is bool:
            if not isinstance(value, bool):
                raise ConfigError(f"{where} must be true or false, got {value!r}")
            return value
        if kind is str:
            if not isinstance(value, str):
                raise ConfigError(f"{where} must be a string, got {value!r}")
            if declared.choices is not None and value not in declared.choices:
                raise ConfigError(f"{where} must be one of {', '.join(declared.choices)}, "
                                  f"got {value!r}")
            return value
        numeric = int if kind is int else (int, float)
        if isinstance(value, bool) or not isinstance(value, numeric):
            raise ConfigError(f"{where} must be {'an integer' if kind is int else 'a number'}, "
                              f"got {value!r}")
        low, high = declared.minimum, declared.maximum
        if (low is not None and value < low) or (high is not None and value > high):
            bounds = (f"at least {low:g}" if high is None
                      else f"between {low if low is not None else '-inf':g} and {high:g}")
            raise ConfigError(f"{where} must be {bounds}, got {value!r}")
        return float(value) if kind is float else value


_LOG_DEFAULTS = LogLimits()


@dataclass(frozen=True, slots=True)
class ServiceLimits:
    """The ``[limits]`` table: the transport's limits and the core's eth_getLogs limits.

    Defaults follow geth: a 5 MiB body, 1,000 calls per batch, a 25 MB answer, 5 s for an
    eth_call, 30 s each for a request's headers and body.
    """

    max_body_bytes: int = setting(5 * 1024 * 1024, "largest HTTP request body in bytes",
                                  minimum=1, metavar="N")
    max_batch_calls: int = setting(1_000, "most calls in one batch request", minimum=1,
                                   metavar="N")
    max_ws_message_bytes: int = setting(5 * 1024 * 1024, "largest WebSocket message in bytes",
                                        minimum=1, metavar="N")
    max_ws_subscriptions: int = setting(100, "most subscriptions on one WebSocket connection",
                                        minimum=1, metavar="N")
    max_response_bytes: int = setting(
        25_000_000, "largest answer (one call or a whole batch) in bytes; the calls past it "
        "answer -32003 'response too large' and are not run", minimum=1, metavar="N")
    call_timeout_seconds: float = setting(
        5.0, "eth_call, eth_estimateGas, eth_createAccessList: time limit in seconds, after "
        "which execution stops (0: none)", minimum=0, flag="--call-timeout", metavar="S")
    ws_max_unread_bytes: int = setting(
        16 * 1024 * 1024, "bytes of answers and notifications a WebSocket client may leave "
        "unread before it is disconnected (one answer of any size is always allowed)",
        minimum=1, metavar="N")
    header_timeout_seconds: float = setting(
        30.0, "seconds a client has to send a request's headers (the whole request line and "
        "headers), after which the connection is closed", minimum=0.001,
        flag="--header-timeout", metavar="S")
    body_timeout_seconds: float = setting(
        30.0, "seconds a client has to send a request's body once its headers are in",
        minimum=0.001, flag="--body-timeout", metavar="S")
    logs_max_results: int = setting(_LOG_DEFAULTS.max_results,
                                    "eth_getLogs: most logs in one answer", minimum=1,
                                    metavar="N")
    logs_timeout_seconds: float = setting(_LOG_DEFAULTS.timeout,
                                          "eth_getLogs: deadline in seconds", minimum=0,
                                          flag="--logs-timeout", metavar="S")
    logs_max_parameters: int = setting(_LOG_DEFAULTS.max_parameters,
                                       "eth_getLogs: most addresses plus topics in one filter",
                                       minimum=1, metavar="N")

    # -- fairness between keys and bounds on work (issue 38) ---------------------------------
    trace_timeout_seconds: float = setting(
        10.0, "debug_trace*, trace_*: the longest one transaction's trace (or a traced call) "
        "runs, whatever 'timeout' the request asks for", minimum=0.001, flag="--trace-timeout",
        metavar="S")
    request_timeout_seconds: float = setting(
        30.0, "seconds one request (a batch: all its calls together) may run in a worker "
        "thread; then its running call stops and the calls not done answer -32000 (0: none)",
        minimum=0, flag="--request-timeout", metavar="S")
    slow_requests_per_key: int = setting(
        2, "requests with slow calls (eth_call, eth_getLogs, traces, ...) one API key may have "
        "running at once in a worker; past it a request answers -32005 with Retry-After "
        "and is not charged (0: no limit)", minimum=0, metavar="N")
    ws_connections_per_key: int = setting(
        20, "WebSocket connections one API key may hold open at once in a worker (0: no limit)",
        minimum=0, metavar="N")
    ws_subscriptions_per_key: int = setting(
        200, "subscriptions one API key may hold at once over all its WebSocket connections "
        "in a worker (0: no limit)", minimum=0, metavar="N")
    fork_timeout_seconds: float = setting(
        15.0, "a forked chain (--fork-url): seconds one exchange with the forked node may take "
        "in all, its retries included", minimum=0.001, flag="--fork-timeout", metavar="S")
    fork_reads_per_call: int = setting(
        1_000, "a forked chain: values one call (an eth_call, a trace) may read from the "
        "forked node; past it the call answers an error saying so (0: no limit)", minimum=0,
        metavar="N")

    @property
    def logs(self) -> LogLimits:
        """The core's eth_getLogs limits."""
        return LogLimits(max_results=self.logs_max_results, timeout=self.logs_timeout_seconds,
                         max_parameters=self.logs_max_parameters)


@dataclass(frozen=True, slots=True)
class NetworkConfig:
    """One chain served: ``hosts`` (Host header names) and ``port`` (a port of its own)
    select it; a network with neither is the default of the main port."""

    name: str
    backend: BackendKind = "demo"
    genesis: Path | None = None
    blocks: Path | None = None
    path: Path | None = None
    """The LevelDB directory (``db``) or the Era1 folder (``era``)."""
    verify_seals: bool = True
    block_time: float = 0.0
    """Seconds between blocks the demo chain mines while serving (0: no mining)."""
    txpool: bool = False
    """Take transactions (eth_sendRawTransaction) into a pool and answer txpool_* and
    testing_buildBlockV1 (``import`` and ``db`` chains; the demo chain sends anyway)."""
    record_traces: int = 0
    """Trace every transaction of the chain's latest this many blocks at start (the opcode
    logger's and callTracer's default configurations) and answer debug_traceTransaction for
    them from the record, as anvil's ``--steps-tracing`` does (0: none)."""
    state: Path | None = None
    """The dev chain's state file (anvil's ``--state``): loaded at start, written at exit."""
    fork_url: str | None = None
    """``fork``: the JSON-RPC URL of the node whose chain the dev chain continues."""
    fork_block: int | None = None
    """``fork``: the block forked (the node's latest when None)."""
    fork_cache: Path | None = None
    """``fork``: an LMDB directory keeping what was fetched, for later runs (None: memory)."""
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
    methods: tuple[str, ...] = ()
    """Rules of the methods it may call (empty: every one): names, namespaces (``debug_*``),
    denials (``!trace_*``); see :mod:`.method_rules`."""


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """The whole service; its scalar settings are the ``[server]`` table."""

    host: str = setting(DEFAULT_HOST, "address to listen on")
    port: int = setting(DEFAULT_PORT, "port to listen on (0: any free port)", minimum=0,
                        maximum=65535)
    networks: tuple[NetworkConfig, ...] = (NetworkConfig(name="demo"),)
    keys: tuple[KeyConfig, ...] = ()
    limits: ServiceLimits = field(default_factory=ServiceLimits)
    ledger: str = setting(DEFAULT_LEDGER, "the credit ledger: a *.ledger file (memory-mapped, "
                          "shared by the processes of one machine, holds 65,536 keys a day), "
                          "any other path for a SQLite file (e.g. *.sqlite3, shared the same way, "
                          "slower), redis://HOST:PORT/DB (shared by a fleet), or :memory: (one "
                          "process, forgotten at exit)", metavar="PATH|URL",
                          relative_path=True)
    workers: int = setting(1, "worker processes answering on the same port(s), started and "
                           "replaced by a supervisor (1: this process serves, no supervisor)",
                           minimum=1, maximum=MAX_WORKERS, metavar="N")
    answers: str = setting(DEFAULT_ANSWERS.name, "whose answers to give: geth-1.17 (transaction "
                           "objects carry blockTimestamp) or geth-1.16 (they do not, as the "
                           "2025 execution-apis suite recorded)", metavar="STYLE",
                           choices=tuple(ANSWER_STYLES))
    access_log: bool = setting(True, "log each request (key masked)")
    lean_http: bool = setting(True, "answer JSON-RPC POSTs on the lean path: from the HTTP "
                              "parser, one write per answer, no ASGI (the same bytes as the "
                              "ASGI path)")
    busy_poll_us: int = setting(
        DEFAULT_BUSY_POLL_US, "microseconds a worker holding at most two connections keeps "
        "polling them after a read before it sleeps, so that a client sending one request "
        "after another is met by a running process instead of waking a sleeping one (0: "
        "sleep at once)", minimum=0, maximum=100_000, metavar="US")
    admission_turns: bool = setting(True, "charge together, in one ledger transaction, the "
                                    "requests a worker holding more than two connections reads "
                                    "in one turn of its loop (lean path)")
    fair_accept: bool = setting(True, "let each of several workers accept one connection at a "
                                "time, the least loaded first, instead of uvicorn's greedy "
                                "accept")
    shared_fragments: bool = setting(True, "share among several workers the JSON they encoded "
                                     "for history, so that each block is decoded once")
    threads: int = setting(4, "worker threads that run the quick calls of the synchronous core "
                           "off the event loop", minimum=1, metavar="N")
    slow_threads: int = setting(16, "worker threads for calls that can run long (eth_call, "
                                "eth_getLogs, eth_getProof, ...), each bounded by its deadline",
                                minimum=1, metavar="N")
    metrics: bool = setting(False, "answer GET /metrics in the Prometheus text format (every "
                            "worker's counts added up)")
    admin_token_file: str = setting(
        "", "a file holding the admin token (at least 16 characters; or set "
        "ETHREAD_ADMIN_TOKEN): turns on the admin API and the dashboard's admin pages on "
        "admin_host:admin_port", metavar="FILE", relative_path=True)
    admin_host: str = setting("127.0.0.1", "address of the admin API and dashboard (loopback: "
                              "only this machine reaches it)")
    admin_port: int = setting(8550, "port of the admin API and dashboard (0: any free port)",
                              minimum=0, maximum=65535)
    dashboard: bool = setting(False, "serve the developer dashboard at /dashboard on the "
                              "JSON-RPC port(s) too, where a key's holder logs in with the key "
                              "(needs the admin token: it signs the sessions)")
    max_key_failures: int = setting(20, "unknown or revoked API keys a client address may "
                                    "present in a minute (per worker) before it is refused "
                                    "for a while (1 s, doubling with each time)", minimum=1,
                                    metavar="N")

    def with_default_key(self) -> ServerConfig:
        """The demo key when no key is configured: a server with no key would refuse all."""
        if self.keys:
            return self
        return replace(self, keys=(KeyConfig(key=DEMO_KEY, label="demo",
                                             daily_credits=UNLIMITED_CREDITS),))


# -- the declared settings --------------------------------------------------------------------

SECTIONS: dict[str, type] = {"server": ServerConfig, "limits": ServiceLimits}
"""Each TOML table of scalar settings and the dataclass that declares them."""


@cache
def declared_settings() -> tuple[Declared, ...]:
    """Every setting of every section, in declaration order."""
    out = []
    for section, cls in SECTIONS.items():
        hints = get_type_hints(cls)
        for f in fields(cls):
            declared = f.metadata.get("setting")
            if declared is not None:
                out.append(Declared(section, f.name, hints[f.name], f.default, declared))
    return tuple(out)


def _section_of(config: ServerConfig, section: str) -> Any:
    return config.limits if section == "limits" else config


# -- validation, shared by flags and file ----------------------------------------------------


def _non_negative_int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where} must be a non-negative integer, got {value!r}")
    return value


def _non_negative_float(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ConfigError(f"{where} must be a non-negative number, got {value!r}")
    return float(value)


def _port(value: Any, where: str) -> int:
    port = _non_negative_int(value, where)
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
        _non_negative_int(entry.daily_credits, "daily_credits")
        if entry.credits_per_second is not None and entry.credits_per_second <= 0:
            raise ConfigError("credits_per_second must be positive")
    for declared in declared_settings():
        declared.check(getattr(_section_of(config, declared.section), declared.name),
                       f"{declared.section}.{declared.name}")
    _check_ledger(config.ledger)
    _check_ledger_room(config)
    _check_workers(config)
    return config


def _check_ledger(ledger: str) -> None:
    from .billing.ledger import check_redis_url, is_redis_url

    if not isinstance(ledger, str) or not ledger:
        raise ConfigError("ledger must be a *.ledger file, a SQLite file, "
                          "redis://HOST:PORT/DB or :memory:")
    if is_redis_url(ledger):
        problem = check_redis_url(ledger)
        if problem is not None:
            raise ConfigError(f"ledger: {problem}")
    if ledger == DEFAULT_LEDGER:  # ethread's data folder, made on first use
        try:
            Path(ledger).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"ledger: the data folder {Path(ledger).parent} cannot be made "
                              f"({exc.strerror}); set ETHREAD_HOME or name a --ledger") from None


def _check_ledger_room(config: ServerConfig) -> None:
    """A mapped ledger holds a fixed number of keys a day: more configured keys than that would
    be refused one by one once it fills, so they are refused at start instead."""
    from .billing.ledger import ledger_engine

    if ledger_engine(config.ledger) != "mapped":
        return
    from .billing.ledger_mapped import DEFAULT_SLOTS

    if len(config.keys) > DEFAULT_SLOTS:
        raise ConfigError(f"{len(config.keys)} keys, but a *.ledger file holds {DEFAULT_SLOTS:,} "
                          f"keys a day: use a SQLite ledger (*.sqlite3) or Redis")


def _check_workers(config: ServerConfig) -> None:
    """What cannot be shared by several worker processes (the bounds are the declaration's)."""
    if config.workers == 1:
        return
    if config.ledger == ":memory:":
        raise ConfigError("a ':memory:' ledger lives in one process, so each worker would "
                          "grant the whole balance: with workers above 1 use a *.ledger or "
                          "SQLite file or redis://HOST:PORT/DB")
    for network in config.networks:
        if network.backend == "db" and network.path is not None:
            _check_shared_store(network.name, network.path)
        if network.block_time:
            raise ConfigError(
                f"network {network.name!r}: a mining demo chain ('block_time') grows in one "
                "process, so workers would serve different chains: use workers = 1")
        if network.txpool:
            raise ConfigError(
                f"network {network.name!r}: a transaction pool ('txpool') lives in one "
                "process, so workers would hold different pools: use workers = 1")
        if network.state is not None or network.backend == "fork":
            raise ConfigError(
                f"network {network.name!r}: a dev chain (a state file, a fork) lives in one "
                "process, and workers would each grow their own: use workers = 1")


def _check_shared_store(name: str, path: Path) -> None:
    """Workers share a store only when its engine admits several processes (LMDB)."""
    from ..backends.open import store_engine
    from ..errors import StoreError

    try:
        engine = store_engine(path)
    except StoreError as exc:
        raise ConfigError(f"network {name!r}: {exc.message}") from None
    if engine is None:
        raise ConfigError(f"network {name!r}: no ethread store at {path}")
    if engine == "leveldb":
        raise ConfigError(
            f"network {name!r}: the LevelDB store at {path} can be opened by one process "
            "only: serve it with workers = 1 (--workers 1), or make an LMDB store, which "
            "every worker reads at once: 'ethread copy --db SRC --to DST --engine lmdb' "
            "converts this one, 'ethread import --engine lmdb --db DST ...' imports afresh")


def _check_network(network: NetworkConfig) -> None:
    where = f"network {network.name!r}"
    if network.backend not in BACKEND_KINDS:
        raise ConfigError(f"{where}: backend must be one of {', '.join(BACKEND_KINDS)}")
    if network.backend == "import" and network.genesis is None:
        raise ConfigError(f"{where}: an imported chain needs 'genesis' (and usually 'blocks')")
    if network.backend in ("db", "era") and network.path is None:
        raise ConfigError(f"{where}: backend {network.backend!r} needs 'path'")
    if network.backend not in ("demo", "fork") and network.block_time:
        raise ConfigError(f"{where}: only a dev chain (demo, fork) mines ('block_time')")
    if network.state is not None and network.backend not in ("demo", "fork"):
        raise ConfigError(f"{where}: only a dev chain (demo, fork) keeps a state file ('state')")
    if (network.backend == "fork") != (network.fork_url is not None):
        raise ConfigError(f"{where}: a forked chain (backend 'fork') needs 'fork_url', and "
                          "only it takes one")
    if network.backend != "fork" and (network.fork_block is not None
                                      or network.fork_cache is not None):
        raise ConfigError(f"{where}: 'fork_block' and 'fork_cache' are a forked chain's")
    if network.fork_block is not None and network.fork_block < 0:
        raise ConfigError(f"{where}: 'fork_block' must not be negative")
    if network.txpool and network.backend not in ("import", "db"):
        raise ConfigError(f"{where}: a transaction pool ('txpool') needs a chain with state: "
                          "an imported chain (--genesis) or a store (--db)")


# -- the TOML file ---------------------------------------------------------------------------

_NETWORK_KEYS = {f.name for f in fields(NetworkConfig)}
_KEY_KEYS = {f.name for f in fields(KeyConfig)}


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
    """The server configuration a parsed TOML document describes (paths relative to ``base``);
    unknown keys are errors."""
    from .billing.ledger import is_redis_url

    _unknown(document, {*SECTIONS, "networks", "keys"}, "top level")
    values: dict[str, dict[str, Any]] = {}
    for section in SECTIONS:
        table = _table(document, section)
        declared = {d.name: d for d in declared_settings() if d.section == section}
        _unknown(table, set(declared), f"[{section}]")
        values[section] = {}
        for entry_name, declaration in declared.items():
            where = f"[{section}] {entry_name}"
            if entry_name in table:
                value = declaration.check(table[entry_name], where)
            elif declaration.setting.relative_path and declaration.default:
                value = declaration.default  # (absolute: the default ledger, in the data folder)
            else:
                continue
            if (declaration.setting.relative_path and value and value != ":memory:"
                    and not is_redis_url(value)):
                value = str(_path(value, base, where))
            values[section][entry_name] = value
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
            txpool=bool(entry.get("txpool", False)),
            record_traces=_non_negative_int(entry.get("record_traces", 0),
                                            f"{where}.record_traces"),
            state=_path(entry.get("state"), base, f"{where}.state"),
            fork_url=entry.get("fork_url"),
            fork_block=entry.get("fork_block"),
            fork_cache=_path(entry.get("fork_cache"), base, f"{where}.fork_cache"),
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
        methods = entry.get("methods", [])
        if not isinstance(methods, list) or invalid_rules(methods):
            raise ConfigError(f"{where}.methods: a list of method names, namespaces ending in * "
                              f"or either after ! (denied); not {invalid_rules(methods) or methods!r}")
        keys.append(KeyConfig(
            key=key,
            daily_credits=_non_negative_int(entry.get("daily_credits", DEFAULT_DAILY_CREDITS),
                                            f"{where}.daily_credits"),
            credits_per_second=None if rate is None else _non_negative_float(
                rate, f"{where}.credits_per_second"),
            label=str(entry.get("label", "")),
            methods=tuple(methods),
        ))
    config = ServerConfig(
        networks=tuple(networks) if networks else (NetworkConfig(name="demo"),),
        keys=tuple(keys),
        limits=ServiceLimits(**values["limits"]),
        **values["server"],
    )
    return validate(config)
