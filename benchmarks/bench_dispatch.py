"""The cost of the method table's path, in process: one request through
``Dispatcher.handle`` with the answer caches off (parse, the row, its arguments read, the source
chosen, the answer written), per method, on a small dev chain in memory; this checkout's table
beside another checkout's (``--other DIR``, e.g. the main branch before the table), each in a
process of its own, rounds interleaved. Mean CPU microseconds per request, the best of the
rounds. Prints a table; asserts nothing.

    .venv/bin/python benchmarks/bench_dispatch.py --other DIR [--calls 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from benchlib import REPO, report

PROBE = r"""
import json, sys, time
import ethread
from ethread.devchain import DevChain
try:  # (before the table the dispatcher was the codec's; asked first, so that an older
    # checkout never borrows the installed ethread's newer modules)
    from ethread.codec.jsonrpc import Dispatcher
except ImportError:
    from ethread.rpc.dispatcher import Dispatcher
from ethread.codec.response_cache import ResponseCache

calls = int(sys.argv[1])
chain = DevChain(ethread.MemoryBackend(), accounts=2)
a, b = chain.accounts
tx = "0x" + chain.send(a, b.address, value=1).hex()
chain.mine()
dispatcher = Dispatcher(chain.backend, cache=ResponseCache(max_entries=0))
address = "0x" + a.address.hex()
REQUESTS = {
    "eth_chainId": [],
    "eth_getBalance": [address, "latest"],
    "eth_getTransactionByHash": [tx],
    "eth_getBlockByNumber": ["latest", False],
    "eth_getTransactionReceipt": [tx],
    "eth_call": [{"to": address}, "latest"],
    "eth_getBalance (bad address)": ["0x12", "latest"],
}
out = {}
for label, params in REQUESTS.items():
    # (string ids: each body differs, so no whole answer is kept under its body)
    bodies = [json.dumps({"jsonrpc": "2.0", "id": f"r{i}", "method": label.split(" ")[0],
                          "params": params}).encode() for i in range(calls + 50)]
    for body in bodies[:50]:
        dispatcher.handle(body)
    started = time.process_time()
    for body in bodies[50:]:
        dispatcher.handle(body)
    out[label] = (time.process_time() - started) / calls * 1e6
out["tree"] = sys.modules[Dispatcher.__module__].__file__
print(json.dumps(out))
"""


def _measure(checkout: Path, calls: int) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", PROBE, str(calls)], capture_output=True,
                          text=True, check=True, timeout=600, cwd="/tmp",
                          env={"PYTHONPATH": str(checkout), "PATH": "/usr/bin:/bin"})
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    assert result.pop("tree").startswith(str(checkout)), "ran another checkout's ethread"
    return result


def main() -> None:
    parser = report.parser(__doc__)
    parser.add_argument("--other", type=Path, required=True, help="another ethread checkout")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    report.run(parser, __file__, run_benchmark)


def run_benchmark(args: argparse.Namespace) -> None:
    sides = {"this checkout": REPO, f"other ({args.other})": args.other}
    best: dict[str, dict[str, float]] = {}
    for _ in range(args.rounds):
        for label, checkout in sides.items():
            figures = _measure(checkout, args.calls)
            kept = best.setdefault(label, figures)
            for method, value in figures.items():
                kept[method] = min(kept[method], value)
    labels = list(sides)
    print(f"CPU µs per request through Dispatcher.handle, answer cache off, best of "
          f"{args.rounds} rounds of {args.calls}")
    print(f"{'request':32}" + "".join(f"{label:>28}" for label in labels))
    for method in best[labels[0]]:
        print(f"{method:32}" + "".join(f"{best[label][method]:28.1f}" for label in labels))


if __name__ == "__main__":
    main()
