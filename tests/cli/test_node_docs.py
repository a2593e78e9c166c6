"""docs/node.md's commands run as written: each ``ethread node`` line starts a node that answers
with what its flags say, and the ``cast`` lines run against a node (their URL pointed at it)."""

from __future__ import annotations

import re
import shlex
import subprocess

import pytest

from tests.support.dev_node import NodeProcess
from tests.support.paths import JS, REPO

PAGE = REPO / "docs" / "node.md"


def _commands(program: str) -> list[list[str]]:
    """The command lines of the page's ``sh`` blocks that run ``program``."""
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", PAGE.read_text(), flags=re.S):
        lines += [shlex.split(line) for line in block.splitlines()
                  if line.startswith(program + " ")  or line == program]
    return lines


def test_the_page_has_commands() -> None:
    assert len(_commands("ethread")) >= 4 and len(_commands("cast")) >= 4


@pytest.mark.parametrize("command", _commands("ethread"), ids=shlex.join)
def test_each_ethread_node_line_starts_a_node(command: list[str], tmp_path: object) -> None:
    assert command[:2] == ["ethread", "node"]
    args = command[2:]
    with NodeProcess(args, cwd=tmp_path) as node:  # (its own free port after the page's)
        flags = dict(zip(args[::2], args[1::2], strict=False))
        accounts = node.rpc("eth_accounts")
        assert len(accounts) == int(flags.get("--accounts", 10))
        assert int(node.rpc("eth_chainId"), 16) == int(flags.get("--chain-id", 31337))
        balance = int(node.rpc("eth_getBalance", accounts[0], "latest"), 16)
        assert balance == int(flags.get("--balance", 10_000)) * 10**18
        if "--no-mining" in args or "--block-time" in args:
            assert node.rpc("anvil_getAutomine") is False


@pytest.mark.node
def test_the_cast_lines_run_against_a_node() -> None:
    cast = JS / "node_modules" / ".bin" / "cast"
    assert cast.exists(), "run `npm install` in tests/js first (CI does)"
    with NodeProcess(["--silent"]) as node:
        outputs = []
        for command in _commands("cast"):
            pointed = [node.url if part == "http://127.0.0.1:8545" else part
                       for part in command[1:]]
            done = subprocess.run([str(cast), *pointed], capture_output=True, text=True,
                                  timeout=120)
            assert done.returncode == 0, (command, done.stderr)
            outputs.append(done.stdout.strip())
        assert outputs[0] == "0"
        assert int(outputs[2]) == 10_001 * 10**18  # the page's transfer arrived
        assert node.rpc("eth_blockNumber") == hex(1 + 5)  # the transfer's block, then 5 mined
