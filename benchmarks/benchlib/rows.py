"""Rows of requests against a peer chain, made the same way in Lua (for wrk) and in Python (for
:mod:`benchlib.client`, and for checking a few answers before a row is measured), and a row
run against a :class:`~benchlib.targets.Target` by either client."""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchlib import wrk
from benchlib.client import http_request, run_load
from benchlib.peer_chain import PeerChain
from benchlib.targets import Target


@dataclass(frozen=True)
class Row:
    label: str
    lua: str
    """Lua returning one request body (globals: n, the request counter; head; ping; hashes)."""
    python: Callable[[random.Random, int, PeerChain], bytes]
    check: Callable[[Any, PeerChain], bool] = lambda result, chain: result is not None


def body(method: str, params: str, ident: int | str = 1) -> str:
    """A JSON-RPC request with ``params`` given as JSON text."""
    return f'{{"jsonrpc":"2.0","id":{ident},"method":"{method}","params":{params}}}'


def lua_body(method: str, params: str) -> str:
    """A Lua expression for a request numbered ``n``, ``params`` a Lua expression too."""
    return (f"'{{\"jsonrpc\":\"2.0\",\"id\":' .. n .. ',\"method\":\"{method}\","
            f"\"params\":' .. {params} .. '}}'")


def distinct_call_row() -> Row:
    """eth_call to Ping with calldata no request has sent before (no cache can answer it)."""
    def distinct_call(rng: random.Random, n: int, c: PeerChain) -> bytes:
        data = f"0x{'0' * 48}{rng.getrandbits(32):08x}{n:08x}"
        return body("eth_call", f'[{{"to":"{c.ping}","data":"{data}"}},"latest"]', n).encode()

    return Row("eth_call, distinct",
               lua_body("eth_call", "'[{\"to\":\"' .. ping .. '\",\"data\":\"0x' .. "
                                    "string.rep('0', 48) .. string.format('%08x%08x', seed, n) .. "
                                    "'\"},\"latest\"]'"),
               distinct_call,
               lambda result, c: isinstance(result, str) and len(result) == 66)


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


def run_wrk(row: Row, target: Target, chain: PeerChain, concurrency: int, seconds: float,
            seed: int, requests: int | None = None,
            blocks: tuple[int, int] | None = None) -> tuple[float, int]:
    """(requests/s, answers that were not 200); with ``requests``, the rate of that many answers
    (fewer if ``seconds`` runs out first), timed from the first request to the last answer;
    random rows over ``blocks`` (default: the whole chain)."""
    if requests is not None:
        answered, took, refused, _ = counted_wrk(row, target, chain, concurrency, seconds, seed,
                                                 requests, blocks)
        return answered / took, refused
    output = wrk.run(lua_script(row, target, chain, seed, None, blocks), target.port,
                     concurrency, seconds, "--timeout", "30s")
    rate = wrk.rate(output)
    if rate is None:
        raise SystemExit(f"wrk failed on {target.name}: {output}")
    return rate, wrk.failures(output)


def counted_wrk(row: Row, target: Target, chain: PeerChain, concurrency: int, seconds: float,
                seed: int, requests: int, blocks: tuple[int, int] | None = None,
                *options: str) -> tuple[int, float, int, str]:
    """wrk on the row until ``requests`` answers (each thread stopping after its share) or
    ``seconds``: (the answers, the seconds from the first request to the last answer, the
    answers that were not 200, wrk's output); ``options``: more of wrk's options."""
    limit = max(1, requests // wrk.threads(concurrency))
    output = wrk.run(lua_script(row, target, chain, seed, limit, blocks), target.port,
                     concurrency, seconds, "--timeout", "30s", *options)
    counted = re.search(r"COUNTED (\d+) ([\d.]+) (\d+)", output)
    if counted is None or float(counted.group(2)) <= 0:
        raise SystemExit(f"wrk failed on {target.name}: {output}")
    return int(counted.group(1)), float(counted.group(2)), int(counted.group(3)), output


def run_python(row: Row, target: Target, chain: PeerChain, concurrency: int, seconds: float,
               seed: int, requests: int | None = None,
               blocks: tuple[int, int] | None = None) -> tuple[float, int]:
    """As :func:`run_wrk`, through :mod:`benchlib.client` (50,000 bodies made beforehand; the
    blocks of random rows are the whole chain's)."""
    rng = random.Random(seed)
    bodies = [row.python(rng, n, chain) for n in range(1, 50_001)]
    raw = [http_request(b, target.path) for b in bodies]
    outcome = asyncio.run(run_load(target.port, raw, concurrency, seconds,
                                   10**9 if requests is None else requests))
    return outcome.rate, outcome.failures


def sample_check(row: Row, target: Target, chain: PeerChain) -> str | None:
    """What is wrong with a few of the row's answers, or None."""
    rng = random.Random(7)
    for n in range(1, 4):
        request = row.python(rng, n, chain)
        status, answer = target.post(request)
        if status != 200 or "result" not in answer or not row.check(answer["result"], chain):
            return f"{status} {str(answer)[:200]}"
    return None
