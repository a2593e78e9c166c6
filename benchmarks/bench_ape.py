"""One Ape project's ``ape test`` on ethread (in process and as a node), on Ape's eth-tester
provider and on ape-foundry's anvil, in one run, with and without ``--gas``.

    python benchmarks/bench_ape.py [--ape-venv /tmp/ape-venv] [--rounds 1]

The project is ``plugins/ape-ethread/tests/project`` (a token and a time lock: deploys,
transfers, events and their queries, reverts with reasons, custom errors and panics,
isolation, mining, time travel). The same tests run on every provider: those marked
``chain_edits`` or ``traces`` are deselected, as Ape's eth-tester provider offers neither.
``--ape-venv`` is a virtualenv with eth-ape 0.8, ape-foundry and ape-ethread installed (what
``.ci/ape`` makes); anvil is the one ``npm install`` in tests/js installs (1.7.1).

Each ``ape test`` is a fresh process, as a user runs it: its wall time includes Ape's own
start (loading its plugins and the project), the same for every provider. The CPU time is
the process's and its children's (anvil, ``ethread node``), user + system: on a shared,
loaded machine the wall time varies with the load, the CPU time less. Before timing, one
untimed run writes the bytecode caches (Python's, and pytest's of the modules it rewrites),
as an installed package has them; ``PYTHONDONTWRITEBYTECODE`` is unset for the runs. Rounds
rotate the providers' order so that a slower minute of the machine does not fall on one.

With ``--gas``, each provider's gas table is read back: its rows (contract, method, times
called) are compared with ape-foundry's.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchlib import REPO, report
from benchlib.anvil import anvil_binary

PROJECT = REPO / "plugins" / "ape-ethread" / "tests" / "project"
COMMON = "not chain_edits and not traces"
PROVIDERS: tuple[tuple[str, str, dict[str, str]], ...] = (
    ("ethread, in process", "ethereum:local:ethread", {"APE_ETHREAD_MODE": "process"}),
    ("ethread node", "ethereum:local:ethread", {"APE_ETHREAD_MODE": "node"}),
    ("eth-tester (test)", "ethereum:local:test", {}),
    ("anvil (foundry)", "ethereum:local:foundry", {}),
)
SUMMARY = re.compile(r"^=* ?(\d+ (?:passed|failed)[^=\n]*?) in ([\d.]+)s", re.MULTILINE)
TABLE = re.compile(r"^\s*(\S+) Gas\s*$")
ROW = re.compile(r"^\s*(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$")


@dataclass
class Run:
    """One ``ape test``: its times, pytest's closing line and (with --gas) its gas rows."""

    wall: float
    cpu: float
    session: float
    outcome: str
    gas: dict[tuple[str, str], tuple[int, ...]] = field(default_factory=dict)


