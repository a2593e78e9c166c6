"""JSON-RPC to the node a dev chain forks: batched requests, a bounded number in flight, a
timeout on each, and retries with backoff for what may pass (a connection refused or reset, a
timeout, HTTP 429 and 5xx). An answer that is an error object is the node's word and is not
retried.

Only ``http://`` and ``https://`` URLs are taken; nothing is sent anywhere else.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ...errors import EthreadError

RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})


class RemoteError(EthreadError):
    """The forked node could not be reached, or answered with an error (-32000)."""

    code = -32000


@dataclass(frozen=True, slots=True)
class RemoteLimits:
    """How the dev chain speaks to the node it forks."""

    timeout: float = 15.0
    """Seconds one HTTP request may take."""
    retries: int = 3
    """Further attempts after a failure that may pass."""
    backoff: float = 0.25
    """Seconds before the first retry; doubled for each next one."""
    batch_size: int = 50
    """Calls sent in one JSON-RPC batch."""
    concurrency: int = 4
    """Batches in flight at once."""


class RemoteNode:
    """A JSON-RPC endpoint over HTTP."""

    def __init__(self, url: str, limits: RemoteLimits = RemoteLimits()) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise RemoteError(f"fork URL: expected http:// or https://, not {url!r}")
        self.url = url
        port = f":{parts.port}" if parts.port else ""
        self.shown_url = f"{parts.scheme}://{parts.hostname}{port}"
        """The URL without its path, query or credentials (where a provider's key usually is):
        what errors and anvil_nodeInfo show."""
        self.limits = limits
        self._ids = 0
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def _next_ids(self, count: int) -> range:
        with self._lock:
            first = self._ids
            self._ids += count
        return range(first, first + count)

    def call(self, method: str, params: Sequence[Any] = ()) -> Any:
        """One call's result; :class:`RemoteError` when the node answers an error."""
        return self.batch([(method, params)])[0]

    def batch(self, calls: Sequence[tuple[str, Sequence[Any]]]) -> list[Any]:
        """The results of ``calls`` in their order, sent ``batch_size`` at a time with at most
        ``concurrency`` batches in flight."""
        if not calls:
            return []
        size = self.limits.batch_size
        chunks = [list(calls[i:i + size]) for i in range(0, len(calls), size)]
        if len(chunks) == 1:
            return self._send(chunks[0])
        pool = self._executor()
        results: list[Any] = []
        for answers in pool.map(self._send, chunks):
            results.extend(answers)
        return results

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.limits.concurrency,
                                                thread_name_prefix="ethread-fork")
            return self._pool

    def close(self) -> None:
        """Stop the threads of concurrent batches (they start again when needed)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)

    def _send(self, calls: list[tuple[str, Sequence[Any]]]) -> list[Any]:
        ids = self._next_ids(len(calls))
        body = [{"jsonrpc": "2.0", "id": i, "method": method, "params": list(params)}
                for i, (method, params) in zip(ids, calls, strict=True)]
        payload = body[0] if len(body) == 1 else body
        answer = self._post(json.dumps(payload).encode())
        answers = answer if isinstance(answer, list) else [answer]
        by_id = {entry.get("id"): entry for entry in answers if isinstance(entry, dict)}
        results = []
        for i, (method, _) in zip(ids, calls, strict=True):
            entry = by_id.get(i)
            if entry is None:
                raise RemoteError(f"the forked node gave no answer to {method}")
            error = entry.get("error")
            if error is not None:
                message = error.get("message") if isinstance(error, dict) else error
                raise RemoteError(f"the forked node refused {method}: {message}")
            results.append(entry.get("result"))
        return results

    def _post(self, data: bytes) -> Any:
        delay = self.limits.backoff
        attempt = 0
        while True:
            try:
                request = urllib.request.Request(
                    self.url, data, {"Content-Type": "application/json"})
                with urllib.request.urlopen(request, timeout=self.limits.timeout) as response:
                    return json.loads(response.read())
            except urllib.error.HTTPError as exc:
                if exc.code not in RETRY_STATUSES or attempt >= self.limits.retries:
                    raise RemoteError(f"the forked node answered HTTP {exc.code}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                if attempt >= self.limits.retries:
                    reason = getattr(exc, "reason", exc)
                    raise RemoteError(f"the forked node at {self.shown_url} cannot be "
                                      f"reached: {reason}") from None
            except ValueError:
                raise RemoteError("the forked node answered something that is not JSON") from None
            attempt += 1
            time.sleep(delay)
            delay *= 2


__all__ = ["RemoteError", "RemoteLimits", "RemoteNode"]
