"""The lean HTTP path (``ethread.server.http.lean``) against uvicorn's ASGI path: the same bytes
for the same requests, and the HTTP/1.1 features a client may lean on (pipelining, bodies in
pieces, chunked bodies, HTTP/1.0, early refusals), spoken over raw sockets."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

import ethread
from ethread.codec import pipeline
from ethread.server.billing.credits import cost_of
from ethread.server.config import KeyConfig
from ethread.server.http.admission_turn import GATHER_ABOVE_CONNECTIONS, AdmissionTurn
from ethread.server.http.lean import RpcHttpProtocol
from tests.support.server_harness import KEY, call, serve_in_thread

POOR_KEY = "poor-key-0123456789"
FEW_KEY = "few-key-0123456789"
FEW_BLOCKS = 3
"""FEW_KEY's daily credits pay for this many eth_getBlockByNumber calls."""
TURN_KEY = "turn-key-0123456789"
"""A key whose credits pay for FEW_BLOCKS eth_getBlockByNumber calls too."""


@pytest.fixture(scope="module")
def servers(rpc_compat_memory: ethread.MemoryBackend) -> Iterator[dict[str, Any]]:
    """One server on each path, same chain, same keys (one of them with no credits left); and
    a third on the lean path that holds more connections than a worker that answers each
    request as it is read (idle ones, open all along): it gathers every request until the end
    of its loop's turn and charges the turn's requests together."""
    keys = (KeyConfig(key=KEY), KeyConfig(key=POOR_KEY, daily_credits=1),
            KeyConfig(key=FEW_KEY, daily_credits=FEW_BLOCKS * cost_of("eth_getBlockByNumber")),
            KeyConfig(key=TURN_KEY, daily_credits=FEW_BLOCKS * cost_of("eth_getBlockByNumber")))
    with serve_in_thread(rpc_compat_memory, keys=keys, lean_http=True) as lean, \
            serve_in_thread(rpc_compat_memory, keys=keys, lean_http=False) as asgi, \
            serve_in_thread(rpc_compat_memory, keys=keys, lean_http=True,
                            limits={"header_timeout_seconds": 3600}) as gathered:
        idle = [open_socket(gathered) for _ in range(GATHER_ABOVE_CONNECTIONS)]
        try:
            yield {"lean": lean, "asgi": asgi, "gathered": gathered}
        finally:
            for sock in idle:
                sock.close()


def request(body: bytes, *, path: str = f"/v3/{KEY}", content_type: str = "application/json",
            version: str = "1.1", extra: str = "") -> bytes:
    return (f"POST {path} HTTP/{version}\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n{extra}\r\n").encode() + body


def rpc(method: str, params: list[Any] | None = None, request_id: Any = 1) -> bytes:
    return json.dumps(call(method, params or [], request_id)).encode()


