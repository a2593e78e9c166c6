"""In-process cost of eth_call on the peer benchmark's Ping contract
(``benchlib/peer_chain.py``): distinct calldata on every call, so no answer cache helps. Prints p50/p99 of the wall time
and the mean CPU time per call, in microseconds; asserts nothing.

    .venv/bin/python benchmarks/bench_call.py [--calls 3000] [--profile [call|request|revert]]
        [--store DIR] [--loop] [--loop-calls 200]

With ``--store``, the calls run on a store of the peer chain (``bench_vs_anvil``'s, e.g. its
``store-lmdb``; ``chain.json`` beside it, or ``--chain``, names the contract) from the zero
address, as the HTTP bench sends them; otherwise on a ten-block dev chain in memory.

Rows: the method itself (:func:`ethread.methods.call.call` with the dispatcher's state cache),
the whole request through the dispatcher (parse, dispatch, serialise: ``Dispatcher.handle``,
the pipeline every host drives) without answer caches, the same through a dispatcher as the
server makes it (its answer caches on: a distinct call misses them but pays for keeping its
answer), a reverting call (``Error("nope")``, error 3), and eth_estimateGas for comparison.
Every row's calls have distinct calldata. ``--profile`` profiles one of them instead (cProfile):
the method, the whole request or the reverting request.

Then (alone with ``--loop``) what eth_call's interpreter loop (``ethread.evm.lean_interpreter``)
buys: the same calls, interleaved in rounds in one process, on the classes eth_call uses
(lean account database and lean loop), on the lean database with py-evm's loop, and on
py-evm's own classes; mean CPU microseconds per call, the best of the rounds, on a dev chain
in memory: the Ping call, a storage-heavy one (64 SSTOREs and SLOADs in a loop), a
call-heavy one (32 CALLs into Ping) and an arithmetic loop (300 rounds of DUP/MUL/ADD/SWAP).
Measured 2026-11-27 on the shared 2-core machine (load average 8.6 7.6 5.4: CPU time, the
variants interleaved), best of 3 rounds of 200 calls:

    contract      lean loop   py-evm loop (lean db)   py-evm's classes
    Ping              53            102                    227
    storage         2268           3421                   3856
    calls           1915           4106                   5732
    arithmetic      1855           6260                   6499

A second run (load 10.5) gave 57/104/201, 2304/3335/3532, 2089/4362/5529, 1979/6523/6566,
a third (load 2.6) 48/86/166, 2176/3984/4689, 1984/4627/5115, 1842/7074/6887: the lean loop
takes 1.5 to 1.8 (storage) and up to 3.8 (arithmetic) times less than py-evm's, the Ping call
1.8 to 1.9.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchlib import REPO, report
from benchlib.peer_chain import PING, ping_chain

from ethread.backends.memory import MemoryBackend
from ethread.backends.open import open_store
from ethread.codec.response_cache import ResponseCache
from ethread.devchain import DevChain
from ethread.devchain.contracts import assemble
from ethread.evm.lean_interpreter import lean_vm_class
from ethread.methods.call import CallStates, call
from ethread.models import CallRequest
from ethread.rpc.dispatcher import Dispatcher

sys.path.insert(0, str(REPO))  # the tests' reference classes: py-evm's loop on the lean state
from tests.support.py_evm_loop import py_evm_loop_vm_class


def show(label: str, timing: tuple[list[float], float]) -> None:
    samples, cpu = timing
    ordered = sorted(samples)
    p50 = statistics.median(ordered) * 1e6
    p99 = ordered[max(0, int(len(ordered) * 0.99) - 1)] * 1e6
    print(f"  {label:<52} p50 {p50:8.1f} us   p99 {p99:8.1f} us   "
          f"CPU {cpu * 1e6:7.1f} us   n={len(samples)}", flush=True)


def timed(make: Callable[[int], Callable[[], object]], count: int) -> tuple[list[float], float]:
    """Wall time of each call, and the process's CPU time per call (less sensitive to other
    work on a shared machine: time spent waiting for a core is not counted)."""
    samples = []
    cpu = 0.0
    for n in range(count):
        run = make(n)
        started_cpu = time.process_time()
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
        cpu += time.process_time() - started_cpu
    return samples, cpu / count


def main() -> None:
    parser = report.parser(__doc__)
    parser.add_argument("--calls", type=int, default=3000, help="calls per row")
    parser.add_argument("--profile", nargs="?", const="call", choices=("call", "request", "revert"),
                        help="profile this row instead of timing the rows (cProfile)")
    parser.add_argument("--sort", default="cumulative", help="the profile's order")
    parser.add_argument("--loop", action="store_true",
                        help="only compare eth_call's interpreter loop with py-evm's")
    parser.add_argument("--loop-calls", type=int, default=200,
                        help="calls per contract, variant and round in the loop comparison")
    parser.add_argument("--store", type=Path, default=None,
                        help="a store of the peer chain to call on (opened, never written)")
    parser.add_argument("--chain", type=Path, default=None,
                        help="the peer chain's folder (default: chain/ beside the store)")
    report.run(parser, __file__, run_benchmark)


def run_benchmark(args: argparse.Namespace) -> None:
    if args.loop:
        compare_loops(args.loop_calls)
        return
    backend: Any
    if args.store is not None:
        chain_file = (args.chain or args.store.parent / "chain") / "chain.json"
        ping = bytes.fromhex(json.loads(chain_file.read_text())["ping"][2:])
        backend = open_store(args.store)
        caller: bytes | None = None
    else:
        backend = MemoryBackend()
        chain, ping = ping_chain(backend, 10)
        caller = chain.accounts[1].address
    rng = random.Random(1)
    states = CallStates()
    head = backend.pointer("latest")
    assert head is not None

    def distinct(n: int) -> CallRequest:
        data = rng.getrandbits(32).to_bytes(4, "big") + n.to_bytes(28, "big")
        return CallRequest(sender=caller, to=ping, data=b"\x01" + data[1:])

    answer = call(backend, distinct(0), "latest", states)
    assert int.from_bytes(answer, "big") == head, answer
    load = os.getloadavg()
    where = f"store {args.store}" if args.store is not None else "memory"
    print(f"eth_call on Ping ({where}), distinct calldata each time (load average {load[0]:.2f} "
          f"{load[1]:.2f} {load[2]:.2f})")
    dispatcher = Dispatcher(backend, cache=ResponseCache(max_entries=0))

    def body(n: int, first: str = "01") -> bytes:
        data = f"0x{first}{rng.getrandbits(32):08x}{n:054x}"
        return json.dumps({"jsonrpc": "2.0", "id": n, "method": "eth_call", "params": [
            {"to": "0x" + ping.hex(), "data": data}, "latest"]}).encode()

    assert "result" in json.loads(dispatcher.handle(body(1)))  # type: ignore[arg-type]
    reverted = json.loads(dispatcher.handle(body(1, "ff")))  # type: ignore[arg-type]
    assert reverted["error"]["message"] == "execution reverted: nope", reverted
    if args.profile:
        import cProfile
        import pstats

        first = "ff" if args.profile == "revert" else "01"
        requests = [distinct(n) for n in range(args.calls)]
        bodies = [body(n, first) for n in range(args.calls)]
        profile = cProfile.Profile()
        profile.enable()
        if args.profile == "call":
            for request_ in requests:
                call(backend, request_, "latest", states)
        else:
            for raw in bodies:
                dispatcher.handle(raw)
        profile.disable()
        pstats.Stats(profile).sort_stats(args.sort).print_stats(45)
        return

    def method(n: int) -> Callable[[], object]:
        request = distinct(n)
        return lambda: call(backend, request, "latest", states)

    show("call() on the state cache", timed(method, args.calls))

    def request(n: int, first: str = "01", through: Dispatcher = dispatcher) -> Callable[[], object]:
        raw = body(n, first)
        return lambda: through.handle(raw)

    show("whole request through the dispatcher", timed(request, args.calls))
    served = Dispatcher(backend)  # the server's: answer caches on
    assert "result" in json.loads(served.handle(body(1)))  # type: ignore[arg-type]
    show("whole request, the server's dispatcher (caches on)",
         timed(lambda n: request(n, through=served), args.calls))
    show("reverting call (Error(\"nope\")) through the dispatcher",
         timed(lambda n: request(n, "ff"), args.calls))

    def estimate(n: int) -> Callable[[], object]:
        raw = json.dumps({"jsonrpc": "2.0", "id": n, "method": "eth_estimateGas", "params": [
            {"to": "0x" + ping.hex(), "data": f"0x01{n:062x}"}]}).encode()
        return lambda: dispatcher.handle(raw)

    show("eth_estimateGas through the dispatcher", timed(estimate, max(1, args.calls // 10)))
    compare_loops(args.loop_calls)


STORAGE = assemble(0, "loop:", "DUP1", 0, "CALLDATALOAD", "ADD", "DUP2", "SSTORE", "DUP1", "SLOAD",
                   "POP", 1, "ADD", "DUP1", 64, "GT", "@loop", "JUMPI", 0, 0, "RETURN")
"""64 rounds of SSTORE(i, i + calldata) and SLOAD(i)."""
ARITHMETIC = assemble(0, 0, "CALLDATALOAD", "loop:", "DUP1", "DUP1", "MUL", 7, "ADD", "SWAP1",
                      "POP", "SWAP1", 1, "ADD", "SWAP1", "DUP2", 300, "GT", "@loop", "JUMPI", 0,
                      "MSTORE", 32, 0, "RETURN")
"""300 rounds of x = x * x + 7 on the calldata's first word."""


