"""``ethread keys`` (``ethread.cli.keys``): bad input refused with a message, never a traceback,
and a key issued, listed and revoked."""

from __future__ import annotations

from pathlib import Path

import pytest

from ethread.cli import main


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
    assert err.startswith("ethread keys: error: ") and "Traceback" not in err


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