def ape_test(venv: Path, network: str, extra: dict[str, str], *, gas: bool) -> Run:
    """``ape test`` on the project, timed; raises with its output if it does not finish."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{Path(anvil_binary()).parent}{os.pathsep}{env['PATH']}"
    env["COLUMNS"] = "160"
    command = [str(venv / "bin" / "ape"), "test", "--network", network, "-m", COMMON,
               "-p", "no:cacheprovider", *(["--gas"] if gas else [])]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=PROJECT, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    found = SUMMARY.findall(done.stdout)
    if not found:
        raise SystemExit(f"ape test on {network} printed no summary:\n{done.stdout[-3000:]}"
                         f"\n{done.stderr[-3000:]}")
    outcome, seconds = found[-1]
    return Run(wall, cpu, float(seconds), outcome, gas_rows(done.stdout) if gas else {})


def gas_rows(output: str) -> dict[tuple[str, str], tuple[int, ...]]:
    """The gas tables of ``ape test --gas``: (contract, method) -> (times called, min, max,
    mean, median)."""
    rows: dict[tuple[str, str], tuple[int, ...]] = {}
    contract = None
    for line in output.splitlines():
        if table := TABLE.match(line):
            contract = table.group(1)
        elif contract is not None and (row := ROW.match(line)):
            rows[(contract, row.group(1))] = tuple(int(x) for x in row.groups()[1:])
    return rows


def bench(args: argparse.Namespace) -> None:
    venv = Path(args.ape_venv)
    versions = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "from importlib.metadata import version as v; print(', '.join(f'{p} {v(p)}' for p in "
         "('eth-ape', 'ape-foundry', 'ape-ethread', 'ethread', 'eth-tester', 'py-evm', "
         "'web3', 'evm-trace')))"], capture_output=True, text=True, check=True).stdout.strip()
    anvil = subprocess.run([anvil_binary(), "--version"], capture_output=True, text=True,
                           check=True).stdout.splitlines()[0]
    print(f"{versions}; {anvil}")
    print(f"project: {PROJECT.relative_to(REPO)}, tests: -m '{COMMON}'")
    warm = ape_test(venv, PROVIDERS[0][1], PROVIDERS[0][2], gas=False)
    print(f"warm-up (untimed): {warm.outcome}")
    results: dict[tuple[str, bool], list[Run]] = {}
    for round_index in range(args.rounds):
        shift = round_index % len(PROVIDERS)
        order = PROVIDERS[shift:] + PROVIDERS[:shift]
        for gas in (False, True):
            for name, network, extra in order:
                run = ape_test(venv, network, extra, gas=gas)
                results.setdefault((name, gas), []).append(run)
                print(f"  round {round_index + 1} {'--gas ' if gas else '      '}{name:22} "
                      f"wall {run.wall:6.1f} s  cpu {run.cpu:6.1f} s  pytest {run.session:6.1f} s"
                      f"  ({run.outcome})", flush=True)
    print()
    for gas in (False, True):
        print(f"ape test {'--gas' if gas else '(no --gas)'}: median of {args.rounds} round(s)")
        print(f"  {'provider':22} {'wall s':>8} {'cpu s':>8} {'pytest s':>9}  outcome")
        medians = {}
        for name, _network, _extra in PROVIDERS:
            runs = results[(name, gas)]
            wall = statistics.median(r.wall for r in runs)
            cpu = statistics.median(r.cpu for r in runs)
            session = statistics.median(r.session for r in runs)
            medians[name] = (wall, cpu, session)
            print(f"  {name:22} {wall:8.1f} {cpu:8.1f} {session:9.1f}  {runs[-1].outcome}")
        ours = medians[PROVIDERS[0][0]]
        others = [medians[p[0]] for p in PROVIDERS[2:]]
        for index, what in enumerate(("wall", "cpu", "pytest")):
            best = min(o[index] for o in others)
            print(f"  {what}: the fastest of eth-tester and anvil / ethread in process = "
                  f"{best / ours[index]:.2f}x")
        print()
    foundry = results[(PROVIDERS[3][0], True)][-1].gas
    print(f"gas report rows (contract, method) vs anvil (foundry)'s {len(foundry)}:")
    for name, _network, _extra in PROVIDERS:
        rows = results[(name, True)][-1].gas
        missing = sorted(set(foundry) - set(rows))
        extra_rows = sorted(set(rows) - set(foundry))
        calls = sum(1 for key in set(rows) & set(foundry) if rows[key][0] == foundry[key][0])
        print(f"  {name:22} {len(rows):3} rows; missing {missing or 'none'}; extra "
              f"{extra_rows or 'none'}; same times-called in {calls}")
    print("  medians per row (ethread in process | anvil):")
    ethread_rows = results[(PROVIDERS[0][0], True)][-1].gas
    for key in sorted(foundry):
        mine = ethread_rows.get(key)
        print(f"    {key[0]}.{key[1]:14} {mine[4] if mine else '-':>8} | {foundry[key][4]:>8}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ape-venv", default=os.environ.get("APE_VENV", "/tmp/ape-venv"),
                        help="virtualenv with eth-ape, ape-foundry and ape-ethread")
    parser.add_argument("--rounds", type=int, default=1)
    report.run(parser, __file__, bench)


if __name__ == "__main__":
    main()
