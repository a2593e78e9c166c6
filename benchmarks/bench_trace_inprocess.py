"""Uncached traces in process, with whichever ethread this Python imports (run it with
``PYTHONPATH=<checkout>`` to compare checkouts on the same machine one after the other): each
transaction of the scenario chain (``benchlib/trace_scenario.py``) traced with callTracer and
with the opcode logger through ``trace_transaction`` with a dispatcher's ``ReplayStates`` whose
replays are never kept (as ``bench_tracing.py``'s uncached server), CPU ms per trace.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_trace_inprocess.py [--rounds 3]
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from benchlib import report
from benchlib.trace_scenario import scenario

import ethread
from ethread.methods.tracing import ReplayStates, TraceOptions, trace_transaction


class NothingKept(ReplayStates):
    """A dispatcher's replay states that keep no replay (what is keyed by content stays)."""

    def give(self, replay: Any) -> None:
        """Keep nothing."""


def main() -> None:
    parser = report.parser(__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    report.add_options(parser, __file__)
    args = parser.parse_args()
    with report.recorded(args):
        built = scenario()
        backend = built.chain.backend
        hashes = [bytes.fromhex(h[2:]) for h in built.tx_hashes]
        print(f"ethread from {ethread.__file__}; {len(hashes)} transactions, {args.rounds} rounds; "
              f"load average {report.load_average()}")
        for label, options in (("callTracer", TraceOptions(tracer="callTracer")),
                               ("structLogs", TraceOptions())):
            states = NothingKept()
            for tx_hash in hashes:  # (warm the classes and the content-keyed tables)
                trace_transaction(backend, tx_hash, options, states=states)
            times = []
            for _ in range(args.rounds):
                for tx_hash in hashes:
                    started = time.process_time()
                    trace_transaction(backend, tx_hash, options, states=states)
                    times.append(time.process_time() - started)
            print(f"{label:<12} CPU ms per trace: median {statistics.median(times) * 1e3:.2f}, "
                  f"mean {statistics.mean(times) * 1e3:.2f}", flush=True)


if __name__ == "__main__":
    main()
