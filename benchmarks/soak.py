"""Soak test: minutes of mixed load against one ``ethread serve``, the hostile probes of issue
10 included (bounded), recording the server's memory, every answer and every error.

    python benchmarks/soak.py [--minutes 10] [--clients 6] [--sample 5]

The load, in rounds until the time is up, from ``--clients`` HTTP threads and one WebSocket
client: cheap calls (chain id, head, balances, blocks, receipts, logs), eth_call (quick ones and
endless loops that run into the call time limit), batches whose answer passes the size bound,
params nested 600 deep, ids of 10**100, slow headers, a client that disconnects with a call
running, and a WebSocket that sends large batches and stops reading. Every request that wants an
answer has an id; the script counts the ids it sent and the ids answered (over HTTP and
WebSocket), and samples the server's resident memory every ``--sample`` seconds.

It prints the memory over time, the answers and errors by kind, and two verdicts: whether the
memory stayed flat (the last third's median within 15% of the first third's, after warm-up)
and whether every id was answered.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import statistics
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from typing import Any

from benchlib import report
from benchlib.hostile import ENDLESS, RETURN_ONE, nested
from benchlib.processes import rss_mb
from benchlib.serve import start_serving

KEY = "soak-key"
ADDRESS = "0x" + "11" * 20


class Tally:
    """Ids sent and answered, answers by kind; shared by the client threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sent = 0
        self.answered = 0
        self.kinds: Counter[str] = Counter()
        self.unanswered: list[str] = []

    def next_ids(self, count: int) -> int:
        with self.lock:
            first = self.sent
            self.sent += count
            return first

    def record(self, what: str, ids: list[int], raw: bytes | None, status: int) -> None:
        if raw is None or not raw:
            with self.lock:
                self.kinds[f"{what}: no answer (HTTP {status})"] += len(ids)
                self.unanswered.append(f"{what} {ids[:3]}")
            return
        try:
            answer = json.loads(raw)
        except ValueError:
            with self.lock:
                self.kinds[f"{what}: not JSON (HTTP {status})"] += len(ids)
                self.unanswered.append(f"{what} {ids[:3]}")
            return
        answers = answer if isinstance(answer, list) else [answer]
        seen = {a.get("id") for a in answers if isinstance(a, dict)}
        missing = [i for i in ids if i not in seen]
        with self.lock:
            self.answered += len(ids) - len(missing)
            if missing:
                self.unanswered.append(f"{what} {missing[:3]}")
            for one in answers:
                if "error" in one:
                    self.kinds[f"{what}: error {one['error']['code']} "
                               f"{one['error']['message'][:48]}"] += 1
                else:
                    self.kinds[f"{what}: result"] += 1


