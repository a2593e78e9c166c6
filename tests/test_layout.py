"""The tests mirror the package: every module of ethread/ of 150 lines or more has a test module
of its own, found by its path. ``ethread/a/b/c.py`` is mirrored by ``tests/a/b/test_c.py``, by
``tests/a/b/test_c_*.py`` or by a folder ``tests/a/b/c/``; a package's ``__init__.py`` stands
for the package (``ethread/a/b/__init__.py`` is ``b``). A reader looking for a module's tests
finds them in one place, and a module that grows past the line finds its missing tests named
here."""

from __future__ import annotations

from pathlib import Path

import ethread

PACKAGE = Path(ethread.__file__).parent
TESTS = Path(__file__).parent
MIN_LINES = 150


def _mirrors(module: Path) -> list[Path]:
    """Where ``module``'s tests may be (any one is enough)."""
    parts = list(module.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    folder = TESTS.joinpath(*parts[:-1])
    name = parts[-1]
    return [folder / f"test_{name}.py", *folder.glob(f"test_{name}_*.py"), folder / name]


def _unmirrored() -> list[str]:
    missing = []
    for module in sorted(PACKAGE.rglob("*.py")):
        if module == PACKAGE / "__init__.py":
            continue
        lines = len(module.read_text(encoding="utf-8").splitlines())
        if lines >= MIN_LINES and not any(path.exists() for path in _mirrors(module)):
            missing.append(f"{module.relative_to(PACKAGE.parent)} ({lines} lines): "
                           f"expected {_mirrors(module)[0].relative_to(TESTS.parent)}")
    return missing


def test_every_module_of_150_lines_has_its_own_test_module() -> None:
    missing = _unmirrored()
    assert not missing, "modules without a test module of their own:\n" + "\n".join(missing)


def test_the_mirror_is_read_by_path() -> None:
    assert _mirrors(PACKAGE / "devchain" / "fork" / "source.py")[0] == \
        TESTS / "devchain" / "fork" / "test_source.py"
    assert _mirrors(PACKAGE / "devchain" / "fork" / "__init__.py")[-1] == TESTS / "devchain" / "fork"
    assert TESTS / "server" / "billing" / "test_ledger_mapped.py" in _mirrors(
        PACKAGE / "server" / "billing" / "ledger.py")
