"""A large opcode log's memory, in process: the resident set before a trace, at its answer,
and once the answer is dropped, with the freed heap given back to the system after a large
answer has been sent (``rpc/debug.encoded_answer``: a second later, on a timer) and
without (``--keep-heap``: the allocator keeps its pages, as before). Also the same trace past
a server's answer-byte limit: stopped with -32003 before the log is built.

    .venv/bin/python benchmarks/bench_trace_memory.py [--loops 40000] [--keep-heap]
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import time
from pathlib import Path

from benchlib import report

import ethread
from ethread.devchain import DevChain, contracts
from ethread.devchain.genesis import PRAGUE_FORKS
from ethread.rpc import debug
from ethread.rpc.context import Context
from ethread.rpc.dispatcher import Dispatcher


def rss_mb() -> float:
    """The resident set now (Linux /proc), in MB."""
    fields = Path("/proc/self/statm").read_text().split()
    return int(fields[1]) * resource.getpagesize() / 1e6


def main() -> None:
    parser = report.parser(__doc__)
    parser.add_argument("--loops", type=int, default=40_000)
    parser.add_argument("--keep-heap", action="store_true")
    report.add_options(parser, __file__)
    args = parser.parse_args()
    with report.recorded(args):
        run(args)


def run(args: argparse.Namespace) -> None:
    """One large trace's memory (see the module docstring)."""
    if args.keep_heap:
        debug._release_soon = lambda: None
    dev = DevChain(ethread.MemoryBackend(), forks=PRAGUE_FORKS, accounts=2)
    a = dev.accounts
    looper = dev.deploy_runtime(a[0], contracts.assemble(
        args.loops, "top:", 1, "SWAP1", "SUB", "DUP1", "@top", "JUMPI", "STOP"))
    dev.mine()
    tx_hash = "0x" + bytes(dev.send(a[1], looper, gas=30_000_000)).hex()
    dev.mine()
    short = dev.deploy_runtime(a[0], contracts.assemble(
        100, "top:", 1, "SWAP1", "SUB", "DUP1", "@top", "JUMPI", "STOP"))
    dev.mine()
    warm = "0x" + bytes(dev.send(a[1], short, gas=1_000_000)).hex()
    dev.mine()
    for tracer in ({}, {"tracer": "callTracer"}):  # (the classes and caches any trace makes)
        Dispatcher(dev.backend).handle(json.dumps({
            "jsonrpc": "2.0", "id": 1, "method": "debug_traceTransaction",
            "params": [warm, tracer]}).encode())
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "debug_traceTransaction",
                       "params": [tx_hash, {"timeout": "60s"}]}).encode()
    gc.collect()
    before = rss_mb()
    dispatcher = Dispatcher(dev.backend, Context(answer_bytes=1 << 40))
    started = time.perf_counter()
    answer = dispatcher.handle(body)
    took = time.perf_counter() - started
    assert answer is not None
    at_answer = rss_mb()
    size = len(answer)
    del answer
    del dispatcher
    time.sleep(debug.RELEASE_DELAY + 0.5)  # (as a server would have sent the answer)
    gc.collect()
    after = rss_mb()
    print(f"{args.loops * 7 + 2} steps, answer {size / 1e6:.1f} MB in {took:.1f} s"
          f"{' (heap kept)' if args.keep_heap else ''}")
    print(f"resident MB: before {before:.0f}, with the answer {at_answer:.0f}, "
          f"after it is dropped {after:.0f} (+{after - before:.0f})")
    limit = size // 2
    capped = Dispatcher(dev.backend, Context(answer_bytes=limit))
    started = time.perf_counter()
    refused = json.loads(capped.handle(body) or b"null")
    print(f"with an answer limit of half that ({limit / 1e6:.1f} MB): {refused['error']['code']} after "
          f"{time.perf_counter() - started:.2f} s: {refused['error']['message']}")


if __name__ == "__main__":
    main()
