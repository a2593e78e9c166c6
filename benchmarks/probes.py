"""Re-run the hardening probes of issue 10 against ``ethread serve`` (HTTP and WebSocket) and
the library, and print what each one measured.

    python benchmarks/probes.py [--only NAME ...] [--wait S]

Every probe is bounded: a client gives up after ``--wait`` seconds (default 15) and says so,
so the script also runs against an ethread without the fixes (put that checkout first on
PYTHONPATH; the servers are started with this Python's ``ethread.cli`` and only with
flags every version knows). Servers listen on loopback and are stopped at the end of each
probe. Figures: wall times, the server's resident memory (from /proc) and CPU seconds.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from benchlib import conformance, report
from benchlib.hostile import ENDLESS, RETURN_ONE, nested
from benchlib.processes import process_cpu_seconds, rss_mb, stop_process
from benchlib.serve import ETHREAD, start_serving

CONFORMANCE = conformance()
KEY = "ethread-demo-key"
WAIT = 15.0


def call(method: str, params: Sequence[Any] = (), request_id: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": list(params)}


class Server:
    """``ethread serve ARGS`` on a free loopback port, in a subprocess."""

    def __init__(self, *args: str) -> None:
        self.process, self.port = start_serving(["--ledger", ":memory:", "--no-access-log", *args])
        self.url = f"http://127.0.0.1:{self.port}/v3/{KEY}"
        self.ws_url = f"ws://127.0.0.1:{self.port}/ws/v3/{KEY}"

    def rss_mb(self) -> float:
        return rss_mb(self.process.pid)

    def cpu_seconds(self) -> float:
        return process_cpu_seconds(self.process.pid)

    def stop(self, timeout: float = 60) -> float:
        """SIGTERM; seconds until the process is gone."""
        started = time.monotonic()
        stop_process(self.process, signal.SIGTERM, timeout)
        return time.monotonic() - started


@contextmanager
def serving(*args: str) -> Iterator[Server]:
    server = Server(*args)
    try:
        yield server
    finally:
        server.stop()


def post(url: str, body: Any, raw: bytes | None = None, timeout: float = WAIT,
         ) -> tuple[int, str, bytes]:
    """(status, content type, body); status 0 when no answer came within ``timeout``."""
    data = raw if raw is not None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.headers.get("content-type", ""), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("content-type", ""), exc.read()
    except (TimeoutError, OSError):
        return 0, "", b""


def knows(flag: str) -> bool:
    """Whether this ethread's ``serve`` has ``flag``."""
    done = subprocess.run([*ETHREAD, "serve", "--help"], capture_output=True, text=True)
    return flag in done.stdout


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    started = time.monotonic()
    result = fn()
    return time.monotonic() - started, result


def describe(raw: bytes, limit: int = 90) -> str:
    try:
        answer = json.loads(raw)
    except ValueError:
        return repr(raw[:limit])
    if isinstance(answer, dict):
        if "error" in answer:
            return f"error {answer['error']['code']} {answer['error']['message'][:limit]!r}"
        return "result"
    return f"batch of {len(answer)}"


# -- the probes ----------------------------------------------------------------------------------


def probe_batch_answer() -> None:
    """1: an 11 KB body of identical expensive calls; the answer's size and the server's RSS."""
    calls = [call("eth_getLogs", [{"fromBlock": "0x0", "toBlock": "latest"}], i)
             for i in range(1000)]
    blocks = [call("eth_getBlockByNumber", [hex(i % 50), True], i) for i in range(1000)]
    bound = ("--max-response-bytes", "5000000") if knows("--max-response-bytes") else ()
    if bound:
        print("  (the server's answer bound set to 5,000,000 bytes: the demo chain's answers "
              "stay under the default 25 MB)")
    with serving(*bound) as server:
        for name, batch in (("eth_getLogs over the demo chain", calls),
                            ("eth_getBlockByNumber full", blocks)):
            before = server.rss_mb()
            seconds, (_, _, raw) = timed(partial(post, server.url, batch))
            answers = json.loads(raw) if raw else []
            refused = sum(1 for a in answers if a.get("error", {}).get("code") == -32003)
            print(f"  HTTP batch of 1000 {name}: {len(raw) / 1e6:.1f} MB answer in "
                  f"{seconds:.2f} s, {refused} calls answered -32003; RSS "
                  f"{before:.0f} -> {server.rss_mb():.0f} MB")
        from websockets.sync.client import connect

        with connect(server.ws_url, max_size=None) as ws:
            ws.send(json.dumps(blocks))
            raw_ws = ws.recv(timeout=WAIT)
            answers = json.loads(raw_ws)
            refused = sum(1 for a in answers if a.get("error", {}).get("code") == -32003)
            print(f"  WS batch of 1000 full blocks: {len(raw_ws) / 1e6:.1f} MB answer, "
                  f"{refused} calls answered -32003")


