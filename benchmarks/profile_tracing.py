"""Where an uncached trace's time goes, in process, on the tracing benchmark's scenario chain
(``benchlib/trace_scenario.py``): each scenario transaction traced once through the
dispatcher (no answer kept, no replay kept), split into the steps a trace takes:

- **open**: the block's replay set up on its parent's state (the VM, the block's system calls);
- **earlier**: the block's transactions before the traced one, applied untraced;
- **traced**: the traced transaction run under the hooks, its tracer collecting;
- **result**: the tracer's typed answer built;
- **encode**: the answer written as JSON;

beside the same transaction run as eth_call (the same sender, callee, data and value on the
state before the block: a floor for the frames-only tracers, which replay and run it once).

    .venv/bin/python benchmarks/profile_tracing.py [--rounds 5] [--cprofile TRACER]

``--cprofile callTracer`` (or ``structLogs``, ``prestateTracer``, ...) also prints cProfile's
top functions for that tracer over the whole run.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import time
from collections.abc import Callable
from typing import Any

import orjson
from benchlib import report
from benchlib.trace_scenario import scenario

from ethread.methods.tracing import TraceOptions, replay
from ethread.methods.tracing.tracers import TraceContext, make_tracer
from ethread.rpc import debug

TRACERS: dict[str, dict[str, Any]] = {
    "callTracer": {"tracer": "callTracer"},
    "flatCallTracer": {"tracer": "flatCallTracer"},
    "4byteTracer": {"tracer": "4byteTracer"},
    "prestateTracer": {"tracer": "prestateTracer"},
    "structLogs": {},
}


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """The CPU seconds ``fn()`` took (not wall time: the machine is shared) and its value."""
    started = time.process_time()
    value = fn()
    return time.process_time() - started, value


def split(backend: Any, tx_hash: bytes, config: dict[str, Any]) -> dict[str, float]:
    """One uncached trace of ``tx_hash``, each step timed."""
    options = debug.parse_trace_config(config)
    location = backend.transaction_location(tx_hash)
    block = backend.block_by_hash(location[0])
    times: dict[str, float] = {}
    times["open"], run = _timed(lambda: replay._replay(backend, block, False, SHARED))
    times["earlier"], _ = _timed(lambda: run.seek(location[1]))
    tracer = make_tracer(options.tracer, options.tracer_config, options.logger,
                         TraceContext(block.hash, block.header.number, location[1], tx_hash))
    times["traced"], _ = _timed(lambda: _run_traced(run, options, tx_hash, tracer))
    times["result"], result = _timed(tracer.result)
    times["encode"], _ = _timed(lambda: orjson.dumps(debug.trace_json(result)))
    return times


def _run_traced(run: Any, options: TraceOptions, tx_hash: bytes, tracer: Any) -> None:
    # _trace_next without the result: the run alone
    result = tracer.result
    tracer.result = lambda: None
    try:
        replay._trace_next(run, options, tx_hash, tracer)
    finally:
        tracer.result = result


STATES: Any = None
SHARED: Any = None
"""What a dispatcher's replays share (``ReplayStates``: its tables, decoded transactions; no
replay is kept here); None: ``--bare``."""


def call_floor(backend: Any, tx_hash: bytes) -> float:
    """The transaction as eth_call on its parent block's state (the lean loop, no tracer)."""
    from ethread.methods.call import call
    from ethread.models import BlockHashRef, CallRequest

    location = backend.transaction_location(tx_hash)
    block = backend.block_by_hash(location[0])
    itx = block.transactions[location[1]]
    tx = itx.transaction
    request = CallRequest(sender=itx.sender, to=tx.to, data=tx.data, value=tx.value, gas=tx.gas)
    parent = BlockHashRef(hash=block.header.parent_hash)
    elapsed, _ = _timed(lambda: _quiet(lambda: call(backend, request, parent, STATES)))
    return elapsed


def _quiet(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as exc:  # (a reverting call is timed the same)
        return exc


def main() -> None:
    parser = report.parser(__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cprofile", choices=sorted(TRACERS))
    parser.add_argument("--bare", action="store_true",
                        help="replays without the dispatcher's tables (each builds its own)")
    report.add_options(parser, __file__)
    args = parser.parse_args()
    with report.recorded(args):
        run(args)


def run(args: argparse.Namespace) -> None:
    """The profile's rows (see the module docstring)."""
    global STATES, SHARED
    from ethread.methods.message import CallStates
    from ethread.methods.tracing import ReplayStates

    STATES = CallStates()
    SHARED = None if args.bare else ReplayStates()
    built = scenario()
    backend = built.chain.backend
    hashes = [bytes.fromhex(h[2:]) for h in built.tx_hashes]
    for tx_hash in hashes:  # (warm py-evm's and ethread's per-class caches)
        for config in TRACERS.values():
            split(backend, tx_hash, config)
        call_floor(backend, tx_hash)
    print(f"{len(hashes)} scenario transactions, each traced once per round, {args.rounds} rounds; "
          "median CPU ms per trace")
    steps = ("open", "earlier", "traced", "result", "encode")
    print(f"{'tracer':<16}" + "".join(f"{s:>9}" for s in steps) + f"{'total':>9}{'eth_call':>10}")
    floors = [statistics.median(call_floor(backend, h) for _ in range(args.rounds)) for h in hashes]
    for name, config in TRACERS.items():
        per: dict[str, list[float]] = {s: [] for s in steps}
        totals = []
        for _ in range(args.rounds):
            for tx_hash in hashes:
                times = split(backend, tx_hash, config)
                for s in steps:
                    per[s].append(times[s])
                totals.append(sum(times.values()))
        print(f"{name:<16}" + "".join(f"{statistics.median(per[s]) * 1e3:>9.3f}" for s in steps)
              + f"{statistics.median(totals) * 1e3:>9.3f}{statistics.median(floors) * 1e3:>10.3f}",
              flush=True)
    if args.cprofile:
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(args.rounds):
            for tx_hash in hashes:
                split(backend, tx_hash, TRACERS[args.cprofile])
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
