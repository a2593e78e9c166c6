"""The workers' one-at-a-time accept (ethread.server.processes.fair_accept) on a real loopback socket."""

from __future__ import annotations

import asyncio
import errno
import socket

from ethread.server.processes.fair_accept import FairListener


class Echo(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.transport.write(data.upper())  # type: ignore[attr-defined]


def test_a_burst_is_served_one_accept_at_a_time_and_close_leaves_the_socket() -> None:
    """A burst of 16 connections made at once is served, each connection once; after close
    the socket stays open (the other workers still listen on it) and is no longer served.
    (Two workers sharing the socket are in test_workers: both take part of a burst.)"""

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        port = server.getsockname()[1]
        served: list[Echo] = []

        def factory() -> Echo:
            served.append(Echo())
            return served[-1]

        listener = FairListener(loop, server, factory)
        opened = [await asyncio.open_connection("127.0.0.1", port) for _ in range(16)]
        for number, (_, writer) in enumerate(opened):
            writer.write(f"hello {number}".encode())
        answers = [await reader.readexactly(len(f"hello {n}")) for n, (reader, _) in
                   enumerate(opened)]
        assert answers == [f"HELLO {n}".encode() for n in range(16)]
        assert len(served) == 16
        listener.close()
        await listener.wait_closed()
        assert server.fileno() != -1
        late = socket.create_connection(("127.0.0.1", port))  # queued, never served
        await asyncio.sleep(0.05)
        assert len(served) == 16
        late.close()
        for _, writer in opened:
            writer.close()
        server.close()

    asyncio.run(scenario())


def test_out_of_file_descriptors_pauses_accepting_instead_of_spinning() -> None:
    """An accept that fails for want of descriptors takes the socket off the loop for a
    moment (a readable socket would otherwise wake the loop for ever), then accepting
    resumes and the waiting connection is served."""

    class Failing(socket.socket):
        failures = 1

        def accept(self) -> tuple[socket.socket, object]:
            if Failing.failures:
                Failing.failures -= 1
                raise OSError(errno.EMFILE, "Too many open files")
            return super().accept()

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        server = Failing()
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        served: list[Echo] = []

        def factory() -> Echo:
            served.append(Echo())
            return served[-1]

        listener = FairListener(loop, server, factory)
        reader, writer = await asyncio.open_connection("127.0.0.1", server.getsockname()[1])
        writer.write(b"late")
        assert await asyncio.wait_for(reader.readexactly(4), 10) == b"LATE"
        assert Failing.failures == 0 and len(served) == 1
        listener.close()
        writer.close()
        server.close()

    asyncio.run(scenario())
