"""The floor no per-request work can go below: an ASGI app answering one constant JSON-RPC
body to every request, under the uvicorn settings of ethread's server
(:func:`ethread.server.processes.runner.uvicorn_config`); with several workers, forked after
the bind as ``ethread serve --workers`` does.

    python -m benchlib.bare PORT WORKERS    (from the benchmarks folder; :func:`benchlib.targets.start_bare`)
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import Any

BODY = b'{"jsonrpc":"2.0","id":1,"result":"0x539"}'


def serve_bare(port: int, workers: int) -> None:
    import uvicorn

    from ethread.server.config import ServiceLimits
    from ethread.server.processes.runner import bind, uvicorn_config

    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(BODY)).encode())]

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": BODY})

    sock = bind("127.0.0.1", port)
    children: list[int] = []
    for _ in range(workers - 1):
        pid = os.fork()
        if pid == 0:
            children = []
            break
        children.append(pid)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            uvicorn.Server(uvicorn_config(app, ServiceLimits())).run(sockets=[sock])
    finally:
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGINT)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


if __name__ == "__main__":
    serve_bare(int(sys.argv[1]), int(sys.argv[2]))
