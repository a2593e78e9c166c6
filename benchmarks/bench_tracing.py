"""Tracing beside anvil on the same chain, in one run: requests/s of debug_traceTransaction
with callTracer and with the opcode logger (the struct logger), each on distinct and on
repeated transactions, at concurrency 1 and 16, on tracing's fast path and on its plain one;
and eth_call on distinct calldata on ethread with and without the tracing hook module loaded.

    .venv/bin/python benchmarks/bench_tracing.py [--blocks 1001] [--seconds 5] [--rounds 1]
        [--workdir DIR] [--client wrk|python] [--cpu] [--only TEXT] [--replays-only]

The chain is bench_vs_anvil.py's (``benchlib/peer_chain.py``: block 1 deploys Ping, each later block
holds one call to it, which logs and returns), started the same way: anvil from the same
genesis with the same signed transactions replayed block by block, ethread with ``ethread
serve --genesis --blocks`` (one worker, so that both ethread servers run the same way).

- **distinct** transactions: request n asks for transaction n of the chain (each thread
  starting at its own place) with a timeout of its own, so no answer is ever reused;
- **repeated**: every request asks for the same transaction, with a new id each time (a
  client numbering its requests);
- **anvil-steps**: anvil started with ``--steps-tracing``. Without it anvil records no steps
  when it mines and answers every opcode log with an empty step list, whatever the request's
  options (``enableMemory`` and the rest change nothing); with it, it answers the opcode
  logger from the steps it recorded while mining (a lookup, no execution: tens of
  microseconds a request), while its callTracer answers cost what a replay costs. The
  struct logger's rows are compared with anvil-steps;
- **plain**: ethread on tracing's plain path (``tests/support/plain_replay.py``: py-evm's own classes,
  a block replayed from its start for every request) with no trace answer kept, beside the
  fast path in the same run;
- **recorded**: ``ethread serve --record-traces`` over the whole chain: every transaction
  traced at start with the opcode logger and callTracer (default configurations), as
  anvil-steps records its steps while mining, and answered from that record (the rows'
  per-request ``timeout`` aside, nothing runs);
- **no-tracing**: ``ethread serve`` started with the trace method tables replaced by empty
  ones and any import of ``ethread.methods.tracing`` refused, so the process never loads the
  hooks (the eth_call row only).

**Time per trace on the scenario chain** (printed first; ``--scenario-only`` for it alone):
the transactions of ``benchlib/trace_scenario.py`` (calls nested three deep with every call
kind, caught and uncaught reverts, custom errors, creates that revert, run out of gas, collide
or self-destruct, precompiles, logs at several depths, every kind of SSTORE, legacy and
access-list transactions), each traced once a round, one request at a time, each request
distinct: ``uncached`` keeps no answer and no replayed block (only what is keyed by content, as
eth_call does), ``ethread`` is the default server, ``recorded`` answers from
``--record-traces``; ``--baseline CHECKOUT`` adds another checkout's ethread, uncached. Runs
of ``--scenario-only --scenario-rounds 5 --baseline /work/main`` (load average 5 to 12, ms per
trace, median): callTracer anvil 0.9 to 1.6, uncached 3.3 to 4.0, recorded 0.3 to 0.4; the
opcode logger anvil ``--steps-tracing`` 0.4 to 0.5 (from its record), uncached 3.5 to 5.0,
recorded 0.3 to 0.6. The baseline's figures moved more than the others' between runs (7.7 ms
in one, 2.9 to 3.1 in two later ones on a newer main): ``bench_trace_inprocess.py`` compares
checkouts on CPU time without the server (this branch 3.1 / 3.4 ms, main 6.7 / 6.2 ms for
callTracer / the opcode logger). Where an uncached trace's time goes:
``benchmarks/profile_tracing.py``.

ethread keeps answers (the answer cache: a repeated trace is answered as a cached eth_call
is, before any thread hop; the trace cache, across new blocks) and the blocks it replayed
lately (``methods/tracing/states.py``), which the in-process rows printed first measure:
blocks of 16 transactions, each traced once.

Measured with ``--blocks 1001 --seconds 3 --rounds 2 --cpu`` (wrk, load average 4.6 to 6.4 from
other work on the machine: the figures move with it), requests/s at c=1 / c=16 and server CPU
per request at c=16:

| row | anvil | anvil-steps | ethread | ethread, plain |
|---|---|---|---|---|
| callTracer, distinct | 1,417 / 902 | 1,529 / 997 | 469 / 416 (1.9 ms) | 310 / 231 (3.3 ms) |
| callTracer, repeated | 2,456 / 2,593 | 2,483 / 2,979 | 13,338 / 25,510 (24 us) | 237 / 323 |
| struct logger, distinct | 19,120 / 27,244 (no steps) | 9,621 / 13,298 | 575 / 665 (1.4 ms) | 385 / 418 (2.2 ms) |
| struct logger, repeated | 22,960 / 27,189 (no steps) | 9,775 / 16,220 | 12,058 / 12,650 (31 us) | 262 / 314 |

A later run of the trace rows alone (``--only traceTransaction``, load average 3.8 to 5.4,
after the server's busy polling was turned off by default):

| row | anvil | anvil-steps | ethread | ethread, plain |
|---|---|---|---|---|
| callTracer, distinct | 1,132 / 1,623 | 1,352 / 1,616 | 757 / 658 (1.3 ms) | 383 / 443 (2.1 ms) |
| callTracer, repeated | 3,051 / 3,232 | 3,122 / 3,164 | 20,706 / 29,634 (21 us) | 413 / 453 |
| struct logger, distinct | 22,249 / 31,255 (no steps) | 12,943 / 17,464 | 568 / 652 (1.3 ms) | 343 / 391 (2.5 ms) |
| struct logger, repeated | 22,756 / 30,290 (no steps) | 12,900 / 14,985 | 20,408 / 17,554 (28 us) | 386 / 239 |

ethread serves from one worker (one core under the interpreter lock) where anvil's threads use
both cores: at c=16 a distinct trace's 1.3 ms of CPU caps it near 750 requests/s.

In process (traces/s): 16-transaction blocks, callTracer in order 151 plain, 277 fast, 1,411
with kept replays (shuffled 142 / 255 / 718); struct logger in order 128 / 258 / 1,298
(shuffled 118 / 199 / 982).

eth_call, distinct, with and without the tracing modules (``--only eth_call --rounds 4
--seconds 2``, load average 7.4 to 8.9): ethread 3,268 / 5,540 (179 / 134 us), no-tracing
2,456 / 3,585 (193 / 151 us), anvil 3,960 / 19,618; the run before, the other way round
(3,067 / 4,980 against 5,069 / 6,153): within the machine's noise, and in process an eth_call
costs the same before and after 600 traces filled the trace caches (108 and 105 us).

Before this work (same flags, load 7.8 to 11): callTracer distinct 231 / 359 (3.3 ms), repeated
2,353 / 6,683; struct logger distinct 139 / 122 (4.0 ms), repeated 3,585 / 5,924.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchlib import REPO, report, targets, wrk
from benchlib.peer_chain import PeerChain, build
from benchlib.processes import tree_cpu_seconds
from benchlib.rows import Row, body, distinct_call_row, lua_body, run_python, run_wrk, sample_check
from benchlib.serve import MAIN
from benchlib.targets import Target, running, start_anvil
from benchlib.trace_scenario import ScenarioFiles, write_files

CONCURRENCY = (1, 16)

NO_TRACING = """
import importlib.abc, sys, types
class _Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "ethread.methods.tracing" or name.startswith("ethread.methods.tracing."):
            raise ImportError("this server runs without the tracing modules")
        return None
