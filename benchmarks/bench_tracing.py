"""Tracing beside anvil on the same chain, in one run: requests/s of debug_traceTransaction
with callTracer and with the opcode logger (the struct logger), each on distinct and on
repeated transactions, at concurrency 1 and 16; and eth_call on distinct calldata on ethread
with and without the tracing hook module loaded.

    .venv/bin/python benchmarks/bench_tracing.py [--blocks 1001] [--seconds 5] [--rounds 1]
        [--workdir DIR] [--client wrk|python] [--cpu]

The chain is bench_vs_anvil.py's (``peer_chain.py``: block 1 deploys Ping, each later block
holds one call to it, which logs and returns), started the same way: anvil from the same
genesis with the same signed transactions replayed block by block, ethread with ``ethread
serve --genesis --blocks`` (one worker, so that both ethread servers run the same way).

- **distinct** transactions: request n asks for transaction n of the chain (each thread
  starting at its own place), so a row shorter than the chain never asks twice;
- **repeated**: every request asks for the same transaction, with a new id each time (a
  client numbering its requests: no answer-by-body shortcut);
- **ethread, no tracing**: ``ethread serve`` started with the trace method tables replaced by
  empty ones and any import of ``ethread.methods.tracing`` refused, so the process never loads
  the hooks (the eth_call row only: it shows what loading the tracing modules costs a call
  that is not traced: nothing, since eth_call runs its own classes and the hooked ones are
  only made for a traced run).

anvil (the pinned release) answers the opcode logger with no steps for this chain's
transactions (tests/test_tracing_anvil.py): its structLogs figures are not comparable.

ethread keeps the trace of a mined transaction once made (a dispatcher's trace cache, keyed by
the block's hash, the transaction and the trace's configuration: the answer never changes), so
its repeated rows measure answering from that cache; its distinct rows each replay a block.

Measured with ``--blocks 1001 --seconds 3 --rounds 2 --cpu`` (wrk, load average 7.8 to 11:
the figures move with the machine), requests/s at c=1 / c=16 and server CPU per request:

| row | anvil | ethread | ethread, no tracing |
|---|---|---|---|
| callTracer, distinct | 1,208 / 1,698 | 231 / 359 (3.3 ms) | - |
| callTracer, repeated | 2,904 / 2,593 | 2,353 / 6,683 (0.24 ms) | - |
| struct logger, distinct | 10,242 / 21,858 (no steps) | 139 / 122 (4.0 ms) | - |
| struct logger, repeated | 12,853 / 16,596 (no steps) | 3,585 / 5,924 (0.24 ms) | - |
| eth_call, distinct | 2,376 / 11,517 | 1,300 / 3,846 (273 / 214 us) | 1,427 / 3,194 (285 / 204 us) |

Before the trace cache, a repeated callTracer trace ran at 171 / 110 requests/s (each one
replayed its block); eth_call costs the same CPU with and without the tracing modules.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))  # (the benchmarks folder is not a package)

from bench_vs_anvil import (
    ANVIL_PACKAGES,
    KEY,
    Row,
    Target,
    _body,
    free_port,
    replay,
    run_python,
    run_wrk,
    running,
    sample_check,
    start_anvil,
    tree_cpu_seconds,
    wait_until_up,
)
from peer_chain import PeerChain, build

CONCURRENCY = (1, 16)

NO_TRACING = """
import importlib.abc, sys, types
class _Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "ethread.methods.tracing" or name.startswith("ethread.methods.tracing."):
            raise ImportError("this server runs without the tracing modules")
        return None
sys.meta_path.insert(0, _Refuse())
trace_rpc = types.ModuleType("ethread.codec.trace_rpc")
trace_rpc.MAX_TRACE_TIMEOUT = 60.0
trace_rpc.TRACE_METHODS = {}
trace_rpc.TraceHandler = object
parity_rpc = types.ModuleType("ethread.codec.parity_rpc")
parity_rpc.PARITY_METHODS = {}
sys.modules["ethread.codec.trace_rpc"] = trace_rpc
sys.modules["ethread.codec.parity_rpc"] = parity_rpc
from ethread.cli import main
sys.exit(main())
"""


PLAIN = """
import dataclasses, os, sys
os.environ["ETHREAD_TRACE_PLAIN"] = "1"
from ethread.codec import dispatch
from ethread.codec.parity_rpc import PARITY_METHODS
from ethread.codec.trace_rpc import TRACE_METHODS
for name in (*TRACE_METHODS, *PARITY_METHODS):
    dispatch.METHODS[name] = dataclasses.replace(dispatch.METHODS[name], cacheable=False)
