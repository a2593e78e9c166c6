"""What asking ``ethread.forks.validity`` costs where every transaction is checked: block
import (each transaction validated by the fork table's VM classes), eth_call and
eth_estimateGas (each message's pre-checks), side by side for two checkouts of ethread
(this one and a baseline, e.g. main before the change). Prints a table; asserts nothing.

    .venv/bin/python benchmarks/bench_validity.py --baseline /path/to/other/checkout
        [--blocks 200] [--calls 2000]

The chain is the peer benchmark's (``benchlib/peer_chain.py``: one call to Ping a block),
built once by this checkout; each checkout then runs in a process of its own
(``PYTHONPATH`` set to it) on the same files.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from benchlib import report  # noqa: E402  (benchlib: beside this script)

CHILD = r"""
import json, statistics, sys, time
from pathlib import Path
import ethread
from ethread.models import CallRequest

folder, repeats, calls = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
saved = json.loads((folder / "peer.json").read_text())
imports = []
for _ in range(repeats):
    backend = ethread.MemoryBackend()
    start = time.perf_counter()
    count = ethread.import_chain(backend, folder / "genesis.json", folder / "chain.rlp",
                                 verify_seals=False)
    imports.append((time.perf_counter() - start) / count)
request = CallRequest(sender=bytes.fromhex(saved["caller"][2:]), to=bytes.fromhex(saved["ping"][2:]),
                      data=b"\x01")
states = ethread.methods.message.CallStates()
def timed(run, n):
    laps = []
    for _ in range(n):
        start = time.perf_counter()
        run()
        laps.append(time.perf_counter() - start)
    return statistics.median(laps)
call = timed(lambda: ethread.methods.call(backend, request, "latest", states=states), calls)
estimate = timed(lambda: ethread.methods.estimate_gas(backend, request, "latest", states=states),
                 max(calls // 10, 10))
print(json.dumps({"tree": ethread.__file__, "import_ms_per_block": 1000 * min(imports),
                  "call_us": 1e6 * call, "estimate_us": 1e6 * estimate}))
"""


def measure(tree: Path, folder: Path, repeats: int, calls: int) -> dict[str, Any]:
    """One checkout's figures, in a process of its own."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", CHILD, str(folder), str(repeats), str(calls)],
                          env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True,
                          check=True)
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", type=Path, required=True, help="another ethread checkout")
    parser.add_argument("--blocks", type=int, default=200)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2,
                        help="runs of each checkout, alternating; the best figures are shown")
    report.run(parser, __file__, run_benchmark)


def run_benchmark(args: argparse.Namespace) -> None:
    """Import, eth_call and eth_estimateGas timed in each checkout, alternating."""
    from benchlib.peer_chain import build

    from ethread.devchain.signing import DevAccount

    with tempfile.TemporaryDirectory() as tmp:
        chain = build(Path(tmp), args.blocks, log=False)
        (Path(tmp) / "peer.json").write_text(json.dumps(
            {"caller": "0x" + DevAccount(1).address.hex(), "ping": chain.ping}))
        trees = (("baseline", args.baseline), ("this", ROOT))
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in trees}
        for _ in range(args.rounds):  # alternating, so that a busy moment hits both
            for name, tree in trees:
                runs[name].append(measure(tree, Path(tmp), args.repeats, args.calls))
        rows = [(name, {key: (min(r[key] for r in found) if key != "tree" else found[0][key])
                        for key in found[0]}) for name, found in runs.items()]
    print(f"{args.blocks} blocks of one call each; medians of {args.calls} calls, "
          f"{max(args.calls // 10, 10)} estimates; best of {args.rounds} alternating runs")
    print(f"{'checkout':<10} {'import ms/block':>16} {'eth_call µs':>12} {'estimate µs':>12}  tree")
    for name, figures in rows:
        print(f"{name:<10} {figures['import_ms_per_block']:>16.2f} {figures['call_us']:>12.1f} "
              f"{figures['estimate_us']:>12.1f}  {Path(str(figures['tree'])).parent.parent}")


if __name__ == "__main__":
    main()