def probe_endless_call() -> None:
    """2: endless loops in eth_call: their answer, a trivial call beside four of them, the CPU a
    client that gave up still costs, and SIGTERM with them in flight."""
    with serving() as server:
        seconds, (status, _, raw) = timed(lambda: post(server.url, call("eth_call", [ENDLESS])))
        print(f"  HTTP endless eth_call: {describe(raw) if status else 'no answer'} after "
              f"{seconds:.1f} s{'' if status else f' (client gave up at {WAIT:g} s)'}")
        with ThreadPoolExecutor(8) as pool:
            loops = [pool.submit(post, server.url, call("eth_call", [ENDLESS, "latest"], i))
                     for i in range(4)]
            time.sleep(0.5)
            seconds, (status, _, raw) = timed(
                lambda: post(server.url, call("eth_call", [RETURN_ONE, "latest"])))
            print(f"  HTTP trivial eth_call beside four endless loops at latest: "
                  f"{describe(raw) if status else 'no answer'} in {seconds:.2f} s")
            for loop in loops:
                loop.result()
        time.sleep(1)
        cpu = server.cpu_seconds()
        post(server.url, call("eth_call", [ENDLESS]), timeout=1.0)
        time.sleep(WAIT)
        print(f"  a client that gave up after 1 s: the server used "
              f"{server.cpu_seconds() - cpu:.1f} CPU-seconds in the {WAIT + 1:g} s from its "
              "request")
    with serving() as server:
        pool = ThreadPoolExecutor(4)
        loops = [pool.submit(post, server.url, call("eth_call", [ENDLESS], i), None, 60)
                 for i in range(4)]
        time.sleep(1.0)
        seconds = server.stop()
        answers = [loop.result() for loop in loops]
        pool.shutdown()
        kinds = sorted({f"{s} {t or '-'} {describe(b, 50)}" for s, t, b in answers})
        print(f"  SIGTERM with four endless calls in flight: exited in {seconds:.1f} s; "
              f"clients got {kinds}")
    from websockets.sync.client import connect

    with serving() as server:
        with connect(server.ws_url) as ws:
            ws.send(json.dumps(call("eth_call", [ENDLESS])))
            time.sleep(0.5)
        cpu = server.cpu_seconds()
        time.sleep(5)
        print(f"  a WebSocket client that left with an endless call running: "
              f"{server.cpu_seconds() - cpu:.1f} CPU-seconds over the next 5 s")


def probe_ws_outbox() -> None:
    """3: a WebSocket client that sends large batches and never reads."""
    from websockets.sync.client import connect

    batch = json.dumps([call("eth_getLogs", [{"fromBlock": "0x0", "toBlock": "latest"}], i)
                        for i in range(1000)])
    with serving() as server:
        before = server.rss_mb()
        ws = connect(server.ws_url, max_queue=1)
        ws.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        peak = before
        sent = 0
        closed_after = None
        started = time.monotonic()
        while time.monotonic() - started < 12:
            try:
                ws.send(batch)
                sent += 1
            except Exception:
                closed_after = time.monotonic() - started
                break
            peak = max(peak, server.rss_mb())
            time.sleep(0.05)
        ws.socket.close()
        time.sleep(3)
        print(f"  WS client not reading, batches of 1000 eth_getLogs (18 MB answers): "
              f"{sent} batches sent in "
              f"{time.monotonic() - started - 3:.0f} s, RSS {before:.0f} -> peak {peak:.0f} MB, "
              + (f"disconnected after {closed_after:.1f} s" if closed_after is not None
                 else "not disconnected")
              + f"; RSS 3 s after it left: {server.rss_mb():.0f} MB")


