"""``ethread serve``: run the JSON-RPC service (by default, the demo chain on 127.0.0.1:8545).

Flags and ``--config`` file entries mean the same; a flag overrides the file (``--api-key`` keys
are added). The server is imported only when the command runs (it is an extra).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..extras import install_hint
from .deferred import defer


def register(subparsers: Any) -> None:
    """Add the ``serve`` subcommand and its flags to the parser."""
    parser = subparsers.add_parser(
        "serve", help="serve chain data over JSON-RPC (HTTP and WebSocket)",
        description="Serve chain data over JSON-RPC at /v3/<API_KEY> and /ws/v3/<API_KEY>. "
                    "Without a chain argument, serves the built-in demo chain.")
    chain = parser.add_argument_group("chain (one of; default: the demo chain)")
    chain.add_argument("--config", metavar="FILE", help="TOML file: networks, keys, limits")
    chain.add_argument("--genesis", metavar="G", help="genesis.json of a chain to import")
    chain.add_argument("--blocks", metavar="B", help="blocks to import (concatenated RLP)")
    chain.add_argument("--no-verify-seals", action="store_true",
                       help="skip the proof-of-work seal check while importing")
    chain.add_argument("--db", metavar="DIR", help="serve a LevelDB store")
    chain.add_argument("--era", metavar="DIR", help="serve a folder of Era1 archive files")
    chain.add_argument("--block-time", type=float, metavar="S",
                       help="demo chain: mine a block every S seconds (default: no mining)")
    chain.add_argument("--state", metavar="FILE",
                       help="demo chain: load its accounts from this anvil state file when it "
                            "exists, and write the chain's state to it at exit")
    chain.add_argument("--fork-url", metavar="URL",
                       help="a dev chain continuing the chain of the node at URL (as anvil "
                            "--fork-url): state fetched as it is read, checked with eth_getProof")
    chain.add_argument("--fork-block-number", type=int, metavar="N",
                       help="--fork-url: the block to fork (default: the node's latest)")
    chain.add_argument("--fork-cache", metavar="DIR",
                       help="--fork-url: keep what was fetched in this LMDB directory")
    chain.add_argument("--txpool", action="store_true",
                       help="--genesis/--db: take transactions into a pool (eth_sendRawTransaction, "
                            "txpool_*, testing_buildBlockV1), as geth does")
    chain.add_argument("--record-traces", type=int, default=0, metavar="BLOCKS",
                       help="trace every transaction of the latest BLOCKS blocks at start and "
                            "answer debug_traceTransaction (opcode logger, callTracer) for them "
                            "from the record, as anvil --steps-tracing does")
    chain.add_argument("--network-name", metavar="NAME", help="name of the served network")
    keys = parser.add_argument_group("keys and credits (the [[keys]] tables of --config)")
    keys.add_argument("--api-key", action="append", metavar="K", dest="api_keys",
                      help="accept this API key (repeatable; default: the demo key)")
    keys.add_argument("--daily-credits", type=int, metavar="N",
                      help="daily credit balance of each --api-key (default 3,000,000)")
    keys.add_argument("--credits-per-second", type=float, metavar="R",
                      help="rate limit of each --api-key in credits per second")
    defer(parser, add_setting_flags)  # (reads ethread.server.config: only for `serve`)
    defer(parser, _add_operation_flags)
    parser.set_defaults(run=run)


def _add_operation_flags(parser: argparse.ArgumentParser) -> None:
    other = parser.add_argument_group("operation")
    other.add_argument("--log-level", default="info",
                       choices=("debug", "info", "warning", "error"),
                       help="least severe messages logged (default info)")


def add_setting_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per declared setting of [server] and [limits] (:func:`ethread.server.config.setting`)."""
    from ..server.config import SECTIONS, declared_settings

    groups = {section: parser.add_argument_group(f"the [{section}] table of --config")
              for section in SECTIONS}
    for declared in declared_settings():
        group = groups[declared.section]
        if declared.kind is bool:
            group.add_argument(declared.flag, dest=declared.name, action="store_const",
                               const=not declared.default, default=None,
                               help=f"{'do not ' if declared.default else ''}"
                                    f"{declared.setting.help}")
        else:
            group.add_argument(declared.flag, dest=declared.name, type=declared.kind,
                               default=None, metavar=declared.setting.metavar,
                               help=f"{declared.setting.help} (default {declared.default})")


