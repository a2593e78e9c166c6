"""The hint every "needs the X extra" message gives (``ethread.extras.install_hint``) is a
command that works today: pip counts the installed ethread (a wheel or a clone) as meeting
``ethread[X]`` and adds only what the extra brings, with no package index asked."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, distribution

import pytest

from ethread.extras import install_hint
from tests.support.without_modules import run_without


def test_the_hint_names_both_forms() -> None:
    assert install_hint("web3") == ("pip install 'ethread[web3]' (adds it to the installed "
                                    "ethread; in a clone: pip install -e '.[web3]')")


def test_the_hinted_command_is_met_by_the_installed_ethread() -> None:
    try:
        distribution("ethread")
    except PackageNotFoundError:
        pytest.skip("ethread runs from a checkout that was never installed (CI installs it)")
    command = re.match(r"pip install '([^']+)'", install_hint("web3"))
    assert command is not None
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps",
                           "--no-index", command.group(1)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Requirement already satisfied: ethread[web3]" in done.stdout


def test_a_missing_extra_says_the_hint() -> None:
    done = run_without(("web3",), "import ethread.web3\n")
    assert done.returncode == 1
    assert install_hint("web3") in done.stderr
