"""The ``ethread`` command itself (``ethread.cli``): ``--version``, and every flag of every
subcommand described. (Each subcommand's rough edges: test_serve, test_storage, test_keys.)"""

from __future__ import annotations

import argparse
from importlib.metadata import version

import pytest

import ethread
from ethread.cli import build_parser, main


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"ethread {version('ethread')}"
    assert ethread.__version__ == version("ethread")


def test_every_flag_of_every_command_is_described() -> None:
    commands = next(a for a in build_parser()._actions
                    if isinstance(a, argparse._SubParsersAction))
    assert set(commands.choices) >= {"serve", "import", "export", "verify"}
    for name, parser in commands.choices.items():
        undescribed = [a.option_strings[0] for a in parser._actions
                       if a.option_strings and not a.help]
        assert undescribed == [], f"ethread {name}: no help text for {undescribed}"
