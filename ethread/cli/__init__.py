"""The ``ethread`` command: each subcommand's module has a ``register`` function adding it.

Building the parser imports every module of :data:`SUBCOMMAND_MODULES`, so they import heavy
modules only when a command runs (:mod:`.deferred` for flags that need one to be declared).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from .deferred import Subcommands

# Modules providing subcommands; each has register(subparsers) and sets args.run.
SUBCOMMAND_MODULES = (
    "ethread.cli.serve",
    "ethread.cli.storage",
    "ethread.cli.statetest",
    "ethread.cli.keys",
    "ethread.cli.node",
)


def build_parser() -> argparse.ArgumentParser:
    """The ``ethread`` command's argument parser, with every subcommand."""
    parser = argparse.ArgumentParser(prog="ethread",
                                     description="Serve Ethereum chain data over JSON-RPC.")
    from ..version import __version__

    parser.register("action", "parsers", Subcommands)
    parser.add_argument("--version", action="version", version=f"ethread {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ethread`` command with ``argv`` (the process's by default); the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    result: int = args.run(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
