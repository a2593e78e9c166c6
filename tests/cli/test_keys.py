"""``ethread keys`` (``ethread.cli.keys``): bad input refused with a message, never a traceback,
and a key issued, listed and revoked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ethread.cli import main
from ethread.home import data_dir
from ethread.server.config import DEFAULT_LEDGER, load_config


@pytest.mark.parametrize("argv", [
    ["keys", "list", "--ledger", ":memory:"],
    ["keys", "list", "--ledger", "redis://"],
    ["keys", "revoke", "ek_nobody-at-all", "--ledger", "{tmp}/k.sqlite3"],
    ["keys", "usage", "ek_nobody-at-all", "--ledger", "{tmp}/k.sqlite3"],
    ["keys", "create", "--daily-credits", "-5", "--ledger", "{tmp}/k.sqlite3"],
    ["keys", "create", "--network", "two words", "--ledger", "{tmp}/k.sqlite3"],
    ["keys", "list", "--config", "{tmp}/missing.toml"],
])
def test_keys_command_errors_are_messages(argv: list[str], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code = main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    err = capsys.readouterr().err
    assert code in (1, 2)
    assert err.splitlines()[-1].startswith("ethread keys: error: ") and "Traceback" not in err


def test_keys_command_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ledger = str(tmp_path / "credits.ledger")  # a mapped ledger: keys in credits.keys.sqlite3
    assert main(["keys", "create", "--ledger", ledger, "--label", "cli"]) == 0
    key = capsys.readouterr().out.strip()
    assert (tmp_path / "credits.keys.sqlite3").exists()
    assert main(["keys", "list", "--ledger", ledger]) == 0
    listed = capsys.readouterr().out
    assert key[:8] in listed and key not in listed
    assert main(["keys", "usage", key, "--ledger", ledger]) == 0
    assert "credits spent: 0" in capsys.readouterr().out
    assert main(["keys", "revoke", key[:8], "--ledger", ledger]) == 0
    assert main(["keys", "revoke", key[:8], "--ledger", ledger]) == 1
    assert "already revoked" in capsys.readouterr().err


def _keys(argv: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """``ethread keys ARGV`` in a fresh process run in ``cwd`` with ``home`` as ETHREAD_HOME."""
    program = "import sys; from ethread.cli import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", program, "keys", *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "ETHREAD_HOME": str(home)})


def test_keys_without_a_ledger_use_the_data_folder_and_say_so(tmp_path: Path) -> None:
    """No file appears in the current folder; ``list`` before any key makes no file at all."""
    cwd, home = tmp_path / "here", tmp_path / "home"
    cwd.mkdir()
    ledger = home / "credits.ledger"
    listed = _keys(["list"], cwd, home)
    assert listed.returncode == 0, listed.stderr
    assert f"ethread keys: ledger {ledger}" in listed.stderr
    assert "no key has been issued into this ledger" in listed.stderr
    assert not home.exists() and list(cwd.iterdir()) == []
    assert _keys(["list", "--json"], cwd, home).stdout.strip() == "[]"
    revoked = _keys(["revoke", "ek_nobody"], cwd, home)
    assert revoked.returncode == 2 and "no key store at" in revoked.stderr
    created = _keys(["create", "--label", "first"], cwd, home)
    assert created.returncode == 0, created.stderr
    assert f"ethread keys: ledger {ledger}" in created.stderr
    assert (home / "credits.keys.sqlite3").is_file() and list(cwd.iterdir()) == []
    listed = _keys(["list"], cwd, home)
    assert created.stdout.strip()[:8] in listed.stdout and "first" in listed.stdout


def test_the_default_ledger_is_in_the_data_folder_also_for_a_config_file(tmp_path: Path) -> None:
    assert Path(DEFAULT_LEDGER) == data_dir() / "credits.ledger"
    config = tmp_path / "serve.toml"
    config.write_text("[server]\nport = 0\n")
    assert load_config(config).ledger == DEFAULT_LEDGER  # not beside the file
    config.write_text('[server]\nledger = "mine.ledger"\n')
    assert load_config(config).ledger == str(tmp_path / "mine.ledger")  # named: beside it