class Reader:
    """Reads HTTP responses one after another off a socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def _fill(self) -> bool:
        data = self.sock.recv(65536)
        self.buffer += data
        return bool(data)

    def response(self) -> tuple[int, dict[str, str], bytes]:
        while b"\r\n\r\n" not in self.buffer:
            if not self._fill():
                raise ConnectionError("closed before a response")
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(self.buffer) < length:
            if not self._fill():
                raise ConnectionError("closed inside a body")
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return status, headers, body

    def closed(self) -> bool:
        """Whether the server closed the connection (after what was read)."""
        self.sock.settimeout(10)
        return not self.buffer and self.sock.recv(1) == b""


def open_socket(server: Any) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def exchange(server: Any, payload: bytes, count: int = 1) -> list[tuple[int, dict[str, str], bytes]]:
    with open_socket(server) as sock:
        sock.sendall(payload)
        reader = Reader(sock)
        return [reader.response() for _ in range(count)]


SAME_BYTES = {
    "chain id": request(rpc("eth_chainId")),
    "full block": request(rpc("eth_getBlockByNumber", ["0x3", True])),
    "logs (run in the pool)": request(rpc("eth_getLogs", [{"fromBlock": "0x0",
                                                           "toBlock": "latest"}])),
    "eth_call revert": request(rpc("eth_call", [{"to": "0x" + "00" * 20}, "latest"])),
    "batch with an error in place": request(b"[" + rpc("eth_chainId", [], 1) + b","
                                            + rpc("no_such_method", [], 2) + b"]"),
    "notification only": request(b'{"jsonrpc":"2.0","method":"eth_chainId"}'),
    "parse error": request(b"{not json"),
    "unknown key": request(rpc("eth_chainId"), path="/v3/not-a-key"),
    "no key": request(rpc("eth_chainId"), path="/v3/"),
    "not json content": request(rpc("eth_chainId"), content_type="text/plain"),
    "out of credits": request(rpc("eth_getBlockByNumber", ["0x1", False]),
                              path=f"/v3/{POOR_KEY}"),
    "subscribe over HTTP": request(rpc("eth_subscribe", ["newHeads"])),
    "HTTP/1.0": request(rpc("eth_blockNumber"), version="1.0"),
}


@pytest.mark.parametrize("name", list(SAME_BYTES))
def test_both_paths_answer_the_same_bytes(servers: dict[str, Any], name: str) -> None:
    answers = {}
    for path, server in servers.items():
        [(status, headers, body)] = exchange(server, SAME_BYTES[name])
        headers.pop("date")
        answers[path] = (status, headers, body)
    assert answers["lean"] == answers["asgi"] == answers["gathered"]
    status, headers, body = answers["lean"]
    if status == 204:
        assert body == b""
    else:
        assert headers["content-type"] == "application/json"
        assert "jsonrpc" in json.loads(body) or isinstance(json.loads(body), list)


def test_a_large_cached_answer_is_the_same_bytes_on_both_paths(
        servers: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """A cached answer past the size kept in pieces (here made small) is written in pieces on
    the lean path: the same bytes as the ASGI path's joined answer, twice on one connection."""
    monkeypatch.setattr(pipeline, "LARGE_ANSWER_BYTES", 16)
    logs = request(rpc("eth_getLogs", [{"fromBlock": "0x0", "toBlock": "0x2d"}], 5))
    answers = {}
    for path, server in servers.items():
        first, second, third = exchange(server, logs * 3, 3)
        assert first[2] == second[2] == third[2]
        for _, headers, _ in (first, second, third):
            headers.pop("date")
        assert first == second == third
        answers[path] = second
    assert answers["lean"] == answers["asgi"] == answers["gathered"]
    assert len(json.loads(answers["lean"][2])["result"]) > 1


@pytest.mark.parametrize("path", ["lean", "asgi", "gathered"])
def test_pipelined_requests_are_answered_in_order(servers: dict[str, Any], path: str) -> None:
    """Five requests in one write, the second of them run in a pool thread (eth_getLogs): the
    answers come back in the order asked, each whole."""
    bodies = [rpc("eth_chainId", [], 1),
              rpc("eth_getLogs", [{"fromBlock": "0x0", "toBlock": "latest"}], 2),
              rpc("eth_blockNumber", [], 3),
              b"[" + rpc("eth_chainId", [], 4) + b"," + rpc("eth_chainId", [], 5) + b"]",
              rpc("eth_getBlockByNumber", ["0x2", False], 6)]
    answers = exchange(servers[path], b"".join(request(b) for b in bodies), len(bodies))
    assert [status for status, _, _ in answers] == [200] * 5
    ids = [json.loads(body) for _, _, body in answers]
    assert [ids[0]["id"], ids[1]["id"], ids[2]["id"], [a["id"] for a in ids[3]], ids[4]["id"]] \
        == [1, 2, 3, [4, 5], 6]
    assert isinstance(ids[1]["result"], list) and ids[1]["result"]


@pytest.mark.parametrize("path", ["lean", "asgi", "gathered"])
def test_each_request_of_a_connection_passes_the_gate_on_its_own(servers: dict[str, Any],
                                                                  path: str) -> None:
    """One kept-alive connection whose requests change key and content type: each is let in or
    refused for what it sends, whatever the request before it was."""
    sends = [request(rpc("eth_chainId")),
             request(rpc("eth_chainId"), path="/v3/not-a-key"),
             request(rpc("eth_chainId")),
             request(rpc("eth_chainId"), content_type="text/plain"),
             request(rpc("eth_getBlockByNumber", ["0x1", False]), path=f"/v3/{POOR_KEY}/"),
             request(rpc("eth_chainId"), content_type="application/json; charset=utf-8")]
    answers = exchange(servers[path], b"".join(sends), len(sends))
    assert [status for status, _, _ in answers] == [200, 401, 200, 415, 429, 200]
    assert json.loads(answers[4][2])["error"]["code"] == -32005