sys.meta_path.insert(0, _Refuse())
for namespace in ("debug", "trace"):  # (the table without their rows)
    stub = types.ModuleType("ethread.rpc." + namespace)
    stub.ROWS = ()
    sys.modules[stub.__name__] = stub
from ethread.cli import main
sys.exit(main())
"""


PLAIN = """
import dataclasses, sys, types
from ethread.rpc import context, debug, table, trace
table.TABLE = types.MappingProxyType({**table.TABLE, **{
    row.name: dataclasses.replace(row, cacheable=False) for row in (*debug.ROWS, *trace.ROWS)
    if row.slow}})
_for_backend = context.Context.for_backend
context.Context.for_backend = lambda self: dataclasses.replace(_for_backend(self), traces=None)
sys.path.insert(0, REPO)
from tests.support.plain_replay import plain_tracing
plain_tracing().__enter__()
from ethread.cli import main
sys.exit(main())
""".replace("REPO", repr(str(REPO)))
"""``ethread serve`` on tracing's plain path (``tests/support/plain_replay.py``): py-evm's own
classes, each request replaying its block, no answer kept (neither in the answer cache nor in
the trace cache)."""


UNCACHED = """
import dataclasses, sys, types
from ethread.rpc import debug, table, trace, trace_cache
from ethread.methods.tracing import ReplayStates
table.TABLE = types.MappingProxyType({**table.TABLE, **{
    row.name: dataclasses.replace(row, cacheable=False) for row in (*debug.ROWS, *trace.ROWS)
    if row.slow}})
