"""The ``ethread`` command itself (``ethread.cli``): ``--version``, and every flag of every
subcommand described. (Each subcommand's rough edges: test_serve, test_storage, test_keys.)"""

from __future__ import annotations

import argparse
from importlib.metadata import version

import pytest

import ethread
from ethread.cli import build_parser, main
from tests.support.without_modules import run_without


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


def test_the_command_runs_without_the_server_extra() -> None:
    """``ethread --help`` and the store commands need no uvicorn (the server's configuration,
    which makes the serve flags, is readable without it); ``ethread serve`` then says what to
    install."""
    done = run_without(("uvicorn", "uvloop", "httptools", "websockets"), (
        "from ethread.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit as exit:\n"
        "    print('help exit', exit.code)\n"
        "print('serve status', main(['serve']))\n"))
    assert done.returncode == 0, done.stderr
    assert "help exit 0" in done.stdout and "export" in done.stdout
    assert "serve status 2" in done.stdout
    assert "pip install 'ethread[server]'" in done.stderr