def build_config(args: argparse.Namespace) -> Any:
    """The :class:`~ethread.server.config.ServerConfig` the flags (and file) describe."""
    from ..server.config import (
        ConfigError,
        KeyConfig,
        NetworkConfig,
        ServerConfig,
        declared_settings,
        load_config,
        validate,
    )

    chain_flags = [f for f in ("genesis", "db", "era", "fork_url") if getattr(args, f)]
    if len(chain_flags) > 1 or (chain_flags and args.config):
        raise ConfigError("give one chain: --config, --genesis, --db, --era or --fork-url")
    if args.blocks and not args.genesis:
        raise ConfigError("--blocks needs --genesis")
    if args.txpool and not (args.genesis or args.db):
        raise ConfigError("--txpool needs a chain with state: --genesis or --db")
    if args.block_time and chain_flags and chain_flags != ["fork_url"]:
        raise ConfigError("--block-time applies to a dev chain only (the demo, --fork-url)")
    if args.state and (args.config or (chain_flags and chain_flags != ["fork_url"])):
        raise ConfigError("--state applies to a dev chain only (the demo, --fork-url; in "
                          "--config: a network's 'state')")
    if (args.fork_block_number is not None or args.fork_cache) and not args.fork_url:
        raise ConfigError("--fork-block-number and --fork-cache need --fork-url")
    if args.record_traces < 0:
        raise ConfigError("--record-traces takes a number of blocks (0: none)")
    if args.record_traces and args.config:
        raise ConfigError("--record-traces: in --config, a network's 'record_traces'")
    config = load_config(args.config) if args.config else ServerConfig()
    if not args.config:
        name = args.network_name
        if args.genesis:
            network = NetworkConfig(name=name or "main", backend="import",
                                    genesis=Path(args.genesis),
                                    blocks=Path(args.blocks) if args.blocks else None,
                                    verify_seals=not args.no_verify_seals,
                                    txpool=args.txpool)
        elif args.fork_url:
            network = NetworkConfig(name=name or "fork", backend="fork", fork_url=args.fork_url,
                                    fork_block=args.fork_block_number,
                                    fork_cache=Path(args.fork_cache) if args.fork_cache else None,
                                    block_time=args.block_time or 0.0,
                                    state=Path(args.state) if args.state else None)
        elif args.db or args.era:
            network = NetworkConfig(name=name or "main", backend="db" if args.db else "era",
                                    path=Path(args.db or args.era), txpool=args.txpool)
        else:
            network = NetworkConfig(name=name or "demo", block_time=args.block_time or 0.0,
                                    state=Path(args.state) if args.state else None)
        config = replace(config, networks=(replace(network, record_traces=args.record_traces),))
    changes: dict[str, Any] = {}
    limit_changes: dict[str, Any] = {}
    for declared in declared_settings():
        value = getattr(args, declared.name)
        if value is not None:
            (limit_changes if declared.section == "limits" else changes)[declared.name] = value
    if args.api_keys:
        defaults = KeyConfig(key="-")
        changes["keys"] = config.keys + tuple(
            KeyConfig(key=k,
                      daily_credits=args.daily_credits if args.daily_credits is not None
                      else defaults.daily_credits,
                      credits_per_second=args.credits_per_second)
            for k in args.api_keys)
    elif args.daily_credits is not None or args.credits_per_second is not None:
        raise ConfigError("--daily-credits and --credits-per-second apply to --api-key keys")
    if limit_changes:
        changes["limits"] = replace(config.limits, **limit_changes)
    return validate(replace(config, **changes))