trace_cache.TraceCache.answer = lambda self, key, compute: compute()
ReplayStates.give = lambda self, replay: None
from ethread.cli import main
sys.exit(main())
"""
"""``ethread serve`` on tracing's fast path with no answer kept (in the answer cache or the
trace cache) and no replayed block kept, so every trace replays its block from the parent's
state; what is keyed by content (decoded accounts, code, trie nodes, a block's system writes,
as eth_call keeps them) is kept."""


def start_ethread(name: str, chain: PeerChain | ScenarioFiles, workdir: Path, *, code: str = MAIN,
                  workers: int = 1, extra: tuple[str, ...] = (),
                  checkout: Path | None = None) -> Target:
    """``ethread serve`` of the chain with ``workers`` processes and ``extra`` flags; ``code``:
    the ``python -c`` program that is the ``ethread`` command (:data:`PLAIN`,
    :data:`NO_TRACING`); ``checkout``: another ethread's source folder to import instead."""
    env = None if checkout is None else {"PYTHONPATH": str(checkout)}
    return targets.start_ethread(name, ["--genesis", str(chain.genesis), "--blocks",
                                        str(chain.blocks), "--no-verify-seals", *extra], workdir,
                                 workers=workers, code=code, announce=False, env=env)


def start_anvil_steps(chain: PeerChain | ScenarioFiles) -> Target:
    """anvil as :func:`start_anvil` starts it, with ``--steps-tracing``: it records each
    transaction's steps as it mines it and answers the opcode logger from that record
    (without the flag it records none, and every opcode log it answers is empty)."""
    return start_anvil(chain, name="anvil-steps", flags=("--steps-tracing",))


def _trace_rows(label: str, config: str, check: Callable[[Any, PeerChain], bool]) -> list[Row]:
    """The distinct and repeated rows of one tracer. A distinct request also carries a timeout
    of its own (10 s and n ms): the same work, but parameters no cache has seen, so that a
    row longer than the chain still measures tracing."""
    unique = config[:-1] + ("," if config != "{}" else "")
    distinct = Row(
        f"{label}, distinct",
        lua_body("debug_traceTransaction",
                 f"'[\"' .. hashes[((seed * 13 + n) % #hashes) + 1] .. '\",{unique}\"timeout\":\"' "
                 ".. (10000 + n) .. 'ms\"}]'"),
        lambda rng, n, c: body("debug_traceTransaction",
                               f'["{c.tx_hashes[(rng.getrandbits(16) + n) % len(c.tx_hashes)]}",'
                               f'{unique}"timeout":"{10000 + n}ms"}}]', n).encode(),
        check)
    repeated = Row(
        f"{label}, repeated",
        lua_body("debug_traceTransaction", f"'[\"' .. hashes[1] .. '\",{config}]'"),
        lambda rng, n, c: body("debug_traceTransaction", f'["{c.tx_hashes[0]}",{config}]',
                               n).encode(),
        check)
    return [distinct, repeated]


