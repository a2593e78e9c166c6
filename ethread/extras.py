"""What to type to add an optional extra: the one wording of every "needs the X extra" hint
(``pip install 'ethread[X]'``, or ``pip install -e '.[X]'`` in a clone never installed).
"""

from __future__ import annotations


def install_hint(extra: str) -> str:
    """The command that adds ``extra`` (e.g. ``"server"``), with the clone's form beside it."""
    return (f"pip install 'ethread[{extra}]' (adds it to the installed ethread; "
            f"in a clone: pip install -e '.[{extra}]')")
