"""Served networks: opening each one's backend, and finding the one a request addresses.

A network is addressed by the listening port the connection arrived on and the Host header:
a network that names the host wins; otherwise the network on that port that names no host;
otherwise the request gets a clear "unknown network" error, never another chain's data.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..backend import Backend
from ..codec.answers import answer_style
from ..codec.stored_answers import lacks_answers
from ..devchain.demo import demo_chain
from ..progress import Progress, ProgressBar
from ..rpc.context import Context
from ..rpc.dispatcher import Dispatcher
from .config import NetworkConfig, ServerConfig, ServiceLimits

if TYPE_CHECKING:
    from ..backends.memory import MemoryBackend

log = logging.getLogger("ethread.server")


@dataclass(eq=False)
class Network:
    """A backend being served, with its dispatcher (and answer cache) and, for the demo
    chain, the dev chain that can mine more blocks."""

    name: str
    backend: Backend
    dispatcher: Dispatcher
    hosts: tuple[str, ...] = ()
    port: int | None = None
    miner: Any = None
    """A :class:`ethread.devchain.DevChain` when the network can grow on demand."""
    block_time: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)


def make_network(name: str, backend: Backend, context: Context | None = None, *,
                 hosts: tuple[str, ...] = (), port: int | None = None, miner: Any = None,
                 block_time: float = 0.0) -> Network:
    """A served network. With a ``miner`` (a dev chain, or the demo holding one) the network
    can send: its dispatcher gets the dev chain, which automines each transaction when
    ``block_time`` is 0 and leaves them for the interval miner otherwise."""
    chain = getattr(miner, "chain", miner)
    if chain is not None:
        chain.automine = block_time <= 0
        addresses = tuple(account.address for account in chain.accounts)
        context = (context or Context()).for_dev_chain(chain, addresses)
    dispatcher = Dispatcher(backend, context) if context is not None else Dispatcher(backend)
    return Network(name, backend, dispatcher, hosts, port, miner, block_time)


class NetworkRouter:
    """(listening port, Host) -> network."""

    def __init__(self, networks: list[Network], main_port: int) -> None:
        self.networks = networks
        self.main_port = main_port
        self._by_host: dict[tuple[int, str], Network] = {}
        self._default: dict[int, Network] = {}
        for network in networks:
            port = main_port if network.port is None else network.port
            for host in network.hosts:
                self._by_host[(port, host)] = network
            if not network.hosts:
                self._default[port] = network

    def find(self, port: int | None, host_header: str | None) -> Network | None:
        """The network served for a request on ``port`` with this Host header, or None."""
        if port is None:
            port = self.main_port
        if host_header and self._by_host:
            host = _host_name(host_header)
            found = self._by_host.get((port, host))
            if found is not None:
                return found
        return self._default.get(port)


def _host_name(header: str) -> str:
    """The host of a Host header, lower-cased, without port (IPv6 brackets kept)."""
    header = header.strip().lower()
    if header.startswith("["):
        end = header.find("]")
        return header[: end + 1] if end != -1 else header
    return header.split(":", 1)[0]


# -- opening backends ------------------------------------------------------------------------


def open_network(config: NetworkConfig, context: Context, progress: Progress | None = None,
                 limits: ServiceLimits | None = None) -> Network:
    """Open (and for ``import`` and ``demo``, build in memory) the network's backend; a forked
    chain speaks to its node within ``limits`` (the defaults when None)."""
    miner: Any = None
    if config.backend == "demo":
        backend, miner = _demo_backend()
    elif config.backend == "fork":
        backend, miner = _forked_backend(config, limits or ServiceLimits())
    elif config.backend == "import":
        backend = _imported_backend(config, progress)
    else:
        backend = _storage_backend(config)
    if config.txpool:
        from ..devchain.served_pool import ServedPool

        context = context.for_txpool(ServedPool(backend))  # type: ignore[arg-type]
    if config.state is not None:
        load_state_file(getattr(miner, "chain", miner), config.state)
    network = make_network(config.name, backend, context, hosts=config.hosts, port=config.port,
                           miner=miner, block_time=config.block_time)
    network.info["backend"] = config.backend
    if config.state is not None:
        network.info["state"] = config.state
    if config.record_traces:
        started = time.perf_counter()
        recorded = network.dispatcher.record_traces(config.record_traces)
        log.info("network %s: %d transactions' traces recorded in %.1f s", config.name, recorded,
                 time.perf_counter() - started)
        chain = getattr(miner, "chain", miner)
        if chain is not None:  # a dev chain: each block it mines is recorded as it is mined
            chain.after_block.append(network.dispatcher.record_block)
    return network


def load_state_file(chain: Any, path: Path) -> None:
    """Load a dev chain's state file (anvil's ``--state``) when it exists; a file that is
    not a state raises :class:`~ethread.errors.InvalidParams` naming what is wrong."""
    from ..errors import InvalidParams

    if path.exists():
        try:
            chain.load_state(path.read_bytes())
        except InvalidParams as exc:
            raise InvalidParams(f"state file {path}: {exc}") from None


def write_state_file(chain: Any, path: Path) -> None:
    """Write a dev chain's state to ``path``: beside it, then renamed over it, so that an
    interrupted write leaves the old file."""
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(chain.dump_state())
    partial.replace(path)


def save_state_files(networks: list[Network]) -> list[Path]:
    """Write each network's dev chain state to its state file; the files written."""
    written = []
    for network in networks:
        path = network.info.get("state")
        if path is not None and network.miner is not None:
            write_state_file(getattr(network.miner, "chain", network.miner), path)
            written.append(path)
    return written