def rows() -> list[Row]:
    def call_tree(result: Any, chain: PeerChain) -> bool:
        return isinstance(result, dict) and result.get("type") == "CALL" and "logs" not in result

    def steps(result: Any, chain: PeerChain) -> bool:
        return isinstance(result, dict) and len(result.get("structLogs", ())) > 10

    return [
        *_trace_rows("traceTransaction callTracer", '{"tracer":"callTracer"}', call_tree),
        *_trace_rows("traceTransaction structLogs", "{}", steps),
        distinct_call_row(),
    ]


def kept_replays(blocks: int = 6, per_block: int = 16) -> None:
    """In process, no server: debug_traceTransaction of every transaction of blocks holding
    ``per_block`` calls to Ping each (as an indexer traces a block's transactions, in order and
    shuffled), on the plain path, on the fast one without kept replays, and with them."""
    from benchlib.peer_chain import PING

    from ethread.backends.memory import MemoryBackend
    from ethread.devchain import DevChain
    from ethread.methods.tracing import ReplayStates, TraceOptions, trace_transaction

    sys.path.insert(0, str(REPO))  # the tests' oracle: tracing's plain path
    from tests.support.plain_replay import plain_trace_transaction

    backend = MemoryBackend()
    dev = DevChain(backend, accounts=3)
    ping = dev.deploy_runtime(dev.accounts[0], PING)
    dev.mine()
    hashes: list[list[bytes]] = []
    for block in range(blocks):
        hashes.append([dev.send(dev.accounts[1 + i % 2], ping, data=bytes([1, i, block, 0]))
                       for i in range(per_block)])
        dev.mine()
    shuffled = [random.Random(n).sample(row, len(row)) for n, row in enumerate(hashes)]
    print(f"\nin process: {blocks} blocks of {per_block} calls, each transaction traced once "
          "(traces/s, process CPU)")
    print(f"{'':<44} {'plain':>9} {'fast':>9} {'fast, kept replays':>19}")
    for label, options in (("callTracer", TraceOptions(tracer="callTracer")),
                           ("structLogs", TraceOptions())):
        for order, rows in (("in order", hashes), ("shuffled", shuffled)):
            rates = []
            for trace, states in ((plain_trace_transaction, None), (trace_transaction, None),
                                  (trace_transaction, ReplayStates())):
                started = time.process_time()
                for row in rows:
                    for tx_hash in row:
                        trace(backend, tx_hash, options, states=states)
                rates.append(blocks * per_block / (time.process_time() - started))
            print(f"{label + ', ' + order:<44} {rates[0]:>9.0f} {rates[1]:>9.0f} {rates[2]:>19.0f}",
                  flush=True)


SCENARIO_CONFIGS = {"callTracer": '{"tracer":"callTracer","timeout":"%dms"}',
                    "structLogs": '{"timeout":"%dms"}'}


def _latency(target: Target, files: ScenarioFiles, config: str, rounds: int,
             seed: int) -> tuple[list[float], float]:
    """Each scenario transaction traced once a round, one request at a time over one
    connection, in a shuffled order; every request distinct (its own timeout); the seconds
    of each, and the server's CPU seconds per request."""
    conn = http.client.HTTPConnection("127.0.0.1", target.port, timeout=120)
    times = []
    rng = random.Random(seed)
    n = seed * 1000
    before = tree_cpu_seconds(target.process.pid)
    for _ in range(rounds):
        for tx_hash in rng.sample(files.tx_hashes, len(files.tx_hashes)):
            n += 1
            payload = body("debug_traceTransaction", f'["{tx_hash}",{config % (10000 + n)}]', n)
            started = time.perf_counter()
            conn.request("POST", target.path, payload, {"Content-Type": "application/json"})
            answer = conn.getresponse().read()
            times.append(time.perf_counter() - started)
            if b'"error"' in answer[:40]:
                raise SystemExit(f"{target.name}: {answer[:300]!r}")
    cpu = (tree_cpu_seconds(target.process.pid) - before) / len(times)
    conn.close()
    return times, cpu


