"""ethread beside anvil (foundry's Rust node) on the same chain, under the same load: requests/s
at concurrency 1 and 16, and the ratio ethread / anvil, for the reads of issue 12.

    .venv/bin/python benchmarks/bench_vs_anvil.py [--blocks 5001] [--seconds 5] [--rounds 1]
        [--workdir DIR] [--only TEXT] [--targets anvil,bare,memory,store,...] [--workers 2]
        [--engine lmdb|leveldb] [--access-log] [--client wrk|python] [--cpu] [--requests N]
        [--knobs [busy_poll,admission_turns,...] [--knob-workers 1,2]]

The chain (``benchlib/peer_chain.py``): block 1 deploys the Ping contract, blocks 2..N each hold
one call to it, so every block from 2 on has one transaction and one log from one address. It is
built once with ethread's dev chain and written as genesis.json and block RLP (kept in
``--workdir`` for the next run, with the store imported from them); then

- **anvil** (``tests/js``: ``npm ci`` there installs ``@foundry-rs/anvil``) starts from the
  same genesis (``--init``) and replays the same signed transactions, block by block;
- **ethread, memory**: ``ethread serve --genesis --blocks`` (the chain executed and held in
  memory);
- **ethread, store**: ``ethread import --engine lmdb`` once, then ``ethread serve --db`` (the
  store a hosted deployment uses: LMDB is what several workers read at once);
- **ethread, store, one piece off** (``store-nopoll``, ``store-nofair``, ``store-noshared``):
  the store server with ``--busy-poll-us 0`` (its loop sleeps at once instead of polling
  250 µs for the next request: ``ethread.server.busy_poll``), ``--no-fair-accept`` (uvicorn's
  greedy accept in each worker) or ``--no-shared-fragments`` (each worker decodes every block
  it serves itself);
- **ethread, memory, no admission turns** (``memory-noturns``): ``--no-admission-turns``, each
  request charged as it is read even when a worker holds many connections;
- **ethread, ASGI** (``--targets ...,asgi``): the memory server with ``--no-lean-http``,
  every request through uvicorn's ASGI path instead of the lean one (the choice measured);
- **ethread, metrics** (``--targets ...,metrics``): the memory server with ``--metrics``
  (``/metrics``, prometheus-client's multiprocess mode: what counting every request costs);
- **bare ASGI**: a constant-body ASGI app under the same uvicorn settings as ethread's server
  (:func:`ethread.server.processes.runner.uvicorn_config`), the floor no per-request work can go below.

Both ethread servers run with ``--workers`` processes (default 2: the kernel hands each
connection to one of them, so at c=1 one process answers), the default credit ledger (a
memory-mapped ``*.ledger`` file), and no
access log unless ``--access-log``; every request is charged, as in production.

The load generator is wrk (Debian's ``wrk``) with a Lua script per row that makes a fresh body
for every request (random blocks, transactions, windows; a new calldata for each distinct
eth_call), one thread at c=1 and two at c=16; without wrk, a keep-alive Python client
(``benchlib/client.py``) sends bodies made the same way. Before each row a few of its bodies are
sent to each server and must answer a result. Each row runs ``--seconds`` on each server;
with ``--rounds N`` it runs N times as long, the servers taking turns (anvil, then each
ethread, then anvil again), so that a minute when the machine is slower (an idle core wakes
later, another process runs) falls on every server alike: the c=1 column moves most with
that. The machine's load average is printed with the table, since the servers, the load
generator and anything else running share the same cores.

**Cold reads** (``--requests N``, with wrk): what a provider's workers do all day, since its
working set never fits their caches. Each cell (a row at one concurrency) sends exactly N
requests, timed from the first request to the last answer, to an ethread server started afresh
for it and warmed first with N requests of the same row on the last third of the chain (so
that the code is warm, and a forked worker has already copied the pages it writes); the
measured requests then ask for random blocks and transactions of the first two thirds, which
no worker has read. With ``--blocks 3001 --requests 1500`` that is 1,500 requests over 2,000
blocks, most of them cold; anvil, which holds its chain in memory, answers the same bodies.

**Each throughput knob on and off** (``--knobs [NAMES] --knob-workers 1,2``): the store
server alone, once with the knob on and once off, everything else at its default, for busy
polling (``--busy-poll-us 250`` / ``0``), admission turns, fair accept, shared fragments,
the lean HTTP path (each ``--no-...`` when off) and the ledger (the mapped ``*.ledger`` file /
SQLite). The rows are the floor with a new id each, full blocks, block receipts and the
100-block log window, at c=1 and 16, with each worker count. Reads are cold: each round
starts a server afresh for each state (the state that goes first alternating round by
round), warms it on the chain's last blocks, then gives each cell ``--requests`` (default
1,000) reads of blocks no other cell reads, for at most ``--seconds`` (wrk runs that long
whatever the count, so ``--seconds 1`` keeps a knob's run to about four minutes; a slow row
then counts fewer answers); ``--blocks`` must leave each of the seven ranges 200 blocks at
least (``--blocks 7001`` for 1,000 blocks a range). The table holds each
state's requests/s, p50 and p99 latency (wrk's) and server CPU a request, medians of
``--rounds``; one knob's run is kept in ``results/bench_vs_anvil_knob_NAME.txt``.

Rows whose bodies repeat (the floor, the full-range logs, the repeated eth_call) measure what a
server does with a request it has answered before (ethread answers the same bytes again
without parsing them: its answers by body); the floor with a new id in each body is what a
client numbering its requests pays, parsing and dispatch included; random reads over 5,000
blocks (each with a new id too) also find ethread's answer cache warm as a row goes on (as
they would in service); distinct eth_calls never do.

The eth_simulateV1 row asks for one simulated block of three calls to Ping, each with new
calldata (no cache helps): a server builds a whole block for it (state, receipts and
transactions roots, the withdrawal and consolidation queues' system calls from Prague on).
``memory-plain`` is the memory server on simulate's plain path (``tests/support/plain_simulate.py``):
py-evm's own classes and py-trie (what ethread did before its fast path; the same answers).
Measured with ``--blocks 300 --seconds 5 --rounds 3 --only simulateV1 --targets
anvil,memory,memory-plain --workers 1 --cpu`` (wrk, load average 5 from other work on the two
cores), requests/s at c=1 / c=16 and server CPU per request:

    anvil          4,008 / 7,669     0.17 / 0.12 ms
    memory           474 /   518     1.68 / 1.64 ms   (fast path)
    memory-plain     142 /   140     6.25 / 6.50 ms   (py-evm's classes and py-trie)

with ``--workers 2``: anvil 3,585 / 10,677, memory 553 / 619. In process a simulation takes
about 1.5 ms of CPU on the fast path and 7 ms on the plain one: the plain path spends a third
in the state root (py-trie re-encoding and writing each path at each change), a quarter in
py-evm's transaction steps (a py-evm transaction built, validated and spoofed, a debug line
formatted per transaction), a twentieth in the transactions and receipts roots; the fast path
spends about 40% in the calls (of which the opcodes themselves are under a tenth), 12% in the
state root, 8% in the beacon-root and parent-hash writes, and the rest in building the block.
Since then (``benchmarks/bench_simulate.py``, the same request in process, CPU per simulation
with the paths taking turns) the fast path starts a block without state overrides from its
system writes kept per header, finalises a call without py-evm's debug lines, builds the
ordered roots from sorted keys and the bloom from one keccak per item, and leaves a trie path
written back unchanged as it was: 1.06-1.10 ms -> 0.71-0.75 ms (the two checkouts taking
turns, best rounds, load average 1.3), against 4.3 to 5 ms on the plain path;
half of it is the three calls (a third of that the opcodes, the rest py-evm's transaction,
snapshot, journal and account steps), a third the block (state root, VM and state built,
the requests' system calls, header and roots), a tenth parsing and the answer's JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import random
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchlib import REPO, RESULTS, report, wrk
from benchlib.peer_chain import PeerChain, build
from benchlib.processes import tree_cpu_seconds
from benchlib.rows import Row, body, counted_wrk, distinct_call_row, lua_body, run_python, run_wrk, sample_check
from benchlib.serve import MAIN
from benchlib.targets import Target, ensure_store, start_anvil, start_bare, start_ethread

CONCURRENCY = (1, 16)


# -- rows: the same bodies from Lua (wrk) and from Python (benchlib.rows) ---------------------


def _window(result: Any, chain: PeerChain) -> bool:
    return isinstance(result, list) and 99 <= len(result) <= 100


def rows(chain: PeerChain) -> list[Row]:
    head = chain.head
    full_range = body("eth_getLogs",
                      f'[{{"fromBlock":"0x0","toBlock":"{hex(head)}","address":"{chain.ping}"}}]')
    repeated_call = body("eth_call", f'[{{"to":"{chain.ping}","data":"0x01"}},"latest"]')

    def random_block_row(label: str, method: str, after: str) -> Row:
        """A row asking ``method`` of a random block: params ``["0x<n>"<after>]``."""
        return Row(label,
                   lua_body(method, "'[\"' .. string.format('0x%x', math.random(lo, hi)) .. "
                            f"'\"{after}]'"),
                   lambda rng, n, c: body(method, f'["{hex(rng.randint(1, c.head))}"{after}]',
                                          n).encode())

    def simulation(rng: random.Random, n: int, c: PeerChain) -> bytes:
        calls = ",".join(f'{{"to":"{c.ping}","data":"0x{"0" * 40}{rng.getrandbits(32):08x}{n:08x}{i:08x}"}}'
                         for i in range(1, 4))
        return body("eth_simulateV1", f'[{{"blockStateCalls":[{{"calls":[{calls}]}}]}},"latest"]',
                    n).encode()

    def simulated(result: Any, c: PeerChain) -> bool:
        return (isinstance(result, list) and len(result) == 1
                and [call.get("status") for call in result[0].get("calls", ())] == ["0x1"] * 3)

    return [
        Row("eth_chainId (floor)", "'" + body("eth_chainId", "[]") + "'",
            lambda rng, n, c: body("eth_chainId", "[]").encode()),
        Row("eth_chainId, new id each", lua_body("eth_chainId", "'[]'"),
            lambda rng, n, c: body("eth_chainId", "[]", n).encode()),
        random_block_row("blocks, full, random", "eth_getBlockByNumber", ",true"),
        Row("tx by hash, random",
            lua_body("eth_getTransactionByHash",
                     "'[\"' .. hashes[math.random(math.min(lo, #hashes), math.min(hi, #hashes))]"
                     " .. '\"]'"),
            lambda rng, n, c: body("eth_getTransactionByHash",
                                   f'["{rng.choice(c.tx_hashes)}"]', n).encode()),
        random_block_row("block receipts, random", "eth_getBlockReceipts", ""),
        Row("logs, 100-block window",
            lua_body("eth_getLogs",
                     "(function() local s = math.random(math.max(lo, 2), hi - 99) return "
                     "string.format('[{\"fromBlock\":\"0x%x\",\"toBlock\":\"0x%x\",', s, s + 99)"
                     " .. '\"address\":\"' .. ping .. '\"}]' end)()"),
            lambda rng, n, c: (lambda s: body(
                "eth_getLogs", f'[{{"fromBlock":"{hex(s)}","toBlock":"{hex(s + 99)}",'
                               f'"address":"{c.ping}"}}]', n).encode())(rng.randint(2, c.head - 99)),
            _window),
        Row(f"logs, 0..{head} ({head - 1} logs), repeated", "'" + full_range + "'",
            lambda rng, n, c: full_range.encode(),
            lambda result, c: isinstance(result, list) and len(result) == c.head - 1),
        Row("eth_call, repeated", "'" + repeated_call + "'",
            lambda rng, n, c: repeated_call.encode(),
            lambda result, c: isinstance(result, str) and len(result) == 66),
        distinct_call_row(),
        Row("eth_simulateV1, 1 block of 3 distinct calls",
            lua_body("eth_simulateV1",
                     "(function() local function call(i) return '{\"to\":\"' .. ping .. "
                     "'\",\"data\":\"0x' .. string.rep('0', 40) .. "
                     "string.format('%08x%08x%08x', seed, n, i) .. '\"}' end "
                     "return '[{\"blockStateCalls\":[{\"calls\":[' .. call(1) .. ',' .. call(2) "
                     ".. ',' .. call(3) .. ']}]},\"latest\"]' end)()"),
            simulation, simulated),
    ]


# -- the knobs, each on and off --------------------------------------------------------------


@dataclass(frozen=True)
class Knob:
    """A server setting that exists only for speed, and the ``ethread serve`` flags that turn
    it on and off (everything else at its default)."""

    name: str
    on: tuple[str, ...]
    off: tuple[str, ...]
    ledgers: tuple[str, str] = (".ledger", ".ledger")
    """The credit ledger's suffix, on and off (the ledger knob: the mapped file or SQLite)."""

    def flags(self, on: bool) -> str:
        if self.ledgers[0] != self.ledgers[1]:
            return f"--ledger X{self.ledgers[0 if on else 1]}"
        return " ".join(self.on if on else self.off) or "(default)"


