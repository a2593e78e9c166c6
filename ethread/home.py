"""The one folder where ethread keeps the files it makes for a user when none is named (the
credit ledger and key store of ``ethread serve``, the sidecar indexes of archive folders):
``$ETHREAD_HOME``, else ``$XDG_DATA_HOME/ethread``, else ``~/.local/share/ethread``; created on
first use.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

HOME_VARIABLE = "ETHREAD_HOME"

LEDGER_NAME = "credits.ledger"
"""The default credit ledger's file name (a memory-mapped ledger; its key store is
``credits.keys.sqlite3`` beside it)."""


def data_dir() -> Path:
    """ethread's data folder (see the module's docstring); not created here."""
    chosen = os.environ.get(HOME_VARIABLE)
    if chosen:
        return Path(chosen).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "ethread"


def default_ledger() -> str:
    """The credit ledger a server spends from and ``ethread keys`` manages when none is named."""
    return str(data_dir() / LEDGER_NAME)


def era_index_path(folder: Path) -> Path:
    """Where the sidecar index of the archive folder ``folder`` lives by default: under
    ``era-index/``, named by a digest of the folder's resolved path and its last component."""
    resolved = folder.resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:16]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in resolved.name) or "root"
    return data_dir() / "era-index" / f"{name}-{digest}.sqlite"