def scenario_latency(workdir: Path, rounds: int, stack: contextlib.ExitStack,
                     baseline: Path | None = None) -> None:
    """Time per trace, one request at a time, on the scenario chain (``benchlib/
    trace_scenario.py``) in ethread and in anvil: callTracer beside anvil, the opcode logger
    beside anvil ``--steps-tracing`` (without it anvil logs no steps); with ``baseline``, also
    that checkout's ethread uncached (the figures move with the machine's load: a before and
    after in one run)."""
    files = write_files(workdir / "scenario")
    servers = {
        "anvil": stack.enter_context(running(lambda: start_anvil(files))),
        "anvil-steps": stack.enter_context(running(lambda: start_anvil_steps(files))),
        "uncached": stack.enter_context(running(lambda: start_ethread(
            "uncached", files, workdir, code=UNCACHED))),
        "ethread": stack.enter_context(running(lambda: start_ethread("ethread", files, workdir))),
        "recorded": stack.enter_context(running(lambda: start_ethread(
            "recorded", files, workdir, extra=("--record-traces", str(files.head + 1))))),
    }
    if baseline is not None:
        servers["baseline"] = stack.enter_context(running(lambda: start_ethread(
            "baseline", files, workdir, code=UNCACHED, checkout=baseline)))
    print(f"\nscenario chain: {len(files.tx_hashes)} transactions in {files.head} blocks, each "
          f"traced once a round, {rounds} rounds, one request at a time; load average "
          f"{report.load_average()}")
    print("ms per trace (median; 90th percentile); server CPU ms per trace")
    names = list(servers)
    print(f"{'':<14}" + "".join(f"{n:>22}" for n in names) + f"{'uncached/peer':>15}")
    for label, config in SCENARIO_CONFIGS.items():
        here = [n for n in names if not (label == "structLogs" and n == "anvil")
                and not (label == "callTracer" and n == "anvil-steps")]
        medians: dict[str, float] = {}
        cells: dict[str, str] = {}
        for offset, name in enumerate(here):  # (a warm-up round apart)
            _latency(servers[name], files, config, 1, 7 + offset)
            times, cpu = _latency(servers[name], files, config, rounds, 100 + offset)
            times.sort()
            medians[name] = statistics.median(times)
            cells[name] = (f"{medians[name] * 1e3:.2f}; {times[len(times) * 9 // 10] * 1e3:.2f}; "
                           f"{cpu * 1e3:.2f}")
        peer = "anvil" if label == "callTracer" else "anvil-steps"
        print(f"{label:<14}" + "".join(f"{cells.get(n, '-'):>22}" for n in names)
              + f"{medians['uncached'] / medians[peer]:>15.2f}", flush=True)


