"""What the benchmark scripts in ``benchmarks/`` share, so that no script imports another.

A script is run by its path (``python benchmarks/bench_load.py``, from any folder): Python puts
the script's own folder first on ``sys.path``, so ``import benchlib`` finds this package with
no path set up by hand. The name is not ``benchmarks.*`` on purpose: the PyPI package
cchecksum installs a top-level ``benchmarks`` package, which shadows a folder of that name
without ``__init__.py``. The tests find it through pytest's ``pythonpath`` (pyproject.toml).

Modules, each imported only by the scripts that need it (none imports ethread's heavier parts
at import time unless its job is building chains):

- :mod:`benchlib.processes`: free ports, waiting for a port, stopping a process, CPU seconds
  and resident memory of a process (and of its descendants) from /proc;
- :mod:`benchlib.serve`: the ``ethread`` command of whichever ethread this Python imports,
  and ``ethread serve --port 0`` started and its port read from its banner;
- :mod:`benchlib.anvil`: anvil (tests/js) on a free port with a home of its own;
- :mod:`benchlib.targets`: the servers a load runs against (anvil with a chain replayed,
  ``ethread serve`` with workers, the bare ASGI floor of :mod:`benchlib.bare`), as one
  ``Target`` each;
- :mod:`benchlib.client`: the keep-alive asyncio HTTP/1.1 load client;
- :mod:`benchlib.wrk`: running wrk with a Lua script and reading its figures;
- :mod:`benchlib.rows`: rows of requests made the same way in Lua (wrk) and in Python, and
  running a row against a target;
- :mod:`benchlib.peer_chain`, :mod:`benchlib.synthetic_history`,
  :mod:`benchlib.executable_history`: the chains the scripts build;
- :mod:`benchlib.index_progress`: how far a history index built in another process has got;
- :mod:`benchlib.token_suite`, :mod:`benchlib.testchain_providers`,
  :mod:`benchlib.testchain_cputime`: the token suite run with another provider line;
- :mod:`benchlib.report`: the machine's load line, and the results file each script writes
  (``benchmarks/results/<script>.txt``).
"""

from __future__ import annotations

import os
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent
"""The benchmarks folder (the scripts' own)."""
REPO = BENCHMARKS.parent
RESULTS = BENCHMARKS / "results"
"""Where each script keeps the figures of its last run."""


def conformance() -> Path:
    """The external conformance data (``ETHREAD_CONFORMANCE``, default ../shared/conformance)."""
    return Path(os.environ.get("ETHREAD_CONFORMANCE", REPO.parent / "shared" / "conformance"))
