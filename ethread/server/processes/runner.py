"""Putting a service together and running it under uvicorn.

To fail early and cheaply, the ledger is opened first, then the networks, then the sockets are
bound, and only then does uvicorn start. :func:`listen` does the first three (all a supervisor
does before forking, :mod:`.workers`), :func:`assemble` builds the service on the bound sockets
(what each worker does), :func:`prepare` both. uvicorn's own access log is off (it would print
keys).
"""

from __future__ import annotations

import asyncio
import gc
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn

from ..access_log import install_key_masking
from ..billing.credits import Billing, open_ledger
from ..busy_poll import polling
from ..config import (
    DEFAULT_BUSY_POLL_US,
    DEMO_KEY,
    ConfigError,
    ServerConfig,
    ServiceLimits,
    validate,
)
from ..execution import Execution
from ..http.app import RpcApp
from ..http.lean import rpc_protocol
from ..http.protocol import bounded_protocol
from ..keys.abuse import FailedAttempts
from ..keys.auth import KeyRing
from ..keys.keystore import open_keystore
from ..keys.sync import KeySync
from ..metrics import Metrics, count_hits, make_directory, remove_directory
from ..networks import Network, NetworkRouter, open_networks
from ..observe import Observer
from ..service import Service
from ..websocket.protocol import websocket_protocol
from ..workers_board import WorkerBoard
from .fair_accept import ConnectionShare, FairListener

GRACEFUL_SHUTDOWN_SECONDS = 5
ADMIN_TOKEN_VARIABLE = "ETHREAD_ADMIN_TOKEN"
MIN_ADMIN_TOKEN = 16
MAX_ADMIN_TOKEN = 512


@dataclass
class Listening:
    """A validated configuration, its networks opened and its sockets bound: not serving yet."""

    config: ServerConfig
    networks: list[Network]
    sockets: list[socket.socket]
    main_port: int
    admin_port: int | None = None
    """The port of the admin API and dashboard (None: no admin token, none served)."""
    admin_token: str | None = field(default=None, repr=False)
    metrics_dir: str | None = None
    """Where every process writes its metrics (None: metrics off)."""

    def port_of(self, network: Network) -> int:
        """The port ``network`` is served on."""
        return self.main_port if network.port is None else network.port

    def urls(self) -> list[tuple[str, str, str]]:
        """(network, HTTP URL, WebSocket URL) with the first key, masked unless it is the
        public demo key."""
        keys = self.config.keys
        shown = DEMO_KEY if keys and keys[0].key == DEMO_KEY else "<API_KEY>"
        host = self.config.host
        out = []
        for network in self.networks:
            name = network.hosts[0] if network.hosts else host
            base = f"{name}:{self.port_of(network)}"
            out.append((network.name, f"http://{base}/v3/{shown}", f"ws://{base}/ws/v3/{shown}"))
        return out

    def close(self) -> None:
        """Close the listening sockets; remove the metric files."""
        for sock in self.sockets:
            sock.close()
        remove_directory(self.metrics_dir)
        self.metrics_dir = None


@dataclass
class PreparedServer:
    """A service whose sockets are bound, ready to run (in this thread or another)."""

    config: ServerConfig
    app: RpcApp
    service: Service
    sockets: list[socket.socket]
    main_port: int
    networks: list[Network]
    server: Any = field(default=None)
    on_started: Callable[[], None] | None = None
    """Called in the serving thread once uvicorn accepts connections (a worker reports in)."""

    def run(self) -> None:
        """Serve until SIGINT/SIGTERM (or :meth:`stop`); returns after a graceful shutdown."""
        self._server().run(sockets=self.sockets)

    def stop(self) -> None:
        """Ask the server to exit (it finishes the requests in flight)."""
        self._server().should_exit = True

    def _server(self) -> Any:
        if self.server is None:
            config = self.config
            uv_config = uvicorn_config(self.app, config.limits, lean=config.lean_http,
                                       busy_poll_us=config.busy_poll_us,
                                       gather=config.admission_turns)
            service = self.service
            self.server = _Server(uv_config, self.on_started, service.execution,
                                  board=service.workers, slot=service.slot,
                                  fair=config.fair_accept)
        return self.server


