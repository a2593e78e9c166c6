"""ethread beside anvil (foundry's Rust node) on the same chain, under the same load: requests/s
at concurrency 1 and 16, and the ratio ethread / anvil, for the reads of issue 12.

    .venv/bin/python benchmarks/bench_vs_anvil.py [--blocks 5001] [--seconds 5] [--rounds 1]
        [--workdir DIR] [--only TEXT] [--targets anvil,bare,memory,store,...] [--workers 2]
        [--engine lmdb|leveldb] [--access-log] [--client wrk|python] [--cpu] [--requests N]

The chain (``benchlib/peer_chain.py``): block 1 deploys the Ping contract, blocks 2..N each hold
one call to it, so every block from 2 on has one transaction and one log from one address. It is
built once with ethread's dev chain and written as genesis.json and block RLP (kept in
``--workdir`` for the next run, with the store imported from them); then

- **anvil** (``tests/js``: ``npm ci`` there installs ``@foundry-rs/anvil``) starts from the
  same genesis (``--init``) and replays the same signed transactions, block by block;
- **ethread, memory**: ``ethread serve --genesis --blocks`` (the chain executed and held in
  memory);
- **ethread, store**: ``ethread import --engine lmdb`` once, then ``ethread serve --db`` (the
  store a hosted deployment uses: LMDB is what several workers read at once);
- **ethread, store, polling** (``--targets ...,store-poll``): the store server with
  ``--busy-poll-us 250``, which polls a while for the next request before its loop sleeps
  (``ethread.server.busy_poll``, off by default);
- **ethread, store, one piece off** (``store-nofair``, ``store-noshared``): the store server
  with ``--no-fair-accept`` (uvicorn's greedy accept in each worker) or
  ``--no-shared-fragments`` (each worker decodes every block it serves itself);
- **ethread, memory, no admission turns** (``memory-noturns``): ``--no-admission-turns``, each
  request charged as it is read even when a worker holds many connections;
- **ethread, ASGI** (``--targets ...,asgi``): the memory server with ``--no-lean-http``,
  every request through uvicorn's ASGI path instead of the lean one (the choice measured);
- **ethread, metrics** (``--targets ...,metrics``): the memory server with ``--metrics``
  (``/metrics``, prometheus-client's multiprocess mode: what counting every request costs);
- **bare ASGI**: a constant-body ASGI app under the same uvicorn settings as ethread's server
  (:func:`ethread.server.processes.runner.uvicorn_config`), the floor no per-request work can go below.

Both ethread servers run with ``--workers`` processes (default 2: the kernel hands each
connection to one of them, so at c=1 one process answers), the default credit ledger (a
memory-mapped ``*.ledger`` file), and no
access log unless ``--access-log``; every request is charged, as in production.

The load generator is wrk (Debian's ``wrk``) with a Lua script per row that makes a fresh body
for every request (random blocks, transactions, windows; a new calldata for each distinct
eth_call), one thread at c=1 and two at c=16; without wrk, a keep-alive Python client
(``bench_load.py``'s) sends bodies made the same way. Before each row a few of its bodies are
sent to each server and must answer a result. Each row runs ``--seconds`` on each server;
with ``--rounds N`` it runs N times as long, the servers taking turns (anvil, then each
ethread, then anvil again), so that a minute when the machine is slower (an idle core wakes
later, another process runs) falls on every server alike: the c=1 column moves most with
that. The machine's load average is printed with the table, since the servers, the load
generator and anything else running share the same cores.

**Cold reads** (``--requests N``, with wrk): what a provider's workers do all day, since its
working set never fits their caches. Each cell (a row at one concurrency) sends exactly N
requests, timed from the first request to the last answer, to an ethread server started afresh
for it and warmed first with N requests of the same row on the last third of the chain (so
that the code is warm, and a forked worker has already copied the pages it writes); the
measured requests then ask for random blocks and transactions of the first two thirds, which
no worker has read. With ``--blocks 3001 --requests 1500`` that is 1,500 requests over 2,000
blocks, most of them cold; anvil, which holds its chain in memory, answers the same bodies.

Rows whose bodies repeat (the floor, the full-range logs, the repeated eth_call) measure what a
server does with a request it has answered before (ethread answers the same bytes again
without parsing them: its answers by body); the floor with a new id in each body is what a
client numbering its requests pays, parsing and dispatch included; random reads over 5,000
blocks (each with a new id too) also find ethread's answer cache warm as a row goes on (as
they would in service); distinct eth_calls never do.

The eth_simulateV1 row asks for one simulated block of three calls to Ping, each with new
calldata (no cache helps): a server builds a whole block for it (state, receipts and
transactions roots, the withdrawal and consolidation queues' system calls from Prague on).
``memory-plain`` is the memory server with ``ETHREAD_SIMULATE_PLAIN=1``: simulations on
py-evm's own classes and py-trie (what ethread did before its fast path; the same answers).
Measured with ``--blocks 300 --seconds 5 --rounds 3 --only simulateV1 --targets
anvil,memory,memory-plain --workers 1 --cpu`` (wrk, load average 5 from other work on the two
cores), requests/s at c=1 / c=16 and server CPU per request:

    anvil          4,008 / 7,669     0.17 / 0.12 ms
    memory           474 /   518     1.68 / 1.64 ms   (fast path)
    memory-plain     142 /   140     6.25 / 6.50 ms   (py-evm's classes and py-trie)

with ``--workers 2``: anvil 3,585 / 10,677, memory 553 / 619. In process a simulation takes
about 1.5 ms of CPU on the fast path and 7 ms on the plain one: the plain path spends a third
in the state root (py-trie re-encoding and writing each path at each change), a quarter in
py-evm's transaction steps (a py-evm transaction built, validated and spoofed, a debug line
formatted per transaction), a twentieth in the transactions and receipts roots; the fast path
spends about 40% in the calls (of which the opcodes themselves are under a tenth), 12% in the
state root, 8% in the beacon-root and parent-hash writes, and the rest in building the block.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_load import process_cpu_seconds, stop_process
from benchlib.peer_chain import PeerChain, build

REPO = Path(__file__).resolve().parent.parent
ANVIL_PACKAGES = REPO / "tests" / "js" / "node_modules" / "@foundry-rs"
KEY = "bench-key-0000000000000000"
BARE_BODY = b'{"jsonrpc":"2.0","id":1,"result":"0x539"}'
CONCURRENCY = (1, 16)


# -- rows: the same bodies from Lua (wrk) and from Python ------------------------------------


@dataclass(frozen=True)
class Row:
    label: str
    lua: str
    """Lua returning one request body (globals: n, the request counter; head; ping; hashes)."""
    python: Callable[[random.Random, int, PeerChain], bytes]
    check: Callable[[Any, PeerChain], bool] = lambda result, chain: result is not None


def _body(method: str, params: str, ident: int | str = 1) -> str:
    return f'{{"jsonrpc":"2.0","id":{ident},"method":"{method}","params":{params}}}'


def _window(result: Any, chain: PeerChain) -> bool:
    return isinstance(result, list) and 99 <= len(result) <= 100


def rows(chain: PeerChain) -> list[Row]:
    head = chain.head
    full_range = _body("eth_getLogs",
                       f'[{{"fromBlock":"0x0","toBlock":"{hex(head)}","address":"{chain.ping}"}}]')
    repeated_call = _body("eth_call", f'[{{"to":"{chain.ping}","data":"0x01"}},"latest"]')

    def lua_body(method: str, params: str) -> str:
        return (f"'{{\"jsonrpc\":\"2.0\",\"id\":' .. n .. ',\"method\":\"{method}\","
                f"\"params\":' .. {params} .. '}}'")

    def random_block_row(label: str, method: str, after: str) -> Row:
        """A row asking ``method`` of a random block: params ``["0x<n>"<after>]``."""
        return Row(label,
                   lua_body(method, "'[\"' .. string.format('0x%x', math.random(lo, hi)) .. "
                            f"'\"{after}]'"),
                   lambda rng, n, c: _body(method, f'["{hex(rng.randint(1, c.head))}"{after}]',
                                           n).encode())

    def distinct_call(rng: random.Random, n: int, c: PeerChain) -> bytes:
        data = f"0x{'0' * 48}{rng.getrandbits(32):08x}{n:08x}"
        return _body("eth_call", f'[{{"to":"{c.ping}","data":"{data}"}},"latest"]', n).encode()

    def simulation(rng: random.Random, n: int, c: PeerChain) -> bytes:
        calls = ",".join(f'{{"to":"{c.ping}","data":"0x{"0" * 40}{rng.getrandbits(32):08x}{n:08x}{i:08x}"}}'
                         for i in range(1, 4))
        return _body("eth_simulateV1", f'[{{"blockStateCalls":[{{"calls":[{calls}]}}]}},"latest"]',
                     n).encode()

    def simulated(result: Any, c: PeerChain) -> bool:
        return (isinstance(result, list) and len(result) == 1
                and [call.get("status") for call in result[0].get("calls", ())] == ["0x1"] * 3)

    return [
        Row("eth_chainId (floor)", "'" + _body("eth_chainId", "[]") + "'",
            lambda rng, n, c: _body("eth_chainId", "[]").encode()),
        Row("eth_chainId, new id each", lua_body("eth_chainId", "'[]'"),
            lambda rng, n, c: _body("eth_chainId", "[]", n).encode()),
        random_block_row("blocks, full, random", "eth_getBlockByNumber", ",true"),
        Row("tx by hash, random",
            lua_body("eth_getTransactionByHash",
                     "'[\"' .. hashes[math.random(math.min(lo, #hashes), math.min(hi, #hashes))]"
                     " .. '\"]'"),
            lambda rng, n, c: _body("eth_getTransactionByHash",
                                    f'["{rng.choice(c.tx_hashes)}"]', n).encode()),
        random_block_row("block receipts, random", "eth_getBlockReceipts", ""),
        Row("logs, 100-block window",
            lua_body("eth_getLogs",
                     "(function() local s = math.random(math.max(lo, 2), hi - 99) return "
                     "string.format('[{\"fromBlock\":\"0x%x\",\"toBlock\":\"0x%x\",', s, s + 99)"
                     " .. '\"address\":\"' .. ping .. '\"}]' end)()"),
            lambda rng, n, c: (lambda s: _body(
                "eth_getLogs", f'[{{"fromBlock":"{hex(s)}","toBlock":"{hex(s + 99)}",'
                               f'"address":"{c.ping}"}}]', n).encode())(rng.randint(2, c.head - 99)),
            _window),
        Row(f"logs, 0..{head} ({head - 1} logs), repeated", "'" + full_range + "'",
            lambda rng, n, c: full_range.encode(),
            lambda result, c: isinstance(result, list) and len(result) == c.head - 1),
        Row("eth_call, repeated", "'" + repeated_call + "'",
            lambda rng, n, c: repeated_call.encode(),
            lambda result, c: isinstance(result, str) and len(result) == 66),
        Row("eth_call, distinct",
            lua_body("eth_call", "'[{\"to\":\"' .. ping .. '\",\"data\":\"0x' .. "
                                 "string.rep('0', 48) .. string.format('%08x%08x', seed, n) .. "
                                 "'\"},\"latest\"]'"),
            distinct_call,
            lambda result, c: isinstance(result, str) and len(result) == 66),
        Row("eth_simulateV1, 1 block of 3 distinct calls",
            lua_body("eth_simulateV1",
                     "(function() local function call(i) return '{\"to\":\"' .. ping .. "
                     "'\",\"data\":\"0x' .. string.rep('0', 40) .. "
                     "string.format('%08x%08x%08x', seed, n, i) .. '\"}' end "
                     "return '[{\"blockStateCalls\":[{\"calls\":[' .. call(1) .. ',' .. call(2) "
                     ".. ',' .. call(3) .. ']}]},\"latest\"]' end)()"),
            simulation, simulated),
    ]


LUA = """
local path = "%(path)s"
local headers = {["Content-Type"] = "application/json"}
head = %(head)d
lo, hi = %(lo)d, %(hi)d  -- the blocks (and the transactions, one a block) random rows ask for
ping = "%(ping)s"
hashes = {%(hashes)s}
n = 0
local threads = 0