_for_backend = dispatch.Context.for_backend
dispatch.Context.for_backend = lambda self: dataclasses.replace(_for_backend(self), traces=None)
from ethread.cli import main
sys.exit(main())
"""
"""``ethread serve`` on tracing's plain path: py-evm's own classes, each request replaying its
block, no answer kept (neither in the answer cache nor in the trace cache)."""
SERVE = "import sys; from ethread.cli import main; sys.exit(main())"


def start_ethread(name: str, chain: PeerChain, workdir: Path, *, code: str = SERVE) -> Target:
    port = free_port()
    ledger = workdir / f"credits-{name}.ledger"
    ledger.unlink(missing_ok=True)
    command = [sys.executable, "-c", code, "serve", "--genesis", str(chain.genesis), "--blocks",
               str(chain.blocks), "--no-verify-seals", "--port", str(port), "--api-key", KEY,
               "--daily-credits", str(10**15), "--ledger", str(ledger), "--workers", "1",
               "--log-level", "warning", "--no-access-log"]
    errors = workdir / f"serve-{name}.stderr"
    with errors.open("wb") as sink:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=sink)
    target = Target(name, port, f"/v3/{KEY}", process)
    try:
        wait_until_up(target, 600, 1)
    except SystemExit:
        print(errors.read_text(errors="replace")[-3000:], file=sys.stderr)
        raise
    return target


def start_anvil_steps(chain: PeerChain) -> Target:
    """anvil as :func:`start_anvil` starts it, with ``--steps-tracing``: it records each
    transaction's steps as it mines it and answers the opcode logger from that record
    (without the flag it records none, and every opcode log it answers is empty)."""
    binaries = sorted(ANVIL_PACKAGES.glob("anvil-*/bin/anvil"))
    if not binaries:
        raise SystemExit("anvil is not installed: run `npm ci` (or npm install) in tests/js")
    port = free_port()
    home = Path(tempfile.mkdtemp(prefix="ethread-bench-anvil-"))
    process = subprocess.Popen(
        [str(binaries[0]), "--init", str(chain.genesis), "--host", "127.0.0.1", "--port",
         str(port), "--no-mining", "--order", "fifo", "--hardfork", "prague", "--accounts", "0",
         "--disable-default-create2-deployer", "--steps-tracing"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "HOME": str(home)})
    target = Target("anvil-steps", port, "/", process, home)
    try:
        wait_until_up(target, 30)
        replay(target, chain)
    except BaseException:
        target.stop()
        raise
    return target


def _lua(method: str, params: str) -> str:
    return (f"'{{\"jsonrpc\":\"2.0\",\"id\":' .. n .. ',\"method\":\"{method}\","
            f"\"params\":' .. {params} .. '}}'")


def _trace_rows(label: str, config: str, check: Callable[[Any, PeerChain], bool]) -> list[Row]:
    """The distinct and repeated rows of one tracer. A distinct request also carries a timeout
    of its own (10 s and n ms): the same work, but parameters no cache has seen, so that a
    row longer than the chain still measures tracing."""
    unique = config[:-1] + ("," if config != "{}" else "")
    distinct = Row(
        f"{label}, distinct",
        _lua("debug_traceTransaction",
             f"'[\"' .. hashes[((seed * 13 + n) % #hashes) + 1] .. '\",{unique}\"timeout\":\"' "
             ".. (10000 + n) .. 'ms\"}]'"),
        lambda rng, n, c: _body("debug_traceTransaction",
                                f'["{c.tx_hashes[(rng.getrandbits(16) + n) % len(c.tx_hashes)]}",'
                                f'{unique}"timeout":"{10000 + n}ms"}}]', n).encode(),
        check)
    repeated = Row(
        f"{label}, repeated",
        _lua("debug_traceTransaction", f"'[\"' .. hashes[1] .. '\",{config}]'"),
        lambda rng, n, c: _body("debug_traceTransaction", f'["{c.tx_hashes[0]}",{config}]',
                                n).encode(),
        check)
    return [distinct, repeated]


def rows() -> list[Row]:
    def call_tree(result: Any, chain: PeerChain) -> bool:
        return isinstance(result, dict) and result.get("type") == "CALL" and "logs" not in result

    def steps(result: Any, chain: PeerChain) -> bool:
        return isinstance(result, dict) and len(result.get("structLogs", ())) > 10

    def distinct_call(rng: random.Random, n: int, c: PeerChain) -> bytes:
        data = f"0x{'0' * 48}{rng.getrandbits(32):08x}{n:08x}"
        return _body("eth_call", f'[{{"to":"{c.ping}","data":"{data}"}},"latest"]', n).encode()

    return [
        *_trace_rows("traceTransaction callTracer", '{"tracer":"callTracer"}', call_tree),
        *_trace_rows("traceTransaction structLogs", "{}", steps),
        Row("eth_call, distinct",
            _lua("eth_call", "'[{\"to\":\"' .. ping .. '\",\"data\":\"0x' .. string.rep('0', 48) "
                             ".. string.format('%08x%08x', seed, n) .. '\"},\"latest\"]'"),
            distinct_call, lambda result, c: isinstance(result, str) and len(result) == 66),
    ]


def kept_replays(blocks: int = 6, per_block: int = 16) -> None:
    """In process, no server: debug_traceTransaction of every transaction of blocks holding
    ``per_block`` calls to Ping each (as an indexer traces a block's transactions, in order and
    shuffled), on the plain path, on the fast one without kept replays, and with them."""
    from peer_chain import PING

    from ethread.backends.memory import MemoryBackend
    from ethread.devchain import DevChain
    from ethread.methods.tracing import ReplayStates, TraceOptions, trace_transaction

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
            for fast, states in ((False, None), (True, None), (True, ReplayStates())):
                started = time.process_time()
                for row in rows:
                    for tx_hash in row:
                        trace_transaction(backend, tx_hash, options, fast=fast, states=states)
                rates.append(blocks * per_block / (time.process_time() - started))
            print(f"{label + ', ' + order:<44} {rates[0]:>9.0f} {rates[1]:>9.0f} {rates[2]:>19.0f}",
                  flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--blocks", type=int, default=1001)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--only", help="rows whose label contains this")
    parser.add_argument("--cpu", action="store_true", help="also print CPU us per request")
    parser.add_argument("--client", choices=("wrk", "python"),
                        default="wrk" if shutil.which("wrk") else "python")
    parser.add_argument("--replays-only", action="store_true",
                        help="only the in-process rows of blocks with many transactions")
    args = parser.parse_args()
    kept_replays()
    if args.replays_only:
        return
    with contextlib.ExitStack() as stack:
        workdir = args.workdir or Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="ethread-bench-tracing-")))
        workdir.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        chain = build(workdir / "chain", args.blocks)
        servers = {
            "anvil": stack.enter_context(running(lambda: start_anvil(chain))),
            "anvil-steps": stack.enter_context(running(lambda: start_anvil_steps(chain))),
            "ethread": stack.enter_context(running(lambda: start_ethread(
                "ethread", chain, workdir))),
            "plain": stack.enter_context(running(lambda: start_ethread(
                "plain", chain, workdir, code=PLAIN))),
            "no-tracing": stack.enter_context(running(lambda: start_ethread(
                "no-tracing", chain, workdir, code=NO_TRACING))),
        }
        _status, answer = servers["no-tracing"].post(_body("debug_traceTransaction",
                                                          f'["{chain.tx_hashes[0]}"]').encode())
        assert answer.get("error", {}).get("code") == -32601, answer  # (really without tracing)
        run = run_wrk if args.client == "wrk" else run_python
        load = os.getloadavg()
        print(f"\n{os.cpu_count()} CPUs shared by the servers and the load generator "
              f"({args.client}); load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
              f"{args.seconds} s x {args.rounds} round(s) per row; chain of {chain.head} blocks")
        names = list(servers)
        print(f"{'requests/s':<40} {'c':>3}" + "".join(f" {n:>11}" for n in names)
              + f" {'ethread/anvil':>14}")
        seed = random.randrange(1, 1 << 16)
        for row in rows():
            if args.only and args.only not in row.label:
                continue
            here = (["anvil", "ethread", "no-tracing"] if row.label.startswith("eth_call")
                    else ["anvil", "anvil-steps", "ethread", "plain"])
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
        load = os.getloadavg()
        print(f"load average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
              f"the whole run took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