def _calls_into(target: bytes) -> bytes:
    """32 CALLs into ``target`` with one byte of input (Ping answers the block number)."""
    return assemble(0, "loop:", 1, 0, "MSTORE8", 32, 0, 1, 0, 0, target, "GAS", "CALL", "POP",
                    1, "ADD", "DUP1", 32, "GT", "@loop", "JUMPI", 32, 0, "RETURN")


def compare_loops(calls: int, rounds: int = 3) -> None:
    """eth_call on the lean loop, on py-evm's loop over the lean account database, and on
    py-evm's own classes: the same distinct calls, interleaved, each variant on a state cache
    of its own; prints the best round's mean CPU time per call of each."""
    backend = MemoryBackend()
    chain = DevChain(backend)
    owner = chain.accounts[0]
    ping = chain.deploy_runtime(owner, PING)
    contracts = {"Ping": (ping, b"\x01"), "storage": (chain.deploy_runtime(owner, STORAGE), b""),
                 "calls": (chain.deploy_runtime(owner, _calls_into(ping)), b""),
                 "arithmetic": (chain.deploy_runtime(owner, ARITHMETIC), b"")}
    chain.mine()
    variants: dict[str, Callable[[Any], Any]] = {
        "lean loop": lean_vm_class, "py-evm loop (lean db)": py_evm_loop_vm_class,
        "py-evm's classes": lambda vm_class: vm_class}
    load = os.getloadavg()
    print(f"eth_call's interpreter loop against py-evm's, CPU us per call, {calls} distinct calls "
          f"per round (load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})", flush=True)
    rng = random.Random(2)
    figures: dict[tuple[str, str], list[float]] = {}
    for _ in range(rounds):
        for name, (address, prefix) in contracts.items():
            for variant, vm_classes in variants.items():
                states = CallStates(vm_classes=vm_classes)
                requests = [CallRequest(to=address, data=prefix + rng.randbytes(32 - len(prefix)))
                            for _ in range(calls)]
                call(backend, requests[0], "latest", states)  # (the state built, then kept)
                started = time.process_time()
                for request in requests:
                    call(backend, request, "latest", states)
                figures.setdefault((name, variant), []).append(
                    (time.process_time() - started) / calls * 1e6)
    print(f"  {'contract':<12}" + "".join(f"{variant:>26}" for variant in variants))
    for name in contracts:
        print(f"  {name:<12}" + "".join(f"{min(figures[name, variant]):>26.0f}"
                                        for variant in variants), flush=True)


if __name__ == "__main__":
    main()
