"""Flags a subcommand adds only when it is the one chosen: some derive from a heavy module
(``serve``'s from :mod:`ethread.server.config`), which ``ethread --help`` should not import.
:class:`Subcommands` runs what :func:`defer` was given before the chosen parser reads its arguments.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

_PENDING = "_ethread_deferred"

Fill = Callable[[argparse.ArgumentParser], None]
"""Adds flags (or groups of flags) to a subcommand's parser."""


def defer(parser: argparse.ArgumentParser, fill: Fill) -> None:
    """Run ``fill(parser)`` when ``parser``'s subcommand is chosen (in the order deferred)."""
    pending: list[Fill] = parser.__dict__.setdefault(_PENDING, [])
    pending.append(fill)


def complete(parser: argparse.ArgumentParser) -> None:
    """Add ``parser``'s deferred flags now (once)."""
    for fill in parser.__dict__.pop(_PENDING, []):
        fill(parser)


class Subcommands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """argparse's subcommand action, completing the chosen subcommand's parser first."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        if isinstance(values, Sequence) and values:
            chosen = self._name_parser_map.get(str(values[0]))
            if chosen is not None:
                complete(chosen)
        super().__call__(parser, namespace, values, option_string)
