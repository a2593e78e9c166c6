"""The access log, and a filter that keeps API keys out of every other log line.

uvicorn's access log would print the key in the path, so this one is written instead, with
the key masked; :class:`KeyMaskingFilter` masks uvicorn's other log lines.
"""

from __future__ import annotations

import logging
from typing import Any

from .keys.auth import mask_paths

access = logging.getLogger("ethread.access")


class KeyMaskingFilter(logging.Filter):
    """Rewrites ``/v3/<key>`` in a record's message and arguments to its masked form."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Mask the API keys in a log record's message and arguments; always keeps the record."""
        if isinstance(record.msg, str) and "/v3/" in record.msg:
            record.msg = mask_paths(record.msg)
        if record.args:
            if isinstance(record.args, tuple):
                record.args = tuple(mask_paths(a) if isinstance(a, str) else a
                                    for a in record.args)
            elif isinstance(record.args, dict):
                record.args = {k: mask_paths(v) if isinstance(v, str) else v
                               for k, v in record.args.items()}
        return True


def install_key_masking() -> None:
    """Add the API-key masking filter to uvicorn's and ethread's loggers (once)."""
    masking = KeyMaskingFilter()
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "ethread.server"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, KeyMaskingFilter) for f in logger.filters):
            logger.addFilter(masking)


def log_request(client: Any, network: str, key: str, what: str, status: int, size: int,
                seconds: float) -> None:
    """One line per HTTP request or WebSocket message; ``key`` is already masked."""
    host = f"{client[0]}:{client[1]}" if client else "-"
    access.info("%s %s %s %s %d %dB %.2fms", host, network, key, what, status, size,
                seconds * 1000)
