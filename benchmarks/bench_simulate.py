"""In-process cost of eth_simulateV1 as ``bench_vs_anvil.py``'s row asks it: one simulated
block of three calls to the peer chain's Ping contract (``benchlib/peer_chain.py``), each with
new calldata, on top of "latest", so no answer cache helps. CPU microseconds per simulation,
the whole request through the dispatcher (parse, :func:`ethread.methods.simulate.simulate`,
serialise), on the fast path (eth_call's lean classes, overlay tries) and on the plain one
(py-evm's own classes and py-trie: ``tests/support/plain_simulate.py``); the paths take turns in
each round and the best round of each is printed. Asserts nothing but that every call
succeeds.

    .venv/bin/python benchmarks/bench_simulate.py [--blocks 30] [--requests 300] [--rounds 3]
        [--profile] [--plain]

``--profile`` profiles the fast path (``--plain``: the plain one) with cProfile instead.
The anvil comparison over HTTP (a quiet machine): ``benchmarks/bench_vs_anvil.py --blocks 300
--seconds 5 --rounds 3 --only simulateV1 --targets anvil,memory,memory-plain --workers 1 --cpu``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import sys
import time

from benchlib import REPO, report
from benchlib.peer_chain import ping_chain

from ethread.backends.memory import MemoryBackend
from ethread.codec.response_cache import ResponseCache
from ethread.rpc.dispatcher import Dispatcher

sys.path.insert(0, str(REPO))  # the tests' oracle: simulate's plain path
from tests.support.plain_simulate import plain_simulation


def on_path(fast: bool) -> contextlib.AbstractContextManager[None]:
    """The simulations inside the block on the package's path, or on the plain one."""
    return contextlib.nullcontext() if fast else plain_simulation()


def body(ping: bytes, rng: random.Random, n: int) -> bytes:
    """The benchmark row's request: three calls to Ping with calldata never sent before."""
    calls = ",".join(f'{{"to":"0x{ping.hex()}","data":"0x{"0" * 40}{rng.getrandbits(32):08x}'
                     f'{n:08x}{i:08x}"}}' for i in range(1, 4))
    return (f'{{"jsonrpc":"2.0","id":{n},"method":"eth_simulateV1","params":[{{"blockStateCalls":'
            f'[{{"calls":[{calls}]}}]}},"latest"]}}').encode()


def main() -> None:
    parser = report.parser(__doc__)
    parser.add_argument("--blocks", type=int, default=30, help="head of the Ping chain")
    parser.add_argument("--requests", type=int, default=300,
                        help="simulations per path and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="profile instead (cProfile)")
    parser.add_argument("--plain", action="store_true", help="profile the plain path")
    report.run(parser, __file__, run_benchmark)


def run_benchmark(args: argparse.Namespace) -> None:
    backend = MemoryBackend()
    _, ping = ping_chain(backend, args.blocks)
    dispatcher = Dispatcher(backend, cache=ResponseCache(max_entries=0))
    rng = random.Random(1)
    serial = 0

    def bodies(count: int) -> list[bytes]:
        nonlocal serial
        serial += count
        return [body(ping, rng, serial - i) for i in range(count)]

    def check(fast: bool) -> None:
        with on_path(fast):
            answer = json.loads(dispatcher.handle(bodies(1)[0]))  # type: ignore[arg-type]
        calls = answer["result"][0]["calls"]
        assert [call["status"] for call in calls] == ["0x1"] * 3, answer

    for fast in (True, False):  # (each path's classes built and its tables warm)
        check(fast)
        with on_path(fast):
            for raw in bodies(20):
                dispatcher.handle(raw)
    if args.profile:
        import cProfile
        import pstats

        todo = bodies(args.requests)
        profile = cProfile.Profile()
        with on_path(not args.plain):
            profile.enable()
            for raw in todo:
                dispatcher.handle(raw)
            profile.disable()
        pstats.Stats(profile).sort_stats("cumulative").print_stats(60)
        return
    print(f"eth_simulateV1, 1 block of 3 distinct Ping calls on a {args.blocks}-block chain in "
          f"memory, through the dispatcher; CPU us per simulation (time.process_time), best of "
          f"{args.rounds} rounds of {args.requests}; load average {report.load_average()}")
    best: dict[bool, float] = {}
    for _ in range(args.rounds):
        for fast in (True, False):
            todo = bodies(args.requests if fast else max(1, args.requests // 4))
            with on_path(fast):
                started = time.process_time()
                for raw in todo:
                    dispatcher.handle(raw)
            spent = (time.process_time() - started) / len(todo) * 1e6
            best[fast] = min(best.get(fast, spent), spent)
    print(f"  {'fast path (lean classes, overlay tries)':<48} {best[True]:8.0f} us")
    print(f"  {'plain path (py-evm classes, py-trie)':<48} {best[False]:8.0f} us")
    print(f"  plain / fast {best[False] / best[True]:.2f}; load average at the end "
          f"{report.load_average()}")


if __name__ == "__main__":
    main()
