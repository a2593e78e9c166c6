"""``ethread node``: a dev node on an empty chain for the tools that expect anvil: anvil's flags
and defaults, its banner, JSON-RPC at ``/`` with no key (and ``/v3/<KEY>``; with ``--api-key``
only there). The server and the dev chain are imported only when it runs.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .serve import serve_until_stopped

ANVIL_CHAIN_ID = 31337
ANVIL_BALANCE_ETHER = 10_000
ANVIL_ACCOUNTS = 10
ANVIL_MNEMONIC = "test test test test test test test test test test test junk"
ANVIL_DERIVATION_PATH = "m/44'/60'/0'/0/"
ANVIL_GAS_LIMIT = 30_000_000
ANVIL_COINBASE = b"\x00" * 20
"""The blocks' beneficiary (anvil's default; anvil_setCoinbase changes it)."""
DEFAULT_HARDFORK = "osaka"
"""What ``latest`` (anvil's default) means here (anvil 1.7.1 reports BPO1 for it)."""
NODE_KEY = "ethread-node"
"""The (unmetered) key requests at ``/`` are answered with when no ``--api-key`` is given."""
ETHER = 10**18
TRACED_BLOCKS = 2**40
"""--steps-tracing: every block's traces are kept, as anvil keeps its steps."""
MAX_ACCOUNTS = 10_000


class NodeError(ValueError):
    """A flag value the node cannot run with; the message names the flag."""


def register(subparsers: Any) -> None:
    """Add the ``node`` subcommand and its (anvil's) flags to the parser."""
    parser = subparsers.add_parser(
        "node", help="an anvil-compatible dev node on an empty chain",
        description="A dev node on an empty chain with funded accounts, taking anvil's flags: "
                    "JSON-RPC and WebSocket at / (no key) and /v3/<KEY>.")
    accounts = parser.add_argument_group("accounts")
    accounts.add_argument("-a", "--accounts", type=int, default=ANVIL_ACCOUNTS, metavar="NUM",
                          help=f"dev accounts to fund (default {ANVIL_ACCOUNTS})")
    accounts.add_argument("--balance", default=str(ANVIL_BALANCE_ETHER), metavar="NUM",
                          help=f"balance of every dev account in ether (default "
                               f"{ANVIL_BALANCE_ETHER})")
    accounts.add_argument("-m", "--mnemonic", default=ANVIL_MNEMONIC, metavar="MNEMONIC",
                          help="BIP-39 mnemonic the accounts are derived from (default: the "
                               "test mnemonic)")
    accounts.add_argument("--derivation-path", default=ANVIL_DERIVATION_PATH, metavar="PATH",
                          help=f"derivation path the account index is appended to (default "
                               f"{ANVIL_DERIVATION_PATH})")
    chain = parser.add_argument_group("chain")
    chain.add_argument("--chain-id", type=int, default=None, metavar="ID",
                       help=f"the chain id (default {ANVIL_CHAIN_ID}; a fork: the forked "
                            "node's)")
    chain.add_argument("--hardfork", default="latest", metavar="NAME",
                       help=f"the fork the chain runs from genesis, e.g. prague, cancun, "
                            f"shanghai, london (default latest: {DEFAULT_HARDFORK})")
    chain.add_argument("--gas-limit", type=int, default=ANVIL_GAS_LIMIT, metavar="GAS",
                       help=f"the block gas limit (default {ANVIL_GAS_LIMIT:,})")
    chain.add_argument("--base-fee", "--block-base-fee-per-gas", type=int, default=None,
                       dest="base_fee", metavar="WEI",
                       help="the genesis block's base fee in wei (default 1 gwei)")
    chain.add_argument("--timestamp", type=int, default=None, metavar="NUM",
                       help="the genesis block's timestamp (default: now)")
    mining = parser.add_argument_group("mining")
    mining.add_argument("-b", "--block-time", "--blockTime", type=float, default=None,
                        dest="block_time", metavar="SECONDS",
                        help="mine a block every SECONDS (default: automine, a block for each "
                             "transaction)")
    mining.add_argument("--no-mining", "--no-mine", action="store_true", dest="no_mining",
                        help="no automine and no interval: blocks only on evm_mine/anvil_mine")
    fork = parser.add_argument_group("fork")
    fork.add_argument("-f", "--fork-url", "--rpc-url", dest="fork_url", metavar="URL",
                      help="continue the chain of the node at URL (URL@BLOCK picks the block)")
    fork.add_argument("--fork-block-number", type=int, default=None, metavar="BLOCK",
                      help="--fork-url: the block to fork (default: its latest)")
    state = parser.add_argument_group("state")
    state.add_argument("--state", metavar="PATH",
                       help="load the state from PATH when it exists and write it there at exit")
    state.add_argument("--load-state", metavar="PATH", help="start from the state saved in PATH")
    state.add_argument("--dump-state", metavar="PATH",
                       help="write the state to PATH at exit (a directory: PATH/state.json)")
    other = parser.add_argument_group("server")
    other.add_argument("--host", default=os.environ.get("ANVIL_IP_ADDR", "127.0.0.1"),
                       metavar="IP_ADDR", help="address to listen on (default 127.0.0.1)")
    other.add_argument("-p", "--port", type=int, default=8545, metavar="NUM",
                       help="port to listen on (default 8545; 0: any free port)")
    other.add_argument("--steps-tracing", "--tracing", "-t", action="store_true",
                       dest="steps_tracing",
                       help="record each mined transaction's traces for debug_traceTransaction")
    other.add_argument("--api-key", action="append", metavar="KEY", dest="api_keys",
                       help="answer only at /v3/KEY and /ws/v3/KEY (repeatable; default: at / "
                            "with no key)")
    other.add_argument("--no-cors", action="store_true",
                       help="no CORS headers (default: any origin may call the node, as anvil's "
                            "default --allow-origin '*')")
    other.add_argument("--silent", "-q", "--quiet", action="store_true", dest="silent",
                       help="print nothing but errors (no banner, no request log)")
    parser.set_defaults(run=run)


@dataclass(frozen=True, slots=True)
class NodeSettings:
    """The flags, checked once: what the node is built and served with."""

    accounts: int
    balance_wei: int
    mnemonic: str
    derivation_path: str
    chain_id: int | None
    hardfork: str
    gas_limit: int
    base_fee: int | None
    timestamp: int | None
    block_time: float
    automine: bool
    fork_url: str | None
    fork_block: int | None
    load_state: Path | None
    dump_state: Path | None
    host: str
    port: int
    steps_tracing: bool
    api_keys: tuple[str, ...]
    silent: bool
    cors: bool


def hardfork_name(value: str) -> str:
    """ethread's fork name for an anvil ``--hardfork`` value (else NodeError naming the known ones)."""
    from ..forks.table import FORK_ORDER, SHORT_NAMES

    wanted = value.lower().replace("_", "").replace("-", "")
    if wanted == "latest":
        return DEFAULT_HARDFORK
    runs = FORK_ORDER[:FORK_ORDER.index(DEFAULT_HARDFORK) + 1]
    for name in runs:
        if wanted == name.replace("_", ""):
            return name
    if wanted in SHORT_NAMES:
        return SHORT_NAMES[wanted]
    later = [name for name in FORK_ORDER if name not in runs]
    if wanted in later:
        raise NodeError(f"--hardfork {value}: ethread's dev chain runs forks up to "
                        f"{DEFAULT_HARDFORK}")
    raise NodeError(f"--hardfork: unknown hardfork {value!r}; known: latest, {', '.join(runs)}")


def _ether(value: str) -> int:
    """``--balance``: ether (a whole or decimal number) in wei."""
    from decimal import Decimal, InvalidOperation

    try:
        amount = Decimal(value)
    except InvalidOperation:
        raise NodeError(f"--balance: not a number of ether: {value!r}") from None
    wei = amount * ETHER
    if not amount.is_finite() or wei < 0 or wei != wei.to_integral_value() or wei >= 2**256:
        raise NodeError(f"--balance: {value!r} is not a balance in ether (0 or more, to the wei)")
    return int(wei)


def _fork_target(url: str, block: int | None) -> tuple[str, int | None]:
    """anvil's ``URL@BLOCK``: the URL and the block (``--fork-block-number`` wins)."""
    base, at, number = url.rpartition("@")
    if at and number.isdigit() and "/" not in number:
        return base, block if block is not None else int(number)
    return url, block


def _in_folder(path: str) -> Path:
    """A state file's path: ``path``, or ``path/state.json`` when it is a folder (anvil's)."""
    given = Path(path)
    return given / "state.json" if given.is_dir() else given


def settings_of(args: argparse.Namespace) -> NodeSettings:
    """The settings the flags describe, every value checked (NodeError names the flag)."""
    if not 1 <= args.accounts <= MAX_ACCOUNTS:
        raise NodeError(f"--accounts must be between 1 and {MAX_ACCOUNTS}, got {args.accounts}")
    if args.chain_id is not None and not 1 <= args.chain_id < 2**63:
        raise NodeError(f"--chain-id must be a positive integer, got {args.chain_id}")
    if not 21_000 <= args.gas_limit < 2**63:
        raise NodeError(f"--gas-limit must be at least 21000, got {args.gas_limit}")
    if args.base_fee is not None and not 0 <= args.base_fee < 2**256:
        raise NodeError(f"--base-fee must be 0 or more wei, got {args.base_fee}")
    if args.timestamp is not None and not 0 <= args.timestamp < 2**63:
        raise NodeError(f"--timestamp must be 0 or more, got {args.timestamp}")
    if args.block_time is not None and not 0 < args.block_time <= 86_400:
        raise NodeError(f"--block-time must be more than 0 seconds (at most a day), got "
                        f"{args.block_time:g}")
    if args.block_time is not None and args.no_mining:
        raise NodeError("--block-time and --no-mining cannot both be given")
    if not 0 <= args.port <= 65535:
        raise NodeError(f"--port must be 0..65535, got {args.port}")
    if args.state and (args.load_state or args.dump_state):
        raise NodeError("--state is --load-state and --dump-state together: give it alone")
    if args.fork_block_number is not None and not args.fork_url:
        raise NodeError("--fork-block-number needs --fork-url")
    if args.fork_block_number is not None and args.fork_block_number < 1:
        raise NodeError("--fork-block-number must be a block after the genesis block (1 or "
                        "more)")
    if args.fork_url and args.timestamp is not None:
        raise NodeError("--timestamp sets the genesis block's time: not with --fork-url")
    if not args.derivation_path.startswith("m/"):
        raise NodeError(f"--derivation-path must start with m/, got {args.derivation_path!r}")
    for key in args.api_keys or ():
        if not key or "/" in key or any(c.isspace() for c in key):
            raise NodeError("--api-key must be non-empty, without '/' or spaces")
    load = _in_folder(args.state) if args.state else args.load_state
    if args.load_state and not Path(args.load_state).is_file():
        raise NodeError(f"--load-state: no file {args.load_state}")
    dump = args.state or args.dump_state
    dump_path = _in_folder(dump) if dump else None
    fork_url, fork_block = (_fork_target(args.fork_url, args.fork_block_number)
                            if args.fork_url else (None, None))
    return NodeSettings(
        accounts=args.accounts, balance_wei=_ether(args.balance), mnemonic=args.mnemonic,
        derivation_path=args.derivation_path, chain_id=args.chain_id,
        hardfork=hardfork_name(args.hardfork), gas_limit=args.gas_limit,
        base_fee=args.base_fee, timestamp=args.timestamp,
        block_time=args.block_time or 0.0,
        automine=not args.no_mining and args.block_time is None,
        fork_url=fork_url, fork_block=fork_block,
        load_state=Path(load) if load else None, dump_state=dump_path,
        host=args.host, port=args.port, steps_tracing=args.steps_tracing,
        api_keys=tuple(args.api_keys or ()), silent=args.silent, cors=not args.no_cors)


def build_chain(settings: NodeSettings) -> Any:
    """The dev chain (in memory, on a wall clock) the settings describe, its state loaded."""
    from eth_utils import ValidationError

    from ..backends.memory import MemoryBackend
    from ..devchain import DevChain, ForkSchedule
    from ..errors import EthreadError, InvalidParams
    from ..server.networks import forked_memory_backend, load_state_file

    try:
        from eth_account.hdaccount import seed_from_mnemonic

        seed_from_mnemonic(settings.mnemonic, "")
    except Exception as exc:  # eth-account's own message: which word, or the checksum
        raise NodeError(f"--mnemonic: {exc}") from None
    options: dict[str, Any] = dict(
        accounts=settings.accounts, mnemonic=settings.mnemonic,
        derivation_path=settings.derivation_path, balance=settings.balance_wei,
        gas_limit=settings.gas_limit, block_time=1, clock=time.time, coinbase=ANVIL_COINBASE,
        forks=ForkSchedule.from_genesis(settings.hardfork))
    try:
        if settings.fork_url is not None:
            batch_log = logging.getLogger("eth.db.AtomicDBWriteBatch")
            level = batch_log.level
            batch_log.setLevel(logging.CRITICAL)  # (it logs the error below as a traceback)
            try:
                chain = DevChain.fork(settings.fork_url, settings.fork_block,
                                      backend=forked_memory_backend(), **options)
            except ValidationError as exc:  # py-evm cannot start from the forked genesis
                raise EthreadError(f"cannot fork {settings.fork_url} at block "
                                   f"{settings.fork_block if settings.fork_block is not None else 'latest'}"
                                   f": {exc} (a fork must start after the genesis block)") from None
            finally:
                batch_log.setLevel(level)
            if settings.chain_id is not None:
                chain.set_chain_id(settings.chain_id)
        else:
            chain = DevChain(MemoryBackend(), chain_id=settings.chain_id or ANVIL_CHAIN_ID,
                             base_fee=settings.base_fee,
                             genesis_timestamp=(int(time.time()) if settings.timestamp is None
                                                else settings.timestamp), **options)
    except ValueError as exc:  # a derivation path eth-account cannot read
        raise NodeError(f"--derivation-path: {exc}") from None
    if settings.load_state is not None:
        try:
            load_state_file(chain, settings.load_state)
        except InvalidParams as exc:
            raise NodeError(str(exc)) from None
    return chain


def banner(chain: Any, settings: NodeSettings, listening: str) -> str:
    """What the node prints at start, laid out as anvil's: accounts, keys, wallet, chain."""
    from eth_utils import to_checksum_address

    from .. import __version__

    ether = settings.balance_wei / ETHER
    head = chain.head
    lines = [f"ethread node {__version__}", "", "Available Accounts", "=" * 18, ""]
    for account in chain.accounts:
        lines.append(f"({account.index}) {to_checksum_address(account.address)} "
                     f"({ether:.18f} ETH)")
    lines += ["", "Private Keys", "=" * 18, ""]
    lines += [f"({a.index}) 0x{a.private_key.hex()}" for a in chain.accounts]
    lines += ["", "Wallet", "=" * 18, f"Mnemonic:          {settings.mnemonic}",
              f"Derivation path:   {settings.derivation_path}", ""]
    if settings.fork_url is not None:
        lines += ["", "Fork", "=" * 18, f"Endpoint:       {settings.fork_url}",
                  f"Block number:   {chain.fork_origin.number if chain.fork_origin else '?'}",
                  ""]
    sections = [("Chain ID", chain.chain_id), ("Hardfork", settings.hardfork),
                ("Base Fee", head.base_fee_per_gas if head.base_fee_per_gas is not None
                 else "none (before London)"),
                ("Gas Limit", head.gas_limit), ("Genesis Timestamp", head.timestamp),
                ("Genesis Number", head.number)]
    for title, value in sections:
        lines += ["", title, "=" * 18, "", str(value)]
    mining = ("automine" if settings.automine else
              f"a block every {settings.block_time:g} s" if settings.block_time else
              "no mining (evm_mine / anvil_mine)")
    lines += ["", "Mining", "=" * 18, "", mining, "", f"Listening on {listening}"]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """``ethread node``: build the chain, print the banner, serve until stopped; the exit status."""
    try:
        settings = settings_of(args)
    except NodeError as exc:
        print(f"ethread node: error: {exc}", file=sys.stderr)
        return 2
    try:
        from ..server.config import UNLIMITED_CREDITS, KeyConfig, ServerConfig
        from ..server.networks import make_network, service_context, write_state_file
        from ..server.processes import runner
    except ImportError as exc:
        print(f"ethread node: the server extra is not installed ({exc.name} is missing): "
              "pip install 'ethread[server]'", file=sys.stderr)
        return 2
    from ..errors import EthreadError

    logging.basicConfig(level="WARNING" if settings.silent else "INFO", stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        chain = build_chain(settings)
    except (NodeError, EthreadError, OSError) as exc:
        print(f"ethread node: error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, NodeError) else 1
    keys = settings.api_keys or (NODE_KEY,)
    config = ServerConfig(host=settings.host, port=settings.port, ledger=":memory:",
                          keys=tuple(KeyConfig(key=k, daily_credits=UNLIMITED_CREDITS, label="node")
                                     for k in keys),
                          access_log=not settings.silent, lean_http=not settings.cors)
    network = make_network("node", chain.backend, service_context(config), miner=chain,
                           block_time=settings.block_time)
    chain.automine = settings.automine
    if settings.steps_tracing:
        network.dispatcher.record_traces(TRACED_BLOCKS)
        chain.after_block.append(network.dispatcher.record_block)
    try:
        listening = runner.listen(config, [network], progress=False)
        prepared = runner.assemble(listening)
    except (EthreadError, OSError, ValueError) as exc:
        print(f"ethread node: error: {exc}", file=sys.stderr)
        return 1
    if not settings.api_keys:
        prepared.app.root_key = NODE_KEY
    prepared.app.cors = settings.cors
    host = settings.host if ":" not in settings.host else f"[{settings.host}]"
    address = f"{host}:{listening.main_port}"
    if not settings.silent:
        print(banner(chain, settings, address), flush=True)
        if settings.api_keys:
            print(f"JSON-RPC at http://{address}/v3/<KEY>, WebSocket at ws://{address}/ws/v3/"
                  "<KEY> (no answer at / with --api-key)", flush=True)
    code = serve_until_stopped(runner, prepared, listening)
    if settings.dump_state is not None:
        try:
            write_state_file(chain, settings.dump_state)
            if not settings.silent:
                print(f"ethread node: state written to {settings.dump_state}", file=sys.stderr)
        except OSError as exc:
            print(f"ethread node: error: the state could not be written: {exc}", file=sys.stderr)
            code = code or 1
    return code