def request(method: str, params: list[Any], request_id: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def post(url: str, body: Any, timeout: float = 60) -> tuple[int, bytes | None]:
    data = json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except OSError:
        return 0, None


def http_client(url: str, port: int, tally: Tally, until: float, seed: int) -> None:
    round_ = seed
    while time.monotonic() < until:
        round_ += 1
        kind = round_ % 10
        if kind in (0, 1, 2, 3):
            first = tally.next_ids(6)
            ids = list(range(first, first + 6))
            batch = [request("eth_chainId", [], ids[0]), request("eth_blockNumber", [], ids[1]),
                     request("eth_getBalance", [ADDRESS, "latest"], ids[2]),
                     request("eth_getBlockByNumber", [hex(round_ % 50), True], ids[3]),
                     request("eth_getBlockReceipts", [hex(round_ % 50)], ids[4]),
                     request("eth_getLogs", [{"fromBlock": "0x0", "toBlock": "latest"}],
                             ids[5])]
            status, raw = post(url, batch)
            tally.record("cheap batch", ids, raw, status)
        elif kind == 4:
            (first,) = (tally.next_ids(1),)
            status, raw = post(url, request("eth_call", [RETURN_ONE, "latest"], first))
            tally.record("quick eth_call", [first], raw, status)
        elif kind == 5:
            first = tally.next_ids(1)
            status, raw = post(url, request("eth_call", [ENDLESS, "latest"], first))
            tally.record("endless eth_call", [first], raw, status)
        elif kind == 6:
            first = tally.next_ids(1000)
            ids = list(range(first, first + 1000))
            batch = [request("eth_getBlockByNumber", [hex(i % 50), True], i) for i in ids]
            status, raw = post(url, batch)
            tally.record("1000 full blocks", ids, raw, status)
        elif kind == 7:
            first = tally.next_ids(2)
            status, raw = post(url, request("eth_getBalance", [nested(600), "latest"], first))
            tally.record("params nested 600 deep", [first], raw, status)
            status, raw = post(url, request("eth_chainId", [], 10**100))
            with tally.lock:
                tally.answered += 1 if raw and b'"id":1' + b"0" * 100 + b"," in raw else 0
        elif kind == 8:
            # a client that gives up on a running call (not counted: it reads no answer)
            post(url, request("eth_call", [ENDLESS, "latest"], -1), timeout=0.5)
        else:
            # slow headers: half a request line, then silence until the server closes it
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(b"POST /v3/" + KEY.encode() + b" HTTP/1.1\r\nHost: x\r\n")
            sock.settimeout(5)
            with contextlib.suppress(OSError):
                sock.recv(10)
            sock.close()


def websocket_client(ws_url: str, tally: Tally, until: float) -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    round_ = 0
    while time.monotonic() < until:
        round_ += 1
        if round_ % 5 == 0:
            # a client that sends large batches and stops reading (not counted)
            try:
                silent = connect(ws_url, max_queue=1)
                silent.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                batch = json.dumps([request("eth_getBlockByNumber", [hex(i % 50), True], -1)
                                    for i in range(1000)])
                for _ in range(40):
                    silent.send(batch)
                silent.socket.close()
            except (ConnectionClosed, OSError):
                pass
            continue
        with connect(ws_url, max_size=None) as ws:
            for _ in range(20):
                first = tally.next_ids(3)
                ids = [first, first + 1, first + 2]
                ws.send(json.dumps(request("eth_blockNumber", [], ids[0])))
                ws.send(json.dumps([request("eth_getBlockByNumber", ["latest", False], ids[1]),
                                    request("eth_getBalance", [nested(300), "latest"], ids[2])]))
                for _ in range(2):
                    try:
                        raw = ws.recv(timeout=30)
                    except (TimeoutError, ConnectionClosed):
                        tally.record("websocket", ids, None, 0)
                        break
                    answer = json.loads(raw)
                    got = [answer["id"]] if isinstance(answer, dict) else [a["id"] for a in answer]
                    tally.record("websocket", got, raw.encode() if isinstance(raw, str) else raw,
                                 101)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--sample", type=float, default=5.0, help="seconds between samples")
    parser.add_argument("--call-timeout", type=float, default=2.0,
                        help="the server's eth_call time limit (shorter than geth's 5 s so "
                             "that endless loops come round often)")
    return report.run(parser, __file__, run_benchmark)


def run_benchmark(args: argparse.Namespace) -> int:
    server, port = start_serving(
        ["--ledger", ":memory:", "--api-key", KEY, "--daily-credits", str(10**15),
         "--no-access-log", "--log-level", "error", "--call-timeout", str(args.call_timeout),
         "--max-response-bytes", "2000000", "--header-timeout", "2",
         "--ws-max-unread-bytes", "4000000"])
    url = f"http://127.0.0.1:{port}/v3/{KEY}"
    tally = Tally()
    started = time.monotonic()
    until = started + args.minutes * 60
    threads = [threading.Thread(target=http_client, args=(url, port, tally, until, i * 3))
               for i in range(args.clients)]
    threads.append(threading.Thread(
        target=websocket_client, args=(f"ws://127.0.0.1:{port}/ws/v3/{KEY}", tally, until)))
    for thread in threads:
        thread.start()
    samples: list[tuple[float, float]] = []
    print(f"soak: {args.minutes:g} min against pid {server.pid} on port {port}")
    while time.monotonic() < until:
        samples.append((time.monotonic() - started, rss_mb(server.pid)))
        print(f"  t={samples[-1][0]:6.0f} s  RSS {samples[-1][1]:7.1f} MB  ids sent "
              f"{tally.sent:,} answered {tally.answered:,}", flush=True)
        time.sleep(args.sample)
    for thread in threads:
        thread.join(120)
    samples.append((time.monotonic() - started, rss_mb(server.pid)))
    server.send_signal(signal.SIGTERM)
    stop_started = time.monotonic()
    server.wait(60)
    print(f"server stopped {time.monotonic() - stop_started:.1f} s after SIGTERM, "
          f"exit {server.returncode}")
    print("answers and errors:")
    for kind, count in sorted(tally.kinds.items()):
        print(f"  {count:9,}  {kind}")
    warm = [rss for at, rss in samples if at >= 30] or [rss for _, rss in samples]
    third = max(1, len(warm) // 3)
    first, last = statistics.median(warm[:third]), statistics.median(warm[-third:])
    flat = last <= first * 1.15
    print(f"memory: min {min(warm):.0f} MB, max {max(warm):.0f} MB, first third median "
          f"{first:.0f} MB, last third median {last:.0f} MB: "
          f"{'flat' if flat else 'GROWING'}")
    print(f"ids: {tally.sent:,} sent, {tally.answered:,} answered, "
          f"{len(tally.unanswered)} requests with an unanswered id"
          + (f" (e.g. {tally.unanswered[:3]})" if tally.unanswered else ""))
    return 0 if flat and not tally.unanswered else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