def probe_nesting() -> None:
    """4: params nested 254..1,022 deep on every path."""
    from websockets.sync.client import connect

    import ethread
    from ethread.backends.memory import MemoryBackend
    from ethread.devchain.demo import demo_chain

    backend = demo_chain(MemoryBackend()).chain.backend
    depths = (254, 255, 600, 1022)
    with serving() as server:
        for depth in depths:
            request = call("eth_getBalance", [nested(depth), "latest"], 9)
            status, kind, raw = post(server.url, request)
            with connect(server.ws_url) as ws:
                ws.send(json.dumps(request))
                try:
                    received = ws.recv(timeout=5)
                    ws_answer = describe(received.encode() if isinstance(received, str)
                                         else received)
                except TimeoutError:
                    ws_answer = "no answer in 5 s"
            library = describe(ethread.handle(backend, json.dumps(request).encode()) or b"")
            print(f"  depth {depth}: HTTP {status} {kind} {describe(raw, 40)} | WS {ws_answer} "
                  f"| library {library}")
        raw_id = b'{"jsonrpc":"2.0","id":1' + b"0" * 100 + b',"method":"eth_chainId"}'
        status, _, raw = post(server.url, None, raw=raw_id)
        echoed = raw.split(b',"result"')[0][len(b'{"jsonrpc":"2.0","id":'):]
        print(f"  id 10^100 echoed as {echoed[:30].decode()}{'...' if len(echoed) > 30 else ''}"
              f" ({len(echoed)} characters)")


def _imported_store(where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    store = where / "store"
    subprocess.run([*ETHREAD, "import", "--db", str(store),
                    "--genesis", str(CONFORMANCE / "rpc-compat" / "genesis.json"), "--blocks",
                    str(CONFORMANCE / "rpc-compat" / "chain.rlp"), "--no-verify-seals"],
                   check=True, capture_output=True)
    import plyvel

    db = plyvel.DB(str(store))
    db.compact_range()
    db.close()
    return store


def _health(port: int) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health") as response:
            return response.status, json.loads(response.read())["status"]
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())["status"]


def _all_blocks(url: str, head: int) -> tuple[int, int, int, set[str]]:
    nulls = errors = good = 0
    messages = set()
    for number in range(head + 1):
        _, _, raw = post(url, call("eth_getBlockByNumber", [hex(number), False]))
        answer = json.loads(raw)
        if "error" in answer:
            errors += 1
            messages.add(f"{answer['error']['code']} {answer['error']['message'][:80]}")
        elif answer["result"] is None:
            nulls += 1
        else:
            good += 1
    return good, nulls, errors, messages


