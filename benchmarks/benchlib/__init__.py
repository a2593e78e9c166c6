"""What the benchmark scripts in ``benchmarks/`` share: the chains they build (the peer chain,
synthetic history) and the token suite's comparison providers.

A script is run by its path (``python benchmarks/bench_core.py``, from any folder): Python puts
the script's own folder first on ``sys.path``, so ``import benchlib`` finds this package with
no path set up by hand. The name is not ``benchmarks.*`` on purpose: the PyPI package
cchecksum installs a top-level ``benchmarks`` package, which shadows a folder of that name
without ``__init__.py`` (``from benchmarks.synthetic_history import ...`` then fails). The
tests find it through pytest's ``pythonpath`` (pyproject.toml).
"""