KNOBS = (
    Knob("busy_poll", ("--busy-poll-us", "250"), ("--busy-poll-us", "0")),
    Knob("admission_turns", (), ("--no-admission-turns",)),
    Knob("fair_accept", (), ("--no-fair-accept",)),
    Knob("shared_fragments", (), ("--no-shared-fragments",)),
    Knob("lean_http", (), ("--no-lean-http",)),
    Knob("ledger", (), (), (".ledger", ".sqlite3")),
)
"""Each knob with its flags; a default-on knob's "on" is the default."""

KNOB_ROWS = ("eth_chainId, new id each", "blocks, full, random", "block receipts, random",
             "logs, 100-block window")
"""The rows each knob is measured on: the floor (parsing, dispatch, the charge, the HTTP path),
two block reads and a log window, all of them cold but the floor."""


@dataclass(frozen=True)
class Cell:
    rate: float
    """Requests/s, from the first request to the last answer."""
    p50: float
    p99: float
    """Latency percentiles, milliseconds (wrk's)."""
    cpu: float
    """Server CPU (every process of it) per request, microseconds."""
    failed: int


def counted_run(row: Row, target: Target, chain: PeerChain, concurrency: int, seconds: float,
                seed: int, requests: int, blocks: tuple[int, int]) -> Cell:
    """``requests`` answers of ``row`` on ``blocks`` (:func:`benchlib.rows.counted_wrk`), with
    wrk's latency percentiles and the server's CPU time."""
    before = tree_cpu_seconds(target.process.pid)
    answered, took, refused, output = counted_wrk(row, target, chain, concurrency, seconds, seed,
                                                  requests, blocks, "--latency")
    used = tree_cpu_seconds(target.process.pid) - before
    p50, p99 = wrk.latency_ms(output, 50), wrk.latency_ms(output, 99)
    if p50 is None or p99 is None:
        raise SystemExit(f"wrk failed on {target.name}: {output}")
    return Cell(answered / took, p50, p99, used / answered * 1e6, refused)