def _demo_backend() -> tuple[Backend, Any]:
    """The dev chain's demo, built in memory: blocks, every transaction type, logs, uncles."""
    from ..backends.memory import MemoryBackend

    backend = MemoryBackend()
    return backend, demo_chain(backend)


def forked_memory_backend() -> MemoryBackend:
    """An empty memory backend for a forked chain (``serve --fork-url``, ``node --fork-url``):
    its history below the fork is the forked node's, fetched when first asked, so its lookups
    are not answered on the event loop, as a memory backend's are."""
    from ..backends.memory import MemoryBackend

    class ForkedMemoryBackend(MemoryBackend):
        holds_history_in_memory = False

    return ForkedMemoryBackend()


def _forked_backend(config: NetworkConfig, limits: ServiceLimits) -> tuple[Backend, Any]:
    """A dev chain in memory continuing another node's chain (``ethread serve --fork-url``)."""
    from ..devchain import DevChain
    from ..devchain.fork import RemoteLimits

    assert config.fork_url is not None
    backend = forked_memory_backend()
    remote = RemoteLimits(timeout=limits.fork_timeout_seconds,
                          max_calls_per_execution=limits.fork_reads_per_call)
    chain = DevChain.fork(config.fork_url, config.fork_block, backend=backend,
                          cache=config.fork_cache, limits=remote)
    return backend, chain


def _imported_backend(config: NetworkConfig, progress: Progress | None) -> Backend:
    from ..backends.memory import MemoryBackend
    from ..chain.importer import import_chain

    backend = MemoryBackend()
    assert config.genesis is not None
    import_chain(backend, config.genesis, config.blocks, verify_seals=config.verify_seals,
                 progress=progress)
    return backend


def _storage_backend(config: NetworkConfig) -> Backend:
    """A LevelDB store (``db``) or an Era1 folder (``era``), through
    :func:`ethread.backends.open.open_backend`, imported only when such a network is served."""
    from ..backends.open import open_backend

    assert config.path is not None
    if config.backend == "db":
        backend = open_backend(db=config.path)
        if lacks_answers(backend):
            log.warning("network %s: the store at %s lacks the answers this ethread keeps "
                        "beside each block (an older ethread wrote it): eth_getBlockReceipts "
                        "decodes every block no worker has read; `ethread upgrade --db %s` "
                        "adds them, while the store is served", config.name, config.path,
                        config.path)
        return backend
    return open_backend(era=config.path)


def service_context(config: ServerConfig) -> Context:
    """The core's limits as the service's settings give them."""
    return Context(log_limits=config.limits.logs,
                   call_timeout=config.limits.call_timeout_seconds or None,
                   trace_timeout=config.limits.trace_timeout_seconds,
                   answers=answer_style(config.answers),
                   answer_bytes=config.limits.max_response_bytes)


def open_networks(config: ServerConfig, progress: bool = True) -> list[Network]:
    """Open the backend of every network of the configuration (importing chains as needed, with a
    progress bar)."""
    context = service_context(config)
    return [
        open_network(n, context, ProgressBar(f"importing {n.name}") if progress else None,
                     config.limits)
        for n in config.networks
    ]