def main() -> None:
    parser = report.parser(__doc__)
    parser.add_argument("--blocks", type=int, default=1001)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--only", help="rows whose label contains this")
    parser.add_argument("--cpu", action="store_true", help="also print CPU us per request")
    parser.add_argument("--client", choices=("wrk", "python"),
                        default="wrk" if wrk.installed() else "python")
    parser.add_argument("--workers", type=int, default=1,
                        help="ethread serve --workers for the ethread and recorded servers "
                             "(anvil's threads use every core)")
    parser.add_argument("--replays-only", action="store_true",
                        help="only the in-process rows of blocks with many transactions")
    parser.add_argument("--scenario-only", action="store_true",
                        help="only the time per trace on the scenario chain, beside anvil")
    parser.add_argument("--scenario-rounds", type=int, default=5)
    parser.add_argument("--baseline", type=Path, metavar="CHECKOUT",
                        help="also time another checkout's ethread, uncached, on the scenario")
    report.add_options(parser, __file__)
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        stack.enter_context(report.recorded(args))
        workdir = args.workdir or Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="ethread-bench-tracing-")))
        workdir.mkdir(parents=True, exist_ok=True)
        with contextlib.ExitStack() as scenario_servers:
            scenario_latency(workdir, args.scenario_rounds, scenario_servers, args.baseline)
        if args.scenario_only:
            return
        kept_replays()
        if args.replays_only:
            return
        started = time.perf_counter()
        chain = build(workdir / "chain", args.blocks)
        servers = {
            "anvil": stack.enter_context(running(lambda: start_anvil(chain))),
            "anvil-steps": stack.enter_context(running(lambda: start_anvil_steps(chain))),
            "ethread": stack.enter_context(running(lambda: start_ethread(
                "ethread", chain, workdir, workers=args.workers))),
            "recorded": stack.enter_context(running(lambda: start_ethread(
                "recorded", chain, workdir, workers=args.workers,
                extra=("--record-traces", str(chain.head + 1))))),
            "plain": stack.enter_context(running(lambda: start_ethread(
                "plain", chain, workdir, code=PLAIN))),
            "no-tracing": stack.enter_context(running(lambda: start_ethread(
                "no-tracing", chain, workdir, code=NO_TRACING))),
        }
        _status, answer = servers["no-tracing"].post(body("debug_traceTransaction",
                                                         f'["{chain.tx_hashes[0]}"]').encode())
        assert answer.get("error", {}).get("code") == -32601, answer  # (really without tracing)
        run = run_wrk if args.client == "wrk" else run_python
        print(f"\n{os.cpu_count()} CPUs shared by the servers and the load generator "
              f"({args.client}); load average {report.load_average()}; "
              f"{args.seconds} s x {args.rounds} round(s) per row; chain of {chain.head} blocks")
        names = list(servers)
        print(f"{'requests/s':<40} {'c':>3}" + "".join(f" {n:>11}" for n in names)
              + f" {'ethread/anvil':>14}")
        seed = random.randrange(1, 1 << 16)
        for row in rows():
            if args.only and args.only not in row.label:
                continue
            here = (["anvil", "ethread", "no-tracing"] if row.label.startswith("eth_call")
                    else ["anvil", "anvil-steps", "ethread", "recorded", "plain"])
            for name in here:
                problem = sample_check(row, servers[name], chain)
                if problem is not None and not (name == "anvil" and "structLogs" in row.label):
                    print(f"{row.label}: {name} answers wrongly: {problem}")
            for concurrency in CONCURRENCY:
                done = dict.fromkeys(here, 0.0)
                used = dict.fromkeys(here, 0.0)
                for _ in range(args.rounds):
                    for name in here:
                        seed += 1
                        pid = servers[name].process.pid
                        before = tree_cpu_seconds(pid)
                        rate, failed = run(row, servers[name], chain, concurrency, args.seconds,
                                           seed)
                        if failed:
                            print(f"  ({name}: {failed} failed)")
                        used[name] += tree_cpu_seconds(pid) - before
                        done[name] += rate * args.seconds
                rates = {n: done[n] / (args.seconds * args.rounds) for n in here}
                line = f"{row.label:<40} {concurrency:>3}" + "".join(
                    f" {rates[n]:>11.0f}" if n in rates else f" {'-':>11}" for n in names)
                # the opcode logger beside the anvil that logs steps
                peer = "anvil-steps" if "structLogs" in row.label else "anvil"
                line += f" {rates['ethread'] / rates[peer]:>14.3f}" if rates[peer] else ""
                if row.label.startswith("traceTransaction structLogs"):
                    line += "  (anvil: no steps; ratio to anvil-steps)"
                print(line, flush=True)
                if args.cpu:
                    print(f"{'  server CPU us/request':<40} {concurrency:>3}" + "".join(
                        f" {used[n] / done[n] * 1e6:>11.0f}" if done.get(n)
                        else f" {'-':>11}" for n in names), flush=True)
        print(report.end_line(started))


if __name__ == "__main__":
    main()