function setup(thread)
  threads = threads + 1
  thread:set("seed", %(seed)d + threads * 7919)
end

function init(args)
  seed = seed or %(seed)d
  math.randomseed(seed)
  n = 0
end

request = function()
  n = n + 1
  return wrk.format("POST", path, headers, %(body)s)
end
"""

COUNTED_LUA = """
-- a fixed number of answers per thread, timed from the first request to the last answer (wrk's
-- own rate divides by the whole -d, which a counted row does not fill)
local ffi = require("ffi")
ffi.cdef[[ typedef struct { long tv_sec; long tv_nsec; } ethread_ts;
           int clock_gettime(int, ethread_ts *); ]]
local clock = ffi.new("ethread_ts")
local function now()
  ffi.C.clock_gettime(1, clock)
  return tonumber(clock.tv_sec) + tonumber(clock.tv_nsec) * 1e-9
end
local limit = %(limit)d
local all = {}
first, last, answered, refused = 0, 0, 0, 0
local counted_setup = setup
function setup(thread)
  counted_setup(thread)
  table.insert(all, thread)
end
local counted_request = request
request = function()
  if first == 0 then first = now() end
  return counted_request()
end
response = function(status, headers, body)
  answered = answered + 1
  if status ~= 200 then refused = refused + 1 end
  last = now()
  if answered >= limit then wrk.thread:stop() end
