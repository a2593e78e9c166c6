"""``ethread statetest FILE...``: state fixtures run as geth's ``evm statetest`` runs them."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(subparsers: Any) -> None:
    """Add ``statetest`` to the ``ethread`` command's subcommands."""
    parser = subparsers.add_parser(
        "statetest", help="run state test fixtures and print the results as JSON",
        description="Run execution-spec-tests state fixtures (each vector's transaction on its "
                    "pre-state, under its fork) and print a JSON array with one object per "
                    "vector: name, pass, stateRoot, fork, error. Exits 1 when a vector fails, "
                    "2 when a file cannot be read as a state fixture.")
    parser.add_argument("files", nargs="+", metavar="FILE", help="a state test fixture (JSON)")
    parser.set_defaults(run=run_statetest)


def run_statetest(args: argparse.Namespace) -> int:
    """Read every file first (a bad one is reported before anything runs), then run them."""
    from ..chain.statetest import FixtureError, read_fixture, run_test

    try:
        fixtures = [read_fixture(path) for path in args.files]
    except FixtureError as exc:
        print(f"ethread statetest: error: {exc.message}", file=sys.stderr)
        return 2
    results = [result for fixture in fixtures for name, test in fixture.items()
               for result in run_test(name, test)]
    json.dump([result.as_json() for result in results], sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0 if all(result.passed for result in results) else 1