def one_by_one(server: Any, sends: list[bytes]) -> list[tuple[int, dict[str, str], bytes]]:
    """Each send written once the answers to the one before are read, on one connection (a
    send may hold several requests)."""
    answers = []
    with open_socket(server) as sock:
        reader = Reader(sock)
        for send in sends:
            sock.sendall(send)
            for _ in range(send.count(b"POST ")):
                status, headers, body = reader.response()
                headers.pop("date")
                answers.append((status, headers, body))
    return answers


def test_a_head_sent_again_is_answered_as_the_parser_would(servers: dict[str, Any],
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            ) -> None:
    """A request whose head (request line and headers) the connection sent before, with its
    whole body, is answered without the parser: the same bytes as the ASGI path's for a body
    that is the same, one under another id, one of another length, and a request pipelined
    behind another, which goes to the parser."""
    replays = []
    replay = RpcHttpProtocol._replay

    def counted(self: RpcHttpProtocol, *args: Any) -> None:
        replays.append(args[-1])
        replay(self, *args)

    monkeypatch.setattr(RpcHttpProtocol, "_replay", counted)
    block = request(rpc("eth_getBlockByNumber", ["0x2", False], 1))
    sends = [block, block, request(rpc("eth_getBlockByNumber", ["0x3", False], 2)),
             request(rpc("eth_chainId", [], 3)), request(rpc("eth_chainId", [], 4)),
             block + request(rpc("eth_getBlockByNumber", ["0x2", False], 5))]
    answers = {path: one_by_one(server, sends) for path, server in servers.items()}
    assert answers["lean"] == answers["asgi"] == answers["gathered"]
    assert [json.loads(body)["id"] for _, _, body in answers["lean"]] == [1, 1, 2, 3, 4, 1, 5]
    assert [status for status, _, _ in answers["lean"]] == [200] * 7
    assert json.loads(answers["lean"][1][2])["result"]["number"] == "0x2"
    assert replays == [rpc("eth_getBlockByNumber", ["0x2", False], 1),
                       rpc("eth_getBlockByNumber", ["0x3", False], 2),
                       rpc("eth_chainId", [], 4)] * 2  # the lean and the gathering server


@pytest.mark.parametrize("path", ["lean", "gathered"])
def test_a_head_sent_again_is_charged_again(servers: dict[str, Any], path: str) -> None:
    """A request answered without the parser pays as any other: the key's credits run out on
    time, and the refusal is what the parser's path answers."""
    send = request(rpc("eth_getBlockByNumber", ["0x1", False]), path=f"/v3/{FEW_KEY}")
    answers = one_by_one(servers[path], [send] * (FEW_BLOCKS + 2))
    assert [status for status, _, _ in answers] == [200] * FEW_BLOCKS + [429, 429]
    assert json.loads(answers[-1][2])["error"]["code"] == -32005