end
function done(summary, latency, requests)
  local started, ended, total, bad = math.huge, 0, 0, 0
  for _, thread in ipairs(all) do
    local f, l = thread:get("first"), thread:get("last")
    if f > 0 and f < started then started = f end
    if l > ended then ended = l end
    total = total + thread:get("answered")
    bad = bad + thread:get("refused")
  end
  io.write(string.format("COUNTED %%d %%.6f %%d\\n", total, ended - started, bad))
end
"""


# -- servers ---------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Target:
    name: str
    port: int
    path: str
    process: subprocess.Popen[bytes]
    scratch: Path | None = None
    """A folder of the process's own, removed when it stops."""

    def post(self, body: bytes, timeout: float = 60) -> tuple[int, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request("POST", self.path, body, {"Content-Type": "application/json"})
            answer = conn.getresponse()
            return answer.status, json.loads(answer.read())
        finally:
            conn.close()

    def stop(self) -> None:
        stop_process(self.process, signal.SIGINT, 30)
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)


def wait_until_up(target: Target, timeout: float, workers: int = 1) -> None:
    deadline = time.monotonic() + timeout
    body = _body("eth_chainId", "[]").encode()
    while time.monotonic() < deadline:
        if target.process.poll() is not None:
            raise SystemExit(f"{target.name} exited with {target.process.returncode}")
        try:
            status, answer = target.post(body, timeout=5)
            if status == 200 and "result" in answer:
                if workers <= 1:
                    return
                conn = http.client.HTTPConnection("127.0.0.1", target.port, timeout=5)
                conn.request("GET", "/health")
                report = json.loads(conn.getresponse().read())
                conn.close()
                if report.get("workers", {}).get("up") == workers:
                    return
        except (OSError, ValueError, http.client.HTTPException):
            pass
        time.sleep(0.2)
    target.stop()
    raise SystemExit(f"{target.name} did not come up within {timeout:.0f} s")