def median_cell(cells: list[Cell]) -> Cell:
    return Cell(*(statistics.median(getattr(c, f) for c in cells)
                  for f in ("rate", "p50", "p99", "cpu")), sum(c.failed for c in cells))


def knob_cells(chain: PeerChain, selected: list[Row]) -> tuple[list[tuple[Row, int, tuple[int, int]]],
                                                                  tuple[int, int]]:
    """The cells of a knob's table (row, concurrency, the blocks it reads), each row of
    random blocks given blocks of its own that no other cell reads, and the blocks the servers
    are warmed on (the chain's last range)."""
    reading = [(row, c) for row in selected for c in CONCURRENCY]
    random_blocks = {row.label for row in selected if re.search(r"\blo\b", row.lua)}
    ranges = sum(1 for row, _ in reading if row.label in random_blocks) + 1
    size = (chain.head - 1) // ranges
    if size < 200:
        raise SystemExit(f"--blocks {chain.head} is too few for {ranges} ranges of 200 blocks")
    cells = []
    first = 2
    for row, c in reading:
        blocks = (first, first + size - 1)
        if row.label in random_blocks:
            first += size
        cells.append((row, c, blocks))
    return cells, (first, chain.head)


def run_knobs(args: argparse.Namespace, knobs: list[Knob], chain: PeerChain,
              workdir: Path) -> None:
    """Each knob on and off, for each worker count, on :data:`KNOB_ROWS` at each concurrency.
    A round starts a store server afresh for each state of the knob (the state that goes
    first alternating round by round), warms it on the chain's last blocks, then measures
    each cell: ``--requests`` reads of blocks no other cell reads (cold: no worker has met
    them). Each column of the table is the median over the rounds."""
    store = ensure_store(chain, workdir, "lmdb")
    requests = args.requests or 1000
    selected = [row for row in rows(chain) if row.label in KNOB_ROWS]
    cells, warm_blocks = knob_cells(chain, selected)
    seed = random.randrange(1, 1 << 20)
    print(f"\n{os.cpu_count()} CPUs shared by the servers and wrk; load average "
          f"{report.load_average()}; LMDB store; cold reads: {requests} requests a cell, each "
          f"row of random blocks reading {cells[-1][2][1] - cells[-1][2][0] + 1} blocks of its "
          f"own at each concurrency, on servers started afresh for each round and state, and "
          f"warmed on blocks {warm_blocks[0]}..{warm_blocks[1]}; medians of {args.rounds} "
          f"round(s), on and off taking turns; p50/p99: latency in ms; CPU: server µs a request")
    for knob in knobs:
        print(f"\n{knob.name}: on = {knob.flags(True)}, off = {knob.flags(False)}")
        print(f"{'workers':>7} {'row':<26} {'c':>3} {'on req/s':>9} {'off req/s':>9} "
              f"{'on/off':>6} {'p50 on/off':>13} {'p99 on/off':>15} {'CPU on/off':>11}",
              flush=True)
        for workers in args.knob_workers:
            measured: dict[tuple[str, int, bool], list[Cell]] = {}
            for turn in range(args.rounds):
                seed += 1  # the same bodies for on and off, new ones each round
                for on in ((True, False) if turn % 2 == 0 else (False, True)):
                    server = start_ethread(
                        f"{knob.name}-{'on' if on else 'off'}",
                        ["--db", str(store), *(knob.on if on else knob.off)], workdir,
                        workers=workers, timeout=120, announce=False,
                        ledger_suffix=knob.ledgers[0 if on else 1])
                    try:
                        for row in selected:
                            run_wrk(row, server, chain, 16, args.seconds, seed + 7, requests // 2,
                                    warm_blocks)
                        for row, c, blocks in cells:
                            measured.setdefault((row.label, c, on), []).append(counted_run(
                                row, server, chain, c, args.seconds, seed, requests, blocks))
                        for row in selected:
                            problem = sample_check(row, server, chain)
                            if problem is not None:
                                raise SystemExit(f"{knob.name} {'on' if on else 'off'} answers "
                                                 f"{row.label} wrongly: {problem}")
                    finally:
                        server.stop()
            for row, c, _ in cells:
                a = median_cell(measured[row.label, c, True])
                b = median_cell(measured[row.label, c, False])
                line = (f"{workers:>7} {row.label:<26} {c:>3} {a.rate:>9.0f} {b.rate:>9.0f} "
                        f"{a.rate / b.rate:>6.2f} {a.p50:>6.2f}/{b.p50:<6.2f} "
                        f"{a.p99:>7.2f}/{b.p99:<7.2f} {a.cpu:>5.0f}/{b.cpu:<5.0f}")
                if a.failed or b.failed:
                    line += f"  ({a.failed} / {b.failed} not 200)"
                print(line, flush=True)


