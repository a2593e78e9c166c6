"""anvil (foundry's Rust node; ``npm install`` in tests/js installs the pinned release) on a
free loopback port, with a ``HOME`` of its own: anvil writes the states it moves out of memory
under ``~/.foundry/anvil/tmp`` (and its fork cache under ``~/.foundry/cache``) and leaves them
there when it stops."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from benchlib import REPO
from benchlib.processes import free_port, stop_process, wait_for_port

PACKAGES = REPO / "tests" / "js" / "node_modules" / "@foundry-rs"
"""Where ``npm install`` in tests/js puts anvil (the platform's own package)."""


def anvil_binary() -> str:
    """``$ANVIL``, else the one tests/js installed, else one on PATH."""
    installed = sorted(PACKAGES.glob("anvil-*/bin/anvil"))
    binary = os.environ.get("ANVIL") or (str(installed[0]) if installed else shutil.which("anvil"))
    if binary is None:
        raise SystemExit("anvil not found: run `npm install` in tests/js (or set ANVIL)")
    return binary


class Anvil:
    """``anvil --host 127.0.0.1 --port P FLAGS``, up (its port open) when built. ``home``: its
    HOME (kept); by default a temporary one, removed when it stops."""

    def __init__(self, *flags: str, home: Path | None = None, timeout: float = 30) -> None:
        self.port = free_port()
        self.own_home = home is None
        self.home = Path(tempfile.mkdtemp(prefix="ethread-bench-anvil-")) if home is None else home
        started = time.perf_counter()
        self.process = subprocess.Popen(
            [anvil_binary(), "--host", "127.0.0.1", "--port", str(self.port), *flags],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "HOME": str(self.home)})
        if not wait_for_port(self.port, self.process, timeout):
            self.stop()
            raise SystemExit("anvil did not start")
        self.start_seconds = time.perf_counter() - started
        """From its start to its port open."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10) -> None:
        stop_process(self.process, sig, timeout)
        if self.own_home:
            shutil.rmtree(self.home, ignore_errors=True)

    def __enter__(self) -> Anvil:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