def start_anvil(chain: PeerChain, *, name: str = "anvil", flags: tuple[str, ...] = ()) -> Target:
    """anvil 1.7.1 (from tests/js) on a free port with ``chain`` replayed into it; ``flags``
    added to its command line."""
    binaries = sorted(ANVIL_PACKAGES.glob("anvil-*/bin/anvil"))
    if not binaries:
        raise SystemExit("anvil is not installed: run `npm ci` (or npm install) in tests/js")
    port = free_port()
    # anvil writes the states it moves out of memory under ~/.foundry/anvil/tmp and leaves
    # them there when it stops (1.7 GB a run of this chain): a home of its own, removed after.
    home = Path(tempfile.mkdtemp(prefix="ethread-bench-anvil-"))
    process = subprocess.Popen(
        [str(binaries[0]), "--init", str(chain.genesis), "--host", "127.0.0.1", "--port",
         str(port), "--no-mining", "--order", "fifo", "--hardfork", "prague", "--accounts", "0",
         "--disable-default-create2-deployer", *flags],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "HOME": str(home)})
    target = Target(name, port, "/", process, home)
    try:
        wait_until_up(target, 30)
        replay(target, chain)
    except BaseException:
        target.stop()
        raise
    return target


def replay(target: Target, chain: PeerChain) -> None:
    """The chain's blocks on anvil: each block's signed transactions at its timestamp."""
    conn = http.client.HTTPConnection("127.0.0.1", target.port, timeout=60)

    def call(method: str, *params: Any) -> Any:
        conn.request("POST", "/", json.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
                                             "params": list(params)}),
                     {"Content-Type": "application/json"})
        answer = json.loads(conn.getresponse().read())
        if "error" in answer:
            raise SystemExit(f"anvil refused {method}: {answer['error']}")
        return answer["result"]

    started = time.perf_counter()
    call("anvil_setNextBlockBaseFeePerGas", hex(chain.block1_base_fee))
    for timestamp, txs in chain.raw_blocks:
        call("evm_setNextBlockTimestamp", timestamp)
        for raw in txs:
            call("eth_sendRawTransaction", raw)
        call("evm_mine")
    head = int(call("eth_blockNumber"), 16)
    conn.close()
    if head != chain.head:
        raise SystemExit(f"anvil's head is {head} after the replay, not {chain.head}")
    print(f"anvil: {head} blocks replayed in {time.perf_counter() - started:.1f} s", flush=True)


