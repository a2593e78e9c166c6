"""Running a short program in a fresh interpreter where some top-level modules cannot be
imported: what a user without an optional extra sees."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable

_BLOCKER = """import sys
class _Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {missing!r}:
            raise ImportError(name)
sys.meta_path.insert(0, _Missing())
"""


def run_without(missing: Iterable[str], program: str) -> subprocess.CompletedProcess[str]:
    """``program`` run by this Python with the top-level modules ``missing`` unimportable;
    its output as text (the caller asserts on the exit status and what it printed)."""
    code = _BLOCKER.format(missing=tuple(missing)) + program
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
