"""The README's Python examples run as written, on the data they name (the conformance data
beside the clone: ``../shared/conformance``, wherever $ETHREAD_CONFORMANCE puts it here)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO, conformance_dir

README = REPO / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_the_readme_python_examples_run(tmp_path: Path) -> None:
    blocks = _python_blocks()
    assert len(blocks) == 3 and "frames.logs(backend" in blocks[2]
    program = "\n".join(blocks).replace("../shared/conformance", str(conformance_dir()))
    program = program.replace("): ...", "): pass")  # the loop left open in the text
    script = tmp_path / "readme.py"
    script.write_text(program)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path, env={**os.environ, "MPLBACKEND": "Agg"})
    assert done.returncode == 0, done.stderr[-3000:]
    printed = done.stdout
    # the decoded transfers: two rows, alice to bob, the exact amounts
    assert "1000000000000000000" in printed and "250000000000000000" in printed
    assert list(tmp_path.iterdir()) == [script]  # nothing written beside the script
