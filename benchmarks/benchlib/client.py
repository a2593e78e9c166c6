"""A minimal HTTP/1.1 load client on asyncio streams (uvloop when installed): keep-alive
connections and pre-encoded requests, a few microseconds per request, far less than aiohttp
or httpx would cost. Every answer is checked to be a 200 carrying a result."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


def install_uvloop() -> None:
    """asyncio on uvloop from here on, when uvloop is installed."""
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()


def rpc(method: str, params: list[Any]) -> bytes:
    """A compact JSON-RPC request body (id 1)."""
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
                      separators=(",", ":")).encode()


def http_request(body: bytes, path: str, host: str = "127.0.0.1") -> bytes:
    """``body`` as a whole HTTP/1.1 POST to ``path``, ready to write."""
    return (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


class Connection:
    """One keep-alive HTTP/1.1 connection; the server always sends Content-Length."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, port: int) -> Connection:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=64 << 20)
        return cls(reader, writer)

    async def send(self, request: bytes) -> tuple[int, bytes]:
        self.writer.write(request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        start = head.lower().find(b"content-length:")
        end = head.find(b"\r\n", start)
        body = await self.reader.readexactly(int(head[start + 15:end]))
        return status, body

    def close(self) -> None:
        self.writer.close()


@dataclass
class Outcome:
    count: int
    seconds: float
    latencies: list[float]
    failures: int

    @property
    def rate(self) -> float:
        return self.count / self.seconds if self.seconds else 0.0

    def percentile(self, fraction: float) -> float:
        """Milliseconds."""
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))] * 1e3


async def run_load(port: int, requests: Sequence[bytes], concurrency: int, seconds: float,
                   max_requests: int) -> Outcome:
    """``requests`` (whole HTTP requests, cycled) over ``concurrency`` connections, each
    connection sending its next one when the last is answered, until ``seconds`` pass or
    ``max_requests`` are sent."""
    connections = [await Connection.open(port) for _ in range(concurrency)]
    for conn in connections:  # warm each connection (and the server's caches for `repeated`)
        await conn.send(requests[0])
    latencies: list[float] = []
    failures = 0
    issued = 0
    deadline = time.perf_counter() + seconds

    async def worker(conn: Connection, offset: int) -> None:
        nonlocal issued, failures
        index = offset
        while issued < max_requests and time.perf_counter() < deadline:
            issued += 1
            request = requests[index % len(requests)]
            index += concurrency
            started = time.perf_counter()
            status, body = await conn.send(request)
            latencies.append(time.perf_counter() - started)
            if status != 200 or b'"result"' not in body[:64]:
                failures += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker(c, i) for i, c in enumerate(connections)))
    elapsed = time.perf_counter() - started
    for conn in connections:
        conn.close()
    return Outcome(len(latencies), elapsed, latencies, failures)