def ethread_command(*args: str) -> list[str]:
    return [sys.executable, "-c", "import sys; from ethread.cli import main; sys.exit(main())",
            *args]


def start_ethread(name: str, chain_args: list[str], workdir: Path, workers: int,
                  access_log: bool, timeout: float, env: dict[str, str] | None = None) -> Target:
    port = free_port()
    ledger = workdir / f"credits-{name}.ledger"
    for stale in workdir.glob(f"credits-{name}.ledger"):
        stale.unlink()
    command = ethread_command(
        "serve", *chain_args, "--port", str(port), "--api-key", KEY,
        "--daily-credits", str(10**15), "--ledger", str(ledger), "--workers", str(workers),
        "--log-level", "warning")
    if not access_log:
        command.append("--no-access-log")
    errors = workdir / f"serve-{name}.stderr"  # the import's progress bar, warnings, failures
    with errors.open("wb") as sink:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=sink,
                                   env={**os.environ, **(env or {})})
    target = Target(name, port, f"/v3/{KEY}", process)
    started = time.perf_counter()
    try:
        wait_until_up(target, timeout, workers)
    except SystemExit:
        print(errors.read_text(errors="replace")[-3000:], file=sys.stderr)
        raise
    print(f"{name}: up in {time.perf_counter() - started:.1f} s", flush=True)
    return target


def ensure_store(chain: PeerChain, workdir: Path, engine: str) -> Path:
    store = workdir / f"store-{engine}"
    done = store / ".imported"
    if done.exists() and done.read_text() == str(chain.head):
        return store
    if store.exists():
        shutil.rmtree(store)
    started = time.perf_counter()
    subprocess.run(ethread_command("import", "--engine", engine, "--db", str(store), "--genesis",
                                   str(chain.genesis), "--blocks", str(chain.blocks),
                                   "--no-verify-seals"),
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    done.write_text(str(chain.head))
    print(f"store: {engine} import of {chain.head} blocks in "
          f"{time.perf_counter() - started:.0f} s", flush=True)
    return store


def start_bare(workers: int) -> Target:
    port = free_port()
    process = subprocess.Popen([sys.executable, __file__, "--serve-bare", str(port),
                                "--workers", str(workers)],
                               stdout=subprocess.DEVNULL)
    target = Target("bare ASGI", port, "/", process)
    wait_until_up(target, 30)
    return target


def serve_bare(port: int, workers: int) -> None:
    """A constant JSON body for every request, under ethread's uvicorn settings; with several
    workers, forked after the bind as ``ethread serve --workers`` does."""
    import uvicorn

    from ethread.server.config import ServiceLimits
    from ethread.server.processes.runner import bind, uvicorn_config

    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(BARE_BODY)).encode())]

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
        await send({"type": "http.response.body", "body": BARE_BODY})

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


# -- load ------------------------------------------------------------------------------------