def probe_stores() -> None:
    """5 and 6: a LevelDB store with bit flips, with a truncated table, without CURRENT."""
    work = Path(tempfile.mkdtemp(prefix="ethread-probe-"))
    try:
        pristine = _imported_store(work / "pristine")
        for damage in ("bit flips", "truncated tables"):
            store = work / damage.replace(" ", "-")
            shutil.copytree(pristine, store)
            for table in store.glob("*.ldb"):
                data = bytearray(table.read_bytes())
                if damage == "bit flips":
                    for offset in range(100, len(data) // 2, 512):
                        data[offset] ^= 0x10
                else:
                    data = data[: len(data) // 3]
                table.write_bytes(bytes(data))
            try:
                server = Server("--db", str(store))
            except RuntimeError as exc:
                print(f"  {damage}: the server refuses to start: {str(exc)[-160:]!r}")
                continue
            health = _health(server.port)
            good, nulls, errors, messages = _all_blocks(server.url, 45)
            health_after = _health(server.port)
            server.stop()
            leaks = any(str(work) in m for m in messages)
            print(f"  {damage}: /health {health} (after the reads: {health_after}); 46 blocks: "
                  f"{good} right, {nulls} null, {errors} errors {sorted(messages)[:2]}; server "
                  f"path in a message: {leaks}")
            verify = subprocess.run([*ETHREAD, "verify", "--db",
                                     str(store)], capture_output=True, text=True)
            print(f"    ethread verify --db: exit {verify.returncode} "
                  f"{(verify.stdout + verify.stderr).strip()[-110:]!r}")
        store = work / "no-current"
        shutil.copytree(pristine, store)
        (store / "CURRENT").unlink()
        tables_before = len(list(store.glob("*.ldb")))
        done = subprocess.run([*ETHREAD, "import", "--db", str(store),
                               "--genesis", str(CONFORMANCE / "rpc-compat" / "genesis.json")],
                              capture_output=True, text=True)
        print(f"  import --db into a store without CURRENT: exit {done.returncode}, tables "
              f"{tables_before} -> {len(list(store.glob('*.ldb')))}: "
              f"{done.stderr.strip()[-120:]!r}")
        from ethread.backends.leveldb import LevelDBBackend

        store = work / "no-current-library"
        shutil.copytree(pristine, store)
        (store / "CURRENT").unlink()
        try:
            LevelDBBackend(store).close()
            outcome = "opened as a new store"
        except Exception as exc:
            outcome = f"refused: {type(exc).__name__}"
        print(f"  LevelDBBackend(path) without CURRENT: {outcome}, tables {tables_before} -> "
              f"{len(list(store.glob('*.ldb')))}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def probe_slow_clients() -> None:
    """Risks: a request whose headers or body trickle in; a rate-limited key's one batch."""
    with serving() as server:
        for what, payload in (
            ("partial headers", f"POST /v3/{KEY} HTTP/1.1\r\nHost: x\r\n".encode()),
            ("partial body", (f"POST /v3/{KEY} HTTP/1.1\r\nHost: x\r\nContent-Type: "
                              "application/json\r\nContent-Length: 500\r\n\r\n{").encode()),
        ):
            sock = socket.create_connection(("127.0.0.1", server.port))
            sock.sendall(payload)
            sock.settimeout(45)
            started = time.monotonic()
            try:
                got = sock.recv(200)
                first_line = got.split(b"\r\n")[0].decode()
                outcome = f"answered {first_line!r}" if got else "closed by the server"
            except TimeoutError:
                got, outcome = b"", "still open"
            print(f"  {what}: {outcome} after {time.monotonic() - started:.1f} s")
            sock.close()
    with serving("--api-key", "k-rate", "--credits-per-second", "1000") as server:
        url = f"http://127.0.0.1:{server.port}/v3/k-rate"
        batch = [call("eth_getLogs", [{"fromBlock": "0x0", "toBlock": "0x1"}], i)
                 for i in range(100)]
        status, _, raw = post(url, batch)
        print(f"  key limited to 1,000 credits/s, one batch of 100 eth_getLogs (25,500 "
              f"credits): HTTP {status}, {describe(raw)}")


PROBES: dict[str, Callable[[], None]] = {
    "batch": probe_batch_answer, "call": probe_endless_call, "outbox": probe_ws_outbox,
    "nesting": probe_nesting, "stores": probe_stores, "slow": probe_slow_clients,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", choices=sorted(PROBES), default=None)
    parser.add_argument("--wait", type=float, default=WAIT)
    report.run(parser, __file__, run_benchmark)


def run_benchmark(args: argparse.Namespace) -> None:
    global WAIT
    WAIT = args.wait
    import ethread

    print(f"ethread from {Path(ethread.__file__).parent}")
    for name in args.only or PROBES:
        print(f"{name}: {(PROBES[name].__doc__ or '').splitlines()[0]}")
        started = time.monotonic()
        PROBES[name]()
        print(f"  ({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
