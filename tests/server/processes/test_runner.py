"""One serving process (``ethread.server.processes.runner``) as ``ethread serve`` runs it: SIGTERM
answers the work in flight and exits."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tests.support.paths import REPO
from tests.support.server_harness import (
    ENDLESS,
    ServeProcess,
    call,
    post,
)


def test_sigterm_answers_the_work_in_flight_and_exits(tmp_path: Any) -> None:
    server = ServeProcess(["--call-timeout", "0", "--ledger", ":memory:", "--no-access-log"],
                          cwd=REPO)
    url = f"http://127.0.0.1:{server.port}/v3/ethread-demo-key"
    with ThreadPoolExecutor(2) as pool:
        pending = [pool.submit(post, url, call("eth_call", [ENDLESS, "latest"], i), timeout=60)
                   for i in range(2)]
        time.sleep(0.5)
        started = time.monotonic()
        status, stderr = server.stop()
        stopped = time.monotonic() - started
        answers = [p.result() for p in pending]
    assert status == 0, stderr[-2000:]
    for answer_status, headers, answer in answers:
        assert answer_status == 200 and headers["content-type"] == "application/json"
        assert answer["error"] == {"code": -32000,
                                   "message": "request cancelled: the server is shutting down"}
    print(f"SIGTERM with two endless calls in flight: stopped in {stopped:.2f} s")