# -- main ------------------------------------------------------------------------------------


PLAIN_SIMULATE = """
import sys
sys.path.insert(0, REPO)
from tests.support.plain_simulate import plain_simulation
plain_simulation().__enter__()
from ethread.cli import main
sys.exit(main())
""".replace("REPO", repr(str(REPO)))
"""``ethread serve`` with eth_simulateV1 on py-evm's own classes and tries (its workers are
forked: they keep the setting)."""

MEMORY_VARIANTS: tuple[tuple[str, list[str], str], ...] = (
    ("memory", [], MAIN),
    ("memory-plain", [], PLAIN_SIMULATE),
    ("metrics", ["--metrics"], MAIN),
    ("asgi", ["--no-lean-http"], MAIN),
    ("memory-noturns", ["--no-admission-turns"], MAIN),
)
"""The chain executed and held in memory, as served and with one piece changed (the
``python -c`` program that is its ``ethread`` command)."""

STORE_VARIANTS: tuple[tuple[str, list[str]], ...] = (
    ("store", []),
    ("store-nopoll", ["--busy-poll-us", "0"]),
    ("store-nofair", ["--no-fair-accept"]),
    ("store-noshared", ["--no-shared-fragments"]),
)
"""The store server as served, and with one fast-path piece turned on or off."""