def lua_script(row: Row, target: Target, chain: PeerChain, seed: int,
               limit: int | None = None, blocks: tuple[int, int] | None = None) -> str:
    """The row's wrk script; with ``limit``, each thread stops after that many answers; random
    rows ask for ``blocks`` (first, last; default: the whole chain)."""
    hashes = ",".join(f'"{h}"' for h in chain.tx_hashes) if "hashes" in row.lua else ""
    lo, hi = blocks or (1, chain.head)
    script = LUA % {"path": target.path, "head": chain.head, "ping": chain.ping, "lo": lo,
                    "hi": hi, "hashes": hashes, "seed": seed, "body": row.lua}
    if limit is not None:
        script += COUNTED_LUA % {"limit": limit}
    return script


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) used so far by a process and every live descendant (the
    workers of ``ethread serve --workers``), from /proc; 0.0 where /proc is not there."""
    total = 0.0
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            total += process_cpu_seconds(current)
            for task in Path(f"/proc/{current}/task").iterdir():
                stack.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, IndexError, ValueError):
            continue
    return total


def run_wrk(row: Row, target: Target, chain: PeerChain, concurrency: int, seconds: float,
            seed: int, requests: int | None = None,
            blocks: tuple[int, int] | None = None) -> tuple[float, int]:
    """(requests/s, answers that were not 200); with ``requests``, the rate of that many answers
    (fewer if ``seconds`` runs out first), timed from the first request to the last answer;
    random rows over ``blocks`` (default: the whole chain)."""
    threads = 1 if concurrency == 1 else 2
    limit = None if requests is None else max(1, requests // threads)
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(lua_script(row, target, chain, seed, limit, blocks))
    try:
        done = subprocess.run(
            ["wrk", "-t", str(threads), "-c", str(concurrency),
             "-d", f"{seconds}s", "--timeout", "30s", "-s", script.name,
             f"http://127.0.0.1:{target.port}"],
            capture_output=True, text=True, timeout=seconds + 60)
    finally:
        os.unlink(script.name)
    if limit is not None:
        counted = re.search(r"COUNTED (\d+) ([\d.]+) (\d+)", done.stdout)
        if counted is None or float(counted.group(2)) <= 0:
            raise SystemExit(f"wrk failed on {target.name}: {done.stdout}{done.stderr}")
        return int(counted.group(1)) / float(counted.group(2)), int(counted.group(3))
    rate = re.search(r"Requests/sec:\s+([\d.]+)", done.stdout)
    if rate is None:
        raise SystemExit(f"wrk failed on {target.name}: {done.stdout}{done.stderr}")
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", done.stdout)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)",
                       done.stdout)
    failed = int(bad.group(1)) if bad else 0
    if errors:
        failed += sum(int(g) for g in errors.groups())
    return float(rate.group(1)), failed


def run_python(row: Row, target: Target, chain: PeerChain, concurrency: int, seconds: float,
               seed: int, requests: int | None = None,
               blocks: tuple[int, int] | None = None) -> tuple[float, int]:
    import asyncio

    from bench_load import run_load

    rng = random.Random(seed)
    bodies = [row.python(rng, n, chain) for n in range(1, 50_001)]
    raw = [(f"POST {target.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(b)}\r\n\r\n").encode()
           + b for b in bodies]
    outcome = asyncio.run(run_load(target.port, raw, concurrency, seconds,
                                   10**9 if requests is None else requests))
    return outcome.rate, outcome.failures


def sample_check(row: Row, target: Target, chain: PeerChain) -> str | None:
    """What is wrong with a few of the row's answers, or None."""
    rng = random.Random(7)
    for n in range(1, 4):
        body = row.python(rng, n, chain)
        status, answer = target.post(body)
        if status != 200 or "result" not in answer or not row.check(answer["result"], chain):
            return f"{status} {str(answer)[:200]}"
    return None


# -- main ------------------------------------------------------------------------------------


@contextlib.contextmanager
def running(start: Callable[[], Target]) -> Iterator[Target]:
    target = start()
    try:
        yield target
    finally:
        target.stop()


MEMORY_VARIANTS: tuple[tuple[str, list[str], dict[str, str] | None], ...] = (
    ("memory", [], None),
    ("memory-plain", [], {"ETHREAD_SIMULATE_PLAIN": "1"}),
    ("metrics", ["--metrics"], None),
    ("asgi", ["--no-lean-http"], None),
    ("memory-noturns", ["--no-admission-turns"], None),
)
"""The chain executed and held in memory, as served and with one piece changed."""

