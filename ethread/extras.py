"""What to type to add an optional extra: the one wording of every "needs the X extra" hint.

``pip install 'ethread[X]'`` adds extra X's packages to the environment where ethread is
installed, whether it came from a wheel or a clone (pip counts the installed ethread as
meeting the requirement and installs only what the extra adds); from a clone that was never
installed, ``pip install -e '.[X]'`` in it installs both.
"""

from __future__ import annotations


def install_hint(extra: str) -> str:
    """The command that adds ``extra`` (e.g. ``"server"``), with the clone's form beside it."""
    return (f"pip install 'ethread[{extra}]' (adds it to the installed ethread; "
            f"in a clone: pip install -e '.[{extra}]')")