def run(args: argparse.Namespace) -> int:
    """``ethread serve``: build the networks and serve them until stopped; the exit status."""
    try:
        from ..server.billing.ledger import LedgerError, shown_ledger
        from ..server.config import ConfigError
        from ..server.processes import runner
    except ImportError as exc:
        print(f"ethread serve: the server extra is not installed ({exc.name} is missing): "
              f"{install_hint('server')}", file=sys.stderr)
        return 2
    from ..errors import EthreadError

    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        config = build_config(args)
        if config.networks[0].backend == "demo" and not args.config:
            print("building the demo chain...", file=sys.stderr, flush=True)
        if args.genesis and not args.blocks:
            print("ethread serve: no --blocks given: serving the genesis block alone "
                  "(give --blocks B to import a chain after it)", file=sys.stderr, flush=True)
        listening = runner.listen(config)
    except (ConfigError, LedgerError, EthreadError, OSError) as exc:
        print(f"ethread serve: error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, ConfigError | LedgerError) else 1
    for name, http_url, ws_url in listening.urls():
        print(f"network {name}: HTTP {http_url}", flush=True)
        print(f"network {name}: WebSocket {ws_url}", flush=True)
    keys = listening.config.keys
    if any(k.label == "demo" for k in keys):
        print("demo API key: ethread-demo-key (loopback demo only)", flush=True)
    else:
        print(f"{len(keys)} API key(s) accepted; put yours in place of <API_KEY>", flush=True)
    print(f"credit ledger: {shown_ledger(listening.config.ledger)}", flush=True)
    workers = listening.config.workers
    if workers > 1:
        print(f"{workers} worker processes", flush=True)
    if listening.admin_port is not None:
        base = f"http://{config.admin_host}:{listening.admin_port}"
        source = config.admin_token_file or "the environment"
        print(f"admin: {base}/admin/v1/keys (token from {source}); dashboard: "
              f"{base}/dashboard", flush=True)
    if config.dashboard:
        print(f"dashboard: http://{config.host}:{listening.main_port}/dashboard", flush=True)
    if config.metrics:
        print(f"metrics: http://{config.host}:{listening.main_port}/metrics", flush=True)
    print(f"health: http://{config.host}:{listening.main_port}/health", flush=True)
    if workers > 1:
        from ..server.processes.workers import supervise

        code = supervise(listening, workers)
    else:
        code = _serve_here(runner, listening)
    from ..server.networks import save_state_files

    try:
        for path in save_state_files(listening.networks):
            print(f"ethread serve: state written to {path}", file=sys.stderr)
    except OSError as exc:
        print(f"ethread serve: error: the state file could not be written: {exc}", file=sys.stderr)
        code = code or 1
    print("ethread serve: stopped", file=sys.stderr)
    return code


def _serve_here(runner: Any, listening: Any) -> int:
    """One process: this one serves."""
    from ..server.billing.ledger import LedgerError

    try:
        prepared = runner.assemble(listening)
    except LedgerError as exc:
        listening.close()
        print(f"ethread serve: error: {exc}", file=sys.stderr)
        return 2
    return serve_until_stopped(runner, prepared, listening)


def serve_until_stopped(runner: Any, prepared: Any, listening: Any) -> int:
    """Serve ``prepared`` in this process until SIGINT or SIGTERM; 0 after a graceful stop."""
    previous = signal.signal(signal.SIGTERM, runner.stop_requested)
    runner.settle_heap()
    try:
        prepared.run()
    except (KeyboardInterrupt, runner.Stopped):
        pass  # uvicorn re-raises the signal once its graceful shutdown is done
    finally:
        signal.signal(signal.SIGTERM, previous)
        listening.close()
    return 0
