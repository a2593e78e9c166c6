"""The example notebooks run top to bottom (nbclient, a real kernel) and are saved without
outputs. Each notebook asserts its own figures; this test also checks what they print."""

from __future__ import annotations

import os

import nbformat
import pytest
from nbclient import NotebookClient

from tests.support.paths import EXAMPLES, conformance_dir

NOTEBOOKS = sorted(p.name for p in EXAMPLES.glob("*.ipynb"))


def _text(book: nbformat.NotebookNode) -> str:
    parts = []
    for cell in book.cells:
        for output in cell.get("outputs", ()):
            parts.append(output.get("text", ""))
            data = output.get("data", {})
            parts.append(data.get("text/plain", "") + data.get("text/html", ""))
    return "\n".join(parts)


def test_the_examples_are_there() -> None:
    assert NOTEBOOKS == ["explore_archive.ipynb", "token_transfers.ipynb", "verify_proof.ipynb"]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_saved_without_outputs(name: str) -> None:
    book = nbformat.read(EXAMPLES / name, as_version=4)
    nbformat.validate(book)
    for cell in book.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{name} has outputs"


EXPECTED = {
    "explore_archive.ipynb": ["8192 blocks, 93 transactions, 93 receipts",
                              "EraBackend</strong>", "missing", "8,192..172,031",
                              "108 blocks are missing from the backend: 8192..8299",
                              "Block(number=172032, hash=0x", "figure"],
    "token_transfers.ipynb": ["Transfer", "Log</strong>", "figure"],
    "verify_proof.ipynb": ["proof verified against state root 0x", "ProofError:"],
}


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ETHREAD_CONFORMANCE", str(conformance_dir()))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    book = nbformat.read(EXAMPLES / name, as_version=4)
    NotebookClient(book, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(EXAMPLES)}}).execute()
    text = _text(book)
    for cell in book.cells:
        for output in cell.get("outputs", ()):
            # A figure: an image under the inline backend, its text form under Agg.
            if "image/png" in output.get("data", {}) or "<Figure size" in str(output.get("data")):
                text += "\nfigure"
    for expected in EXPECTED[name]:
        assert expected in text, f"{name}: {expected!r} not in its output"
    assert os.environ.get("MPLBACKEND") == "Agg"


def test_jupyter_nbconvert_executes_a_notebook_as_the_docs_say(tmp_path: object) -> None:
    """docs/notebooks.md's command, with what the notebook extra installs (nbconvert's
    ``jupyter nbconvert --execute``; ipywidgets, so tqdm draws widgets instead of warning)."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    import ipywidgets  # noqa: F401  (the extra brings it)

    jupyter = Path(sys.executable).parent / "jupyter"
    command = [str(jupyter) if jupyter.exists() else shutil.which("jupyter") or "jupyter",
               "nbconvert", "--to", "notebook", "--execute", str(EXAMPLES / "verify_proof.ipynb"),
               "--output-dir", str(tmp_path), "--output", "run.ipynb"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "ETHREAD_CONFORMANCE": str(conformance_dir()),
                               "MPLBACKEND": "Agg"})
    assert done.returncode == 0, done.stderr[-3000:]
    book = nbformat.read(f"{tmp_path}/run.ipynb", as_version=4)
    assert "proof verified against state root 0x" in _text(book)