def uvicorn_config(app: Any, limits: ServiceLimits, lean: bool = False,
                   busy_poll_us: int = DEFAULT_BUSY_POLL_US, gather: bool = True,
                   ) -> uvicorn.Config:
    """uvicorn's settings for serving ``app`` (also the benchmarks' bare reference app's).
    ``lean``: take the lean path (:mod:`ethread.server.http.lean`); ``busy_poll_us``: the
    polling window (:mod:`.busy_poll`); ``gather``: the lean path's admission turns."""
    poll = polling(busy_poll_us / 1e6)  # one window for the server's loop, every protocol's
    protocol = (rpc_protocol(app, limits.header_timeout_seconds, poll, gather) if lean
                else bounded_protocol(limits.header_timeout_seconds, poll))
    return uvicorn.Config(
        app,
        loop="uvloop",
        http=protocol,
        ws=websocket_protocol(poll),
        ws_max_size=limits.max_ws_message_bytes,
        ws_per_message_deflate=False,
        lifespan="on",
        access_log=False,
        log_config=None,
        server_header=False,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        backlog=4096,
    )


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` that worker processes can inherit; a clear OSError if
    the address cannot be used."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(exc.errno, f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(4096)
    sock.set_inheritable(True)
    return sock


def listen(config: ServerConfig, networks: list[Network] | None = None, *,
           progress: bool = True) -> Listening:
    """Validate, check that the ledger opens, open the networks, bind the sockets.
    ``networks`` replaces the configured ones (a test serving a chain it built)."""
    config = validate(config.with_default_key())
    install_key_masking()
    token = admin_token(config)
    if config.dashboard and token is None:
        raise ConfigError("the dashboard needs an admin token (admin_token_file or "
                          f"{ADMIN_TOKEN_VARIABLE}): it signs the dashboard's sessions")
    open_ledger(config.ledger).close()  # fails here, before any import, when unusable
    open_keystore(config.ledger).close()
    sockets: list[socket.socket] = []
    admin_port = None
    try:
        if networks is None:
            networks = open_networks(config, progress=progress)
        main = bind(config.host, config.port)
        sockets.append(main)
        main_port = main.getsockname()[1]
        by_port: dict[int, int] = {config.port: main_port}
        for network in networks:
            if network.port is None or network.port in by_port:
                if network.port is not None:
                    network.port = by_port[network.port]
                continue
            extra = bind(config.host, network.port)
            sockets.append(extra)
            by_port[network.port] = extra.getsockname()[1]
            network.port = by_port[network.port]
        if token is not None:
            if config.admin_port and config.admin_port in by_port:
                raise ConfigError(f"admin_port {config.admin_port} is a JSON-RPC port too: "
                                  "give the admin API a port of its own")
            admin = bind(config.admin_host, config.admin_port)
            sockets.append(admin)
            admin_port = admin.getsockname()[1]
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return Listening(config, networks, sockets, main_port, admin_port, token,
                     make_directory() if config.metrics else None)


def admin_token(config: ServerConfig) -> str | None:
    """The admin token: the file's first line, else the environment's; None when neither is
    given. A token shorter than :data:`MIN_ADMIN_TOKEN` is refused."""
    if config.admin_token_file:
        try:
            with open(config.admin_token_file, encoding="utf-8") as file:
                token = file.read(MAX_ADMIN_TOKEN + 2).strip()
        except OSError as exc:
            raise ConfigError(f"admin_token_file: cannot read {config.admin_token_file}: "
                              f"{exc.strerror}") from None
        except UnicodeDecodeError:
            raise ConfigError("admin_token_file: the token must be text") from None
    else:
        token = os.environ.get(ADMIN_TOKEN_VARIABLE, "").strip()
        if not token:
            return None
    if not MIN_ADMIN_TOKEN <= len(token) <= MAX_ADMIN_TOKEN or any(
            c.isspace() or not c.isprintable() for c in token):
        raise ConfigError(f"the admin token must be {MIN_ADMIN_TOKEN} to {MAX_ADMIN_TOKEN} "
                          "printable characters without spaces")
    return token


class Stopped(Exception):
    """SIGTERM (or, in a worker, SIGINT) after uvicorn's graceful shutdown has run: a serving
    process then exits 0."""


def stop_requested(signum: int, frame: object) -> None:
    """The signal handler that turns a stop into :class:`Stopped`."""
    raise Stopped


def settle_heap() -> None:
    """Before a serving process takes its first request: what it loaded (a chain in memory
    is millions of objects, none of which becomes garbage) moves out of the garbage
    collector's sight, which would otherwise walk it all now and then."""
    gc.collect()
    gc.freeze()


def assemble(listening: Listening, board: WorkerBoard | None = None, slot: int = 0,
             ) -> PreparedServer:
    """The service over bound sockets, with its own ledger connection and thread pools.
    With a ``board``, the server marks ``slot`` as up once it accepts connections, and
    ``/health`` reports the board."""
    config = listening.config
    ledger = open_ledger(config.ledger)
    metrics = Metrics(listening.metrics_dir) if listening.metrics_dir else None
    observer = Observer(metrics)
    keys = KeyRing(config.keys)
    sync = KeySync(open_keystore(config.ledger), keys, observer)
    sync.load()
    service = Service(
        router=NetworkRouter(listening.networks, listening.main_port),
        keys=keys,
        billing=Billing(ledger, metrics),
        execution=Execution(config.threads, config.slow_threads,
                            request_timeout=config.limits.request_timeout_seconds),
        limits=config.limits,
        access_log=config.access_log,
        workers=board,
        slot=slot,
        observer=observer,
        key_sync=sync,
        failed_keys=FailedAttempts(limit=config.max_key_failures),
    )
    if metrics is not None:
        for network in listening.networks:
            _count_cache_hits(network, metrics)
    if listening.admin_token is not None:
        from ..admin.site import AdminSite

        service.admin = AdminSite(service, listening.admin_token, listening.admin_port,
                                  public_dashboard=config.dashboard)
    app = RpcApp(service)
    prepared = PreparedServer(config, app, service, listening.sockets, listening.main_port,
                              listening.networks)
    if board is not None:
        prepared.on_started = lambda: board.mark(slot, True)
    return prepared


def _count_cache_hits(network: Network, metrics: Metrics) -> None:
    """Count the hits of the network's answer caches (the dispatcher's per call, and its
    whole-body answers) in ``metrics``."""
    dispatcher = network.dispatcher
    for cache, name in ((dispatcher.cache, "calls"), (dispatcher.bodies, "bodies")):
        cache.get = count_hits(cache.get, metrics.hit_counter(network.name, name))  # type: ignore[method-assign]


def prepare(config: ServerConfig, networks: list[Network] | None = None, *,
            progress: bool = True) -> PreparedServer:
    """:func:`listen` then :func:`assemble`: a whole service in this process."""
    listening = listen(config, networks, progress=progress)
    try:
        return assemble(listening)
    except BaseException:
        listening.close()
        raise


class _Server(uvicorn.Server):
    """uvicorn's server, telling ``on_started`` when it accepts connections, and on shutdown
    first cancelling the work in flight, so that each running call answers a JSON-RPC error at
    once rather than a text/plain 500 when uvicorn's grace period runs out."""

    def __init__(self, config: uvicorn.Config, on_started: Callable[[], None] | None,
                 execution: Execution, board: WorkerBoard | None = None, slot: int = 0,
                 fair: bool = True) -> None:
        super().__init__(config)
        self._on_started = on_started
        self.execution = execution
        self.board = board
        """The supervisor's board when this process is one of several workers (at ``slot``):
        then it accepts as :mod:`.fair_accept` says instead of uvicorn's greedy accept."""
        self.slot = slot
        self.fair = fair
        """False: uvicorn's own accept even with a board (``--no-fair-accept``)."""
        self._listeners: list[FairListener] = []

    def _holding(self) -> int:
        """Connections this worker holds, counting those accepted but not yet set up."""
        return len(self.server_state.connections) + sum(
            listener.pending for listener in self._listeners)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        if self.board is None or not sockets or not self.fair:
            await super().startup(sockets=sockets)
        else:
            await super().startup(sockets=[])  # the lifespan; no listener of uvicorn's
            loop = asyncio.get_running_loop()
            config = self.config

            def protocol() -> asyncio.Protocol:
                return config.http_protocol_class(  # type: ignore[call-arg]
                    config=config, server_state=self.server_state,
                    app_state=self.lifespan.state, _loop=loop)

            share = ConnectionShare(self.board, self.slot, self._holding)
            self._listeners = [FairListener(loop, sock, protocol, share) for sock in sockets]
            self.servers = self._listeners  # type: ignore[assignment]  # what shutdown needs
        if self.started and self._on_started is not None:
            self._on_started()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.execution.drain()
        await super().shutdown(sockets)


class ServerThread:
    """A prepared server running in a background thread: for tests and in-process use."""

    def __init__(self, prepared: PreparedServer) -> None:
        self.prepared = prepared
        self._server = prepared._server()  # made here, before the thread can race for it
        self._thread = threading.Thread(target=prepared.run, name="ethread-server",
                                        daemon=True)

    @property
    def port(self) -> int:
        """The main port the server listens on."""
        return self.prepared.main_port

    def start(self, timeout: float = 30.0) -> ServerThread:
        """Start serving in the thread and wait until the server is up (raises after ``timeout``
        seconds otherwise)."""
        self._thread.start()
        server = self._server
        deadline = time.monotonic() + timeout
        while not getattr(server, "started", False):
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 15.0) -> None:
        """Stop the server, wait for the thread and close the sockets."""
        self.prepared.stop()
        self._thread.join(timeout)
        for sock in self.prepared.sockets:
            sock.close()

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