STORE_VARIANTS: tuple[tuple[str, list[str]], ...] = (
    ("store", []),
    ("store-poll", ["--busy-poll-us", "250"]),
    ("store-nofair", ["--no-fair-accept"]),
    ("store-noshared", ["--no-shared-fragments"]),
)
"""The store server as served, and with one fast-path piece turned on or off."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--blocks", type=int, default=5001,
                        help="head of the chain (block 1 deploys, 2..head call)")
    parser.add_argument("--seconds", type=int, default=5,
                        help="per row, concurrency and round")
    parser.add_argument("--rounds", type=int, default=1,
                        help="measure each cell in this many turns, the targets alternating "
                             "(so that a slow minute of the machine falls on all of them)")
    parser.add_argument("--workdir", type=Path,
                        help="keep the chain and the store here for later runs "
                             "(default: a temporary directory)")
    parser.add_argument("--only", help="rows whose label contains this (or any of several "
                                       "texts separated by |)")
    parser.add_argument("--targets", default="anvil,bare,memory,store",
                        help="servers to load, of anvil, bare, memory, memory-plain (memory "
                             "with ETHREAD_SIMULATE_PLAIN=1: eth_simulateV1 on py-evm's own "
                             "classes and tries), metrics (memory with "
                             "--metrics), asgi (memory on uvicorn's ASGI path: --no-lean-http), "
                             "memory-noturns (memory with --no-admission-turns), store, "
                             "store-poll (the store with --busy-poll-us 250), store-nofair "
                             "(--no-fair-accept), store-noshared (--no-shared-fragments)")
    parser.add_argument("--requests", type=int, metavar="N",
                        help="cold reads: each cell sends N requests (at most --seconds) to an "
                             "ethread server started afresh for it, so that most reads find "
                             "nothing in the workers' caches; the rate is timed from the first "
                             "request to the last answer")
    parser.add_argument("--workers", type=int, default=2, help="ethread serve --workers")
    parser.add_argument("--engine", default="lmdb", choices=("lmdb", "leveldb"),
                        help="the store's engine (leveldb serves with one worker only)")
    parser.add_argument("--access-log", action="store_true", help="ethread logs each request")
    parser.add_argument("--cpu", action="store_true",
                        help="also print each server's CPU time per request (user + system, "
                             "all its processes): steadier than requests/s on a busy machine")
    parser.add_argument("--client", choices=("wrk", "python"),
                        default="wrk" if shutil.which("wrk") else "python")
    parser.add_argument("--serve-bare", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_bare is not None:
        serve_bare(args.serve_bare, args.workers)
        return
    if args.blocks < 102:
        parser.error("--blocks must be at least 102 (the log windows are 100 blocks)")
    if args.rounds < 1 or args.seconds < 1:
        parser.error("--rounds and --seconds must be at least 1")
    targets = args.targets.split(",")
    with contextlib.ExitStack() as stack:
        workdir = args.workdir or Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="ethread-vs-anvil-")))
        workdir.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        chain = build(workdir / "chain", args.blocks)
        print(f"chain: {chain.head} blocks, Ping at {chain.ping} "
              f"({time.perf_counter() - started:.0f} s)", flush=True)
        servers: dict[str, Target] = {}
        starters: dict[str, Callable[[], Target]] = {}

        def launch(name: str, start: Callable[[], Target]) -> None:
            """Start a server (again, with ``--requests``, before each cell) and stop whichever
            instance is running when the run ends."""
            starters[name] = start
            servers[name] = start()
            stack.callback(lambda: servers[name].stop())

        workers = args.workers if args.engine == "lmdb" else 1
        memory_args = ["--genesis", str(chain.genesis), "--blocks", str(chain.blocks),
                       "--no-verify-seals"]
        if "anvil" in targets:
            launch("anvil", lambda: start_anvil(chain))
        if "bare" in targets:
            launch("bare", lambda: start_bare(args.workers))
        for name, extra, env in MEMORY_VARIANTS:
            if name in targets:
                launch(name, functools.partial(start_ethread, name, [*memory_args, *extra],
                                               workdir, args.workers, args.access_log, 1800,
                                               env))
        for name, extra in STORE_VARIANTS:
            if name in targets:
                store_args = ["--db", str(ensure_store(chain, workdir, args.engine)), *extra]
                launch(name, functools.partial(start_ethread, name, store_args, workdir, workers,
                                               args.access_log, 120))
        run = run_wrk if args.client == "wrk" else run_python
        cold = [name for name in servers if name not in ("anvil", "bare")]
        """With ``--requests``, the ethread servers restarted before each cell: every worker
        starts with empty caches (anvil holds its whole chain in memory either way), then warms
        its code (and the pages a forked worker copies on first write) with the same row on
        the last third of the chain; the row then asks for the first two thirds."""
        cold_blocks: tuple[int, int] | None = None
        warm_blocks: tuple[int, int] | None = None
        if args.requests is not None:
            if args.client != "wrk":
                parser.error("--requests needs wrk")
            cold_blocks = (1, chain.head * 2 // 3)
            warm_blocks = (cold_blocks[1] + 1, chain.head)
        columns: list[str] = [name for name in ("anvil", *(name for name, _, _ in MEMORY_VARIANTS),
                                                *(name for name, _ in STORE_VARIANTS))
                              if name in servers]
        load = os.getloadavg()
        print(f"\n{os.cpu_count()} CPUs shared by the servers and the load generator "
              f"({args.client}); load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
              f"{args.seconds} s x {args.rounds} round(s) per row; ethread: {args.workers} workers (store: {workers}, "
              f"{args.engine}), *.ledger ledger, access log {'on' if args.access_log else 'off'}")
        header = f"{'requests/s':<34} {'c':>3}" + "".join(f" {n:>9}" for n in columns)
        ratios = [n for n in columns if n != "anvil" and "anvil" in servers]
        header += "".join(f" {n + '/anvil':>13}" for n in ratios)
        ethreads = [n for n in columns if n != "anvil"]
        if "bare" in servers:
            header += f" {'bare':>9}" + "".join(f" {n + '/bare':>12}" for n in ethreads)
        print(header)
        seed = random.randrange(1, 1 << 20)  # fresh bodies on every run
        for row in rows(chain):
            if args.only and not any(text in row.label for text in args.only.split("|")):
                continue
            for name in columns:
                problem = sample_check(row, servers[name], chain)
                if problem is not None:
                    print(f"{row.label}: {name} answers wrongly: {problem}")
            for concurrency in CONCURRENCY:
                rates: dict[str, float] = {}
                cpu: dict[str, float] = {}
                notes = []
                order = list(columns)
                if "bare" in servers and row.label.startswith("eth_chainId"):
                    order.append("bare")
                done = dict.fromkeys(order, 0.0)
                answers = dict.fromkeys(order, 0.0)
                used = dict.fromkeys(order, 0.0)
                failures = dict.fromkeys(order, 0)
                for _ in range(args.rounds):  # the targets take turns: both see the same minutes
                    for name in order:
                        seed += 1
                        if args.requests is not None and name in cold:
                            # a server that has served nothing of the measured blocks: started
                            # afresh, then warmed with the same row on the other blocks
                            servers[name].stop()
                            servers[name] = starters[name]()
                            run(row, servers[name], chain, concurrency, args.seconds, seed + 7,
                                args.requests, warm_blocks)
                        pid = servers[name].process.pid
                        before = tree_cpu_seconds(pid)
                        rate, failed = run(row, servers[name], chain, concurrency, args.seconds,
                                           seed, args.requests, cold_blocks)
                        used[name] += tree_cpu_seconds(pid) - before
                        done[name] += rate
                        answers[name] += rate * args.seconds if args.requests is None else \
                            min(args.requests, rate * args.seconds)
                        failures[name] += failed
                for name in order:
                    rates[name] = done[name] / args.rounds
                    cpu[name] = used[name] / answers[name] * 1e6 if answers[name] else 0.0
                    if failures[name]:
                        notes.append(f"{name}: {failures[name]} failed")
                line = f"{row.label:<34} {concurrency:>3}" + "".join(
                    f" {rates[n]:>9.0f}" for n in columns)
                line += "".join(f" {rates[n] / rates['anvil']:>13.2f}" if rates["anvil"]
                                else f" {'-':>13}" for n in ratios)
                if "bare" in rates:
                    line += f" {rates['bare']:>9.0f}" + "".join(
                        f" {rates[n] / rates['bare']:>12.2f}" for n in ethreads)
                if notes:
                    line += "  (" + "; ".join(notes) + ")"
                print(line, flush=True)
                if args.cpu:
                    line = f"{'  server CPU us/request':<34} {concurrency:>3}" + "".join(
                        f" {cpu[n]:>9.1f}" for n in columns)
                    line += " " * (14 * len(ratios))
                    if "bare" in cpu:
                        line += f" {cpu['bare']:>9.1f}"
                    print(line, flush=True)
        load = os.getloadavg()
        print(f"load average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
              f"the whole run took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
