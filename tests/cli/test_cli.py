"""The ``ethread`` command itself (``ethread.cli``): ``--version``, and every flag of every
subcommand described. (Each subcommand's rough edges: test_serve, test_storage, test_keys.)"""

from __future__ import annotations

import argparse
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest

import ethread
from ethread.cli import build_parser, main
from ethread.cli.deferred import complete
from ethread.version import __version__
from tests.support.paths import REPO
from tests.support.without_modules import run_without


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"ethread {__version__}"
    assert ethread.__version__ == __version__


def test_the_version_is_written_once() -> None:
    """setup.cfg reads ethread/version.py; an installed ethread's metadata (the wheel's)
    says the same version as the package it installed."""
    assert "version = attr: ethread.version.__version__" in (REPO / "setup.cfg").read_text()
    try:
        installed = distribution("ethread")
    except PackageNotFoundError:  # a checkout on the path, never installed
        return
    package = Path(ethread.__file__).parent
    files = [Path(str(installed.locate_file(f))) for f in installed.files or ()]
    if any(f.parent == package for f in files):  # this package is the one installed
        assert installed.version == __version__


def test_every_flag_of_every_command_is_described() -> None:
    commands = next(a for a in build_parser()._actions
                    if isinstance(a, argparse._SubParsersAction))
    assert set(commands.choices) >= {"serve", "import", "export", "verify"}
    for name, parser in commands.choices.items():
        complete(parser)  # the flags added only when the subcommand is chosen
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
