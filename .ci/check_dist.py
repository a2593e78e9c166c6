"""What ``python -m build`` made, checked before anything is installed from it: one sdist and
one wheel of the version ``ethread/version.py`` says; the wheel holds the ``ethread`` package
(with ``py.typed`` and the ``ethread`` command) and nothing else of the repository: no tests,
benchmarks, examples or docs. Exits 1 naming each problem.

    python .ci/check_dist.py dist/
"""

from __future__ import annotations

import ast
import sys
import tarfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NOT_SHIPPED = ("tests/", "benchmarks/", "examples/", "docs/", ".ci/")


def source_version() -> str:
    """``__version__`` of ethread/version.py, read without importing ethread."""
    tree = ast.parse((REPO / "ethread" / "version.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets):
            value = ast.literal_eval(node.value)
            assert isinstance(value, str)
            return value
    raise SystemExit("ethread/version.py sets no __version__")


def problems(folder: Path) -> list[str]:
    version = source_version()
    found: list[str] = []
    wheels = sorted(folder.glob("ethread-*.whl"))
    sdists = sorted(folder.glob("ethread-*.tar.gz"))
    if [w.name for w in wheels] != [f"ethread-{version}-py3-none-any.whl"]:
        found.append(f"expected one wheel ethread-{version}-py3-none-any.whl, found "
                     f"{[w.name for w in wheels]}")
    if [s.name for s in sdists] != [f"ethread-{version}.tar.gz"]:
        found.append(f"expected one sdist ethread-{version}.tar.gz, found {[s.name for s in sdists]}")
    for wheel in wheels:
        names = zipfile.ZipFile(wheel).namelist()
        strays = [n for n in names if not n.startswith(("ethread/", f"ethread-{version}.dist-info/"))]
        if strays:
            found.append(f"{wheel.name} holds more than the package: {strays[:5]}")
        if "ethread/py.typed" not in names:
            found.append(f"{wheel.name} lacks ethread/py.typed")
        entry_points = zipfile.ZipFile(wheel).read(f"ethread-{version}.dist-info/entry_points.txt")
        if b"ethread = ethread.cli:main" not in entry_points:
            found.append(f"{wheel.name} installs no ethread command")
    for sdist in sdists:
        with tarfile.open(sdist) as archive:
            names = [n.split("/", 1)[1] for n in archive.getnames() if "/" in n]
        shipped = [n for n in names if n.startswith(NOT_SHIPPED)]
        if shipped:
            found.append(f"{sdist.name} holds {shipped[:5]}")
        for needed in ("README.md", "CHANGELOG.md", "setup.cfg", "pyproject.toml",
                       "ethread/version.py"):
            if needed not in names:
                found.append(f"{sdist.name} lacks {needed}")
    return found


def main() -> int:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "dist")
    found = problems(folder)
    for problem in found:
        print(f"check_dist: {problem}", file=sys.stderr)
    if not found:
        print(f"check_dist: {', '.join(sorted(p.name for p in folder.glob('ethread-*')))}: ok")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
