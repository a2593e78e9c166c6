"""The token suite (tests/clients/test_token_web3.py, 50 tests) on three test chains, side by side:
ethread (``EthreadProvider(DevChain(...))`` in process), eth-tester (web3.py's
``EthereumTesterProvider`` on py-evm, in process) and anvil (a subprocess on loopback, through
web3.py's ``HTTPProvider``). Each run is the suite file itself with its one provider line
replaced, run by pytest in a fresh interpreter; per-test wall time (setup, call and teardown,
from pytest's JUnit report) and the whole run are printed, and the CPU time the tests took
(the test process's, plus anvil's own process's for anvil; see
``benchlib/testchain_cputime.py``), which load from other jobs on a shared machine disturbs far
less than wall time. The load average
is printed before and after. Asserts nothing.

    .venv/bin/python benchmarks/bench_testchain.py [--only ethread,eth-tester,anvil] [--rounds N]

Needs ``pip install -e '.[bench]'`` (eth-tester with py-evm) and ``npm install`` in tests/js
(anvil, pinned there).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from benchlib import report, token_suite
from benchlib.anvil import Anvil
from benchlib.token_suite import PROVIDER_LINE

LINES = {
    "ethread": PROVIDER_LINE,
    "eth-tester": "    from benchlib.testchain_providers import RevertingTesterProvider\n"
                  "    return Web3(RevertingTesterProvider())  # the provider line",
    "anvil": "    import os\n"
             "    return Web3(Web3.HTTPProvider(os.environ['BENCH_ANVIL_URL']))  # the provider line",
}


Outcome = tuple[dict[str, float], float, str, dict[str, float]]
"""Wall time per test, the whole run's wall time, pytest's summary, CPU time per test."""


def run(chain: str, folder: Path, env: dict[str, str]) -> Outcome:
    suite = token_suite.suite_for(f"test_token_{chain.replace('-', '_')}", LINES[chain], folder)
    junit = folder / f"{suite.stem}.xml"
    cpu_report = folder / f"{suite.stem}.cpu.json"
    env = {**env, "BENCH_CPU_REPORT": str(cpu_report)}
    if chain != "anvil":
        env.pop("BENCH_CHAIN_PID", None)
    wall, summary = token_suite.run_suite(suite, folder, env, "-p", "benchlib.testchain_cputime",
                                          f"--junitxml={junit}")
    cpu: dict[str, float] = json.loads(cpu_report.read_text()) if cpu_report.exists() else {}
    times: dict[str, float] = {}
    failed: list[str] = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        times[case.get("name", "?")] = float(case.get("time", "0"))
        for problem in (*case.iter("failure"), *case.iter("error")):
            failed.append(f"{case.get('name')}: {problem.get('message', '')[:160]}")
    summary += "".join(f"\n    {line}" for line in failed)
    return times, wall, summary, cpu


def load() -> str:
    return f"load average {report.load_average()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="ethread,eth-tester,anvil")
    parser.add_argument("--rounds", type=int, default=1, help="runs per chain; the best is shown")
    report.run(parser, __file__, run_benchmark)


def run_benchmark(args: argparse.Namespace) -> None:
    chains = [c for c in args.only.split(",") if c]
    env = token_suite.environment()
    results: dict[str, Outcome] = {}
    loads = [load()]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        token_suite.prepare(folder)
        anvil = None
        if "anvil" in chains:
            anvil = Anvil("--silent")
            env["BENCH_ANVIL_URL"] = anvil.url
            env["BENCH_CHAIN_PID"] = str(anvil.process.pid)
        try:
            for chain in chains:
                best: Outcome | None = None
                for _ in range(args.rounds):
                    outcome = run(chain, folder, env)
                    if best is None or outcome[1] < best[1]:
                        best = outcome
                assert best is not None
                results[chain] = best
        finally:
            if anvil is not None:
                anvil.stop()
    loads.append(load())
    names = list(next(iter(results.values()))[0])
    width = max(len(n) for n in names)
    print(f"\nToken suite, wall time per test in ms (setup + call + teardown), {len(names)} tests\n")
    print(f"  {'test':<{width}}  " + "  ".join(f"{c:>10}" for c in chains))
    for name in names:
        row = "  ".join(f"{results[c][0].get(name, float('nan')) * 1e3:10.1f}" for c in chains)
        print(f"  {name:<{width}}  {row}")
    print()
    for label, figure in (
        ("sum of tests (s)", lambda c: sum(results[c][0].values())),
        ("median test (ms)", lambda c: statistics.median(results[c][0].values()) * 1e3),
        ("whole run, pytest start to exit (s)", lambda c: results[c][1]),
        ("CPU time of the tests (s)", lambda c: sum(results[c][3].values())),
        ("median test, CPU time (ms)", lambda c: statistics.median(results[c][3].values() or [0]) * 1e3),
    ):
        print(f"  {label:<{width}}  " + "  ".join(f"{figure(c):10.2f}" for c in chains))
    print()
    for chain in chains:
        print(f"  {chain}: {results[chain][2]}")
    print(f"\n  {loads[0]} before, {loads[1]} after")


if __name__ == "__main__":
    main()