def test_a_server_with_many_connections_charges_each_turn_together(
        servers: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """The server holding idle connections gathers its requests (:mod:`admission_turn`); the
    one a single client talks to answers each as it is read. Five requests that arrive while
    the server's loop is busy (its first turn made to take 0.3 s) are read in one turn and
    charged together, one after another: a key with credits for three calls gets exactly
    three answers of the five."""
    turns = []
    run = AdmissionTurn.run

    def counted(self: AdmissionTurn) -> None:
        turns.append(len(self._waiting))
        if len(turns) == 1:
            time.sleep(0.3)  # the loop is busy: what comes now waits for the next turn
        run(self)

    monkeypatch.setattr(AdmissionTurn, "run", counted)
    exchange(servers["lean"], request(rpc("eth_chainId")))
    assert turns == []
    send = request(rpc("eth_getBlockByNumber", ["0x1", False]), path=f"/v3/{TURN_KEY}")
    first = open_socket(servers["gathered"])
    sockets = [open_socket(servers["gathered"]) for _ in range(FEW_BLOCKS + 2)]
    try:
        for sock in [first, *sockets]:  # every connection taken in and read from
            sock.sendall(request(rpc("eth_chainId", [], 3)))
            assert Reader(sock).response()[0] == 200
        turns.clear()
        first.sendall(request(rpc("eth_chainId", [], 4)))
        time.sleep(0.1)  # the server is in its first turn
        for sock in sockets:
            sock.sendall(send)
        status, _, body = Reader(first).response()
        answers = [Reader(sock).response() for sock in sockets]
    finally:
        for sock in [first, *sockets]:
            sock.close()
    assert status == 200 and json.loads(body)["id"] == 4
    assert turns == [1, FEW_BLOCKS + 2]
    assert sorted(status for status, _, _ in answers) == [200] * FEW_BLOCKS + [429, 429]


@pytest.mark.parametrize("path", ["lean", "gathered"])
@pytest.mark.parametrize("method", ["eth_chainId", "eth_getLogs"])
def test_bytes_that_cannot_be_read_behind_a_request_are_answered_400_after_it(
        servers: dict[str, Any], path: str, method: str) -> None:
    """A request followed in the same write by bytes that are not HTTP: the request is
    answered (from the loop, at its turn's end, or from the pool for eth_getLogs), then the
    400, then the connection closes; nothing is lost behind the close."""
    params = [{"fromBlock": "0x0", "toBlock": "latest"}] if method == "eth_getLogs" else []
    with open_socket(servers[path]) as sock:
        sock.sendall(request(rpc(method, params, 8)) + b"NOT HTTP AT ALL\r\n\r\n")
        reader = Reader(sock)
        status, _, body = reader.response()
        assert status == 200 and json.loads(body)["id"] == 8
        status, headers, _ = reader.response()
        assert status == 400 and headers["connection"] == "close"
        assert reader.closed()


@pytest.mark.parametrize("path", ["lean", "asgi", "gathered"])
def test_a_body_sent_in_pieces_and_a_chunked_body(servers: dict[str, Any], path: str) -> None:
    body = rpc("eth_getBlockByNumber", ["0x1", False], 7)
    with open_socket(servers[path]) as sock:
        reader = Reader(sock)
        whole = request(body)
        head_end = whole.index(b"\r\n\r\n") + 4
        sock.sendall(whole[:head_end])
        for start in range(head_end, len(whole), 9):
            time.sleep(0.005)
            sock.sendall(whole[start:start + 9])
        status, _, answer = reader.response()
        assert status == 200 and json.loads(answer)["id"] == 7
        chunked = (f"POST /v3/{KEY} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n").encode()
        for start in range(0, len(body), 20):
            piece = body[start:start + 20]
            chunked += f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
        sock.sendall(chunked + b"0\r\n\r\n")
        status, _, answer = reader.response()
        assert status == 200 and json.loads(answer)["id"] == 7


@pytest.mark.parametrize("path", ["lean", "asgi", "gathered"])
def test_http_1_0_closes_after_the_answer(servers: dict[str, Any], path: str) -> None:
    with open_socket(servers[path]) as sock:
        sock.sendall(request(rpc("eth_chainId"), version="1.0"))
        reader = Reader(sock)
        status, _, body = reader.response()
        assert status == 200 and json.loads(body)["result"]
        assert reader.closed()


def test_a_declared_oversized_body_is_refused_before_it_is_read(servers: dict[str, Any]) -> None:
    """413 as soon as the headers are in, and the connection closes: the body is never read."""
    limit = servers["lean"].prepared.service.limits.max_body_bytes
    with open_socket(servers["lean"]) as sock:
        sock.sendall((f"POST /v3/{KEY} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      f"Content-Type: application/json\r\nContent-Length: {limit + 1}\r\n\r\n"
                      ).encode())
        reader = Reader(sock)
        status, headers, body = reader.response()
        assert status == 413 and headers["connection"] == "close"
        assert json.loads(body)["error"]["code"] == -32600
        assert reader.closed()


def test_health_and_websocket_still_work_beside_the_lean_path(servers: dict[str, Any]) -> None:
    from websockets.sync.client import connect

    server = servers["lean"]
    with open_socket(server) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                     + request(rpc("eth_chainId", [], 9)))
        reader = Reader(sock)
        status, _, body = reader.response()
        assert status == 200 and json.loads(body)["status"] == "ok"
        status, _, body = reader.response()
        assert status == 200 and json.loads(body)["id"] == 9
    with connect(f"ws://127.0.0.1:{server.port}/ws/v3/{KEY}") as ws:
        ws.send(rpc("eth_chainId", [], 10).decode())
        assert json.loads(ws.recv())["id"] == 10