def main() -> None:
    parser = report.parser(__doc__)
    parser.add_argument("--blocks", type=int, default=5001,
                        help="head of the chain (block 1 deploys, 2..head call)")
    parser.add_argument("--seconds", type=int, default=5,
                        help="per row, concurrency and round")
    parser.add_argument("--rounds", type=int, default=1,
                        help="measure each cell in this many turns, the targets alternating "
                             "(so that a slow minute of the machine falls on all of them)")
    parser.add_argument("--workdir", type=Path,
                        help="keep the chain and the store here for later runs "
                             "(default: a temporary directory)")
    parser.add_argument("--only", help="rows whose label contains this (or any of several "
                                       "texts separated by |)")
    parser.add_argument("--targets", default="anvil,bare,memory,store",
                        help="servers to load, of anvil, bare, memory, memory-plain (memory "
                             "on simulate's plain path: eth_simulateV1 on py-evm's own "
                             "classes and tries), metrics (memory with "
                             "--metrics), asgi (memory on uvicorn's ASGI path: --no-lean-http), "
                             "memory-noturns (memory with --no-admission-turns), store, "
                             "store-nopoll (the store with --busy-poll-us 0), store-nofair "
                             "(--no-fair-accept), store-noshared (--no-shared-fragments)")
    parser.add_argument("--requests", type=int, metavar="N",
                        help="cold reads: each cell sends N requests (at most --seconds) to an "
                             "ethread server started afresh for it, so that most reads find "
                             "nothing in the workers' caches; the rate is timed from the first "
                             "request to the last answer")
    parser.add_argument("--workers", type=int, default=2, help="ethread serve --workers")
    parser.add_argument("--engine", default="lmdb", choices=("lmdb", "leveldb"),
                        help="the store's engine (leveldb serves with one worker only)")
    parser.add_argument("--access-log", action="store_true", help="ethread logs each request")
    parser.add_argument("--cpu", action="store_true",
                        help="also print each server's CPU time per request (user + system, "
                             "all its processes): steadier than requests/s on a busy machine")
    parser.add_argument("--client", choices=("wrk", "python"),
                        default="wrk" if wrk.installed() else "python")
    parser.add_argument("--knobs", nargs="?", const=",".join(k.name for k in KNOBS),
                        metavar="NAMES",
                        help="instead of the servers side by side: each knob on and off (of "
                             f"{', '.join(k.name for k in KNOBS)}; comma-separated, default "
                             "all), the LMDB store with cold reads (--requests, default 1000), "
                             "for each --knob-workers; saved by default in "
                             "results/bench_vs_anvil_knob_NAME.txt (one knob) or "
                             "bench_vs_anvil_knobs.txt")
    parser.add_argument("--knob-workers", default="1,2",
                        type=lambda text: [int(n) for n in text.split(",")],
                        help="with --knobs: the worker counts, comma-separated (default 1,2)")
    report.add_options(parser, __file__)
    args = parser.parse_args()
    if args.knobs is not None:
        known = {k.name: k for k in KNOBS}
        names = args.knobs.split(",")
        if unknown := [n for n in names if n not in known]:
            parser.error(f"--knobs: unknown {', '.join(unknown)}")
        if not wrk.installed():
            parser.error("--knobs needs wrk (Debian's wrk package)")
        if args.save == RESULTS / "bench_vs_anvil.txt":
            args.save = RESULTS / (f"bench_vs_anvil_knob_{names[0]}.txt" if len(names) == 1
                                   else "bench_vs_anvil_knobs.txt")
    if args.blocks < 102:
        parser.error("--blocks must be at least 102 (the log windows are 100 blocks)")
    if args.rounds < 1 or args.seconds < 1:
        parser.error("--rounds and --seconds must be at least 1")
    targets = args.targets.split(",")
    with contextlib.ExitStack() as stack:
        stack.enter_context(report.recorded(args))
        workdir = args.workdir or Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="ethread-vs-anvil-")))
        workdir.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        chain = build(workdir / "chain", args.blocks)
        print(f"chain: {chain.head} blocks, Ping at {chain.ping} "
              f"({time.perf_counter() - started:.0f} s)", flush=True)
        if args.knobs is not None:
            run_knobs(args, [known[n] for n in names], chain, workdir)
            print(report.end_line(started))
            return
        servers: dict[str, Target] = {}
        starters: dict[str, Callable[[], Target]] = {}

        def launch(name: str, start: Callable[[], Target]) -> None:
            """Start a server (again, with ``--requests``, before each cell) and stop whichever
            instance is running when the run ends."""
            starters[name] = start
            servers[name] = start()
            stack.callback(lambda: servers[name].stop())

        workers = args.workers if args.engine == "lmdb" else 1
        memory_args = ["--genesis", str(chain.genesis), "--blocks", str(chain.blocks),
                       "--no-verify-seals"]
        if "anvil" in targets:
            launch("anvil", lambda: start_anvil(chain))
        if "bare" in targets:
            launch("bare", lambda: start_bare(args.workers))
        for name, extra, code in MEMORY_VARIANTS:
            if name in targets:
                launch(name, functools.partial(start_ethread, name, [*memory_args, *extra],
                                               workdir, workers=args.workers,
                                               access_log=args.access_log, timeout=1800,
                                               code=code))
        for name, extra in STORE_VARIANTS:
            if name in targets:
                store_args = ["--db", str(ensure_store(chain, workdir, args.engine)), *extra]
                launch(name, functools.partial(start_ethread, name, store_args, workdir,
                                               workers=workers, access_log=args.access_log,
                                               timeout=120))
        run = run_wrk if args.client == "wrk" else run_python
        cold = [name for name in servers if name not in ("anvil", "bare")]
        """With ``--requests``, the ethread servers restarted before each cell: every worker
        starts with empty caches (anvil holds its whole chain in memory either way), then warms
        its code (and the pages a forked worker copies on first write) with the same row on
        the last third of the chain; the row then asks for the first two thirds."""
        cold_blocks: tuple[int, int] | None = None
        warm_blocks: tuple[int, int] | None = None
        if args.requests is not None:
            if args.client != "wrk":
                parser.error("--requests needs wrk")
            cold_blocks = (1, chain.head * 2 // 3)
            warm_blocks = (cold_blocks[1] + 1, chain.head)
        columns: list[str] = [name for name in ("anvil", *(name for name, _, _ in MEMORY_VARIANTS),
                                                *(name for name, _ in STORE_VARIANTS))
                              if name in servers]
        print(f"\n{os.cpu_count()} CPUs shared by the servers and the load generator "
              f"({args.client}); load average {report.load_average()}; "
              f"{args.seconds} s x {args.rounds} round(s) per row; ethread: {args.workers} workers (store: {workers}, "
              f"{args.engine}), *.ledger ledger, access log {'on' if args.access_log else 'off'}")
        header = f"{'requests/s':<34} {'c':>3}" + "".join(f" {n:>9}" for n in columns)
        ratios = [n for n in columns if n != "anvil" and "anvil" in servers]
        header += "".join(f" {n + '/anvil':>13}" for n in ratios)
        ethreads = [n for n in columns if n != "anvil"]
        if "bare" in servers:
            header += f" {'bare':>9}" + "".join(f" {n + '/bare':>12}" for n in ethreads)
        print(header)
        seed = random.randrange(1, 1 << 20)  # fresh bodies on every run
        for row in rows(chain):
            if args.only and not any(text in row.label for text in args.only.split("|")):
                continue
            for name in columns:
                problem = sample_check(row, servers[name], chain)
                if problem is not None:
                    print(f"{row.label}: {name} answers wrongly: {problem}")
            for concurrency in CONCURRENCY:
                rates: dict[str, float] = {}
                cpu: dict[str, float] = {}
                notes = []
                order = list(columns)
                if "bare" in servers and row.label.startswith("eth_chainId"):
                    order.append("bare")
                done = dict.fromkeys(order, 0.0)
                answers = dict.fromkeys(order, 0.0)
                used = dict.fromkeys(order, 0.0)
                failures = dict.fromkeys(order, 0)
                for _ in range(args.rounds):  # the targets take turns: both see the same minutes
                    for name in order:
                        seed += 1
                        if args.requests is not None and name in cold:
                            # a server that has served nothing of the measured blocks: started
                            # afresh, then warmed with the same row on the other blocks
                            servers[name].stop()
                            servers[name] = starters[name]()
                            run(row, servers[name], chain, concurrency, args.seconds, seed + 7,
                                args.requests, warm_blocks)
                        pid = servers[name].process.pid
                        before = tree_cpu_seconds(pid)
                        rate, failed = run(row, servers[name], chain, concurrency, args.seconds,
                                           seed, args.requests, cold_blocks)
                        used[name] += tree_cpu_seconds(pid) - before
                        done[name] += rate
                        answers[name] += rate * args.seconds if args.requests is None else \
                            min(args.requests, rate * args.seconds)
                        failures[name] += failed
                for name in order:
                    rates[name] = done[name] / args.rounds
                    cpu[name] = used[name] / answers[name] * 1e6 if answers[name] else 0.0
                    if failures[name]:
                        notes.append(f"{name}: {failures[name]} failed")
                line = f"{row.label:<34} {concurrency:>3}" + "".join(
                    f" {rates[n]:>9.0f}" for n in columns)
                line += "".join(f" {rates[n] / rates['anvil']:>13.2f}" if rates["anvil"]
                                else f" {'-':>13}" for n in ratios)
                if "bare" in rates:
                    line += f" {rates['bare']:>9.0f}" + "".join(
                        f" {rates[n] / rates['bare']:>12.2f}" for n in ethreads)
                if notes:
                    line += "  (" + "; ".join(notes) + ")"
                print(line, flush=True)
                if args.cpu:
                    line = f"{'  server CPU us/request':<34} {concurrency:>3}" + "".join(
                        f" {cpu[n]:>9.1f}" for n in columns)
                    line += " " * (14 * len(ratios))
                    if "bare" in cpu:
                        line += f" {cpu['bare']:>9.1f}"
                    print(line, flush=True)
        print(report.end_line(started))


if __name__ == "__main__":
    main()
