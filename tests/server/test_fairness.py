"""Fair and bounded under abuse (issue 38): a forked chain's slow node never holds the event
loop; one key cannot fill the worker threads every key shares (its slow requests in flight
are bounded, the next is refused with -32005 and Retry-After, uncharged); a request's calls
together stop at the server's request deadline; a trace stops at the server's limit whatever
``timeout`` it asks for; and one key's flood leaves another key's cheap and slow calls
answered as usual."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from ethread.server.config import KeyConfig, NetworkConfig, ServiceLimits
from ethread.server.networks import open_network, service_context
from tests.support.fake_upstream import FakeUpstream, wait_seconds
from tests.support.server_harness import (
    ENDLESS,
    KEY,
    RETURN_ONE,
    call,
    demo_network,
    get,
    post,
    serve_in_thread,
    shared_demo,
    url_of,
)

OTHER = "other-key-0123456789"
TWO_KEYS = (KeyConfig(key=KEY), KeyConfig(key=OTHER))
ENDLESS_TRACE = call("debug_traceCall", [ENDLESS, "latest", {"tracer": "callTracer",
                                                              "timeout": "60s"}])
PROOF = call("eth_getProof", ["0x" + "11" * 20, ["0x0"], "latest"])


@pytest.fixture(scope="module")
def remote() -> Iterator[str]:
    with serve_in_thread(networks=[demo_network()]) as thread:
        yield url_of(thread)


def in_background(fn: Any) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(wait_seconds(fn)), daemon=True)
    thread.start()
    return thread, out


def test_a_forked_nodes_slow_answer_never_holds_the_event_loop(remote: str) -> None:
    with FakeUpstream(remote, pause=30) as upstream:
        limits = ServiceLimits(fork_timeout_seconds=4.0)
        network = open_network(NetworkConfig(name="fork", backend="fork", fork_url=upstream.url),
                               service_context_with(limits), limits=limits)
        upstream.affects = lambda request: "eth_getProof" in str(request)
        upstream.mode = "sleep"
        with serve_in_thread(networks=[network]) as thread:
            url = url_of(thread)
            stuck, answered = in_background(lambda: post(
                url, call("eth_call", [{"to": "0x" + "77" * 20}, "latest"]), timeout=60))
            assert not stuck.join(0.5) and stuck.is_alive()  # waiting for the node
            seconds, (status, _, answer) = wait_seconds(
                lambda: post(url, call("eth_chainId"), timeout=10))
            assert status == 200 and answer["result"] == hex(1337)
            assert seconds < 2.0  # answered while the eth_call waits, not after it
            health_status, _ = get(f"http://127.0.0.1:{thread.port}/health")
            assert health_status == 200
            assert stuck.is_alive()
            stuck.join(30)
            seconds, (status, _, answer) = answered[0]
    assert status == 200
    assert "did not answer within 4 s" in answer["error"]["message"]
    assert seconds < 10  # one deadline, not four tries of it


def test_a_forked_read_stops_waiting_at_the_request_deadline(remote: str) -> None:
    """A read outside any execution's time limit (the account a call is sent to) waits no
    longer than the request may run: the request's cancellation reaches the socket."""
    with FakeUpstream(remote, pause=60) as upstream:
        limits = ServiceLimits(fork_timeout_seconds=60.0, request_timeout_seconds=2.0)
        network = open_network(NetworkConfig(name="fork", backend="fork", fork_url=upstream.url),
                               service_context_with(limits), limits=limits)
        upstream.affects = lambda request: "eth_getProof" in str(request)
        upstream.mode = "sleep"
        with serve_in_thread(networks=[network], limits={"request_timeout_seconds": 2.0}) \
                as thread:
            seconds, (status, _, answer) = wait_seconds(lambda: post(
                url_of(thread), call("eth_getBalance", ["0x" + "78" * 20, "latest"]),
                timeout=60))
    assert status == 200
    assert answer["error"] == {"code": -32000, "message": "request timeout: the request ran "
                               "past the server's limit of 2 s"}, answer
    assert seconds < 10  # not the node's 60 s


def service_context_with(limits: ServiceLimits) -> Any:
    from ethread.server.config import ServerConfig

    return service_context(ServerConfig(limits=limits))


def test_a_key_at_its_limit_of_slow_requests_is_refused_uncharged_others_are_not(
        remote: str) -> None:
    limits = {"slow_requests_per_key": 2, "call_timeout_seconds": 3.0}
    with serve_in_thread(networks=[demo_network()], keys=TWO_KEYS, limits=limits) as thread:
        service = thread.prepared.service
        endless = call("eth_call", [ENDLESS, "latest"])
        running = [in_background(lambda: post(url_of(thread), endless))[0] for _ in range(2)]
        assert wait_until_busy(service, 2)
        before = usage(service, KEY)
        status, headers, answer = post(url_of(thread), endless)
        assert status == 429 and headers["retry-after"] == "1"
        assert answer["error"]["code"] == -32005
        assert "too many slow requests in flight for this API key: at most 2" in \
            answer["error"]["message"]
        assert usage(service, KEY) == before  # not charged
        # cheap calls of the same key are not slow ones; other keys are not held at all
        assert post(url_of(thread), call("eth_chainId"))[0] == 200
        assert post(url_of(thread, OTHER), call("eth_call", [RETURN_ONE, "latest"]))[0] == 200
        assert post(url_of(thread, OTHER), PROOF)[0] == 200
        for thread_ in running:
            thread_.join(30)
        assert "result" in post(url_of(thread), call("eth_call", [RETURN_ONE, "latest"]))[2]


def wait_until_busy(service: Any, count: int) -> bool:
    from tests.support.server_harness import wait_until

    return wait_until(lambda: service.execution.busy(
        service.keys.lookup(KEY).key_id) >= count, 10)


def usage(service: Any, key: str) -> int:
    api_key = service.keys.lookup(key)
    return int(service.billing.ledger.used(api_key.key_id))


def test_a_batchs_calls_stop_together_at_the_request_deadline() -> None:
    limits = {"request_timeout_seconds": 1.0, "call_timeout_seconds": 4.0}
    with serve_in_thread(networks=[demo_network()], limits=limits) as thread:
        batch = [call("eth_call", [ENDLESS, "latest"], i) for i in range(4)]
        seconds, (status, _, answers) = wait_seconds(lambda: post(url_of(thread), batch))
    assert status == 200 and len(answers) == 4
    for answer in answers:
        assert answer["error"]["code"] == -32000
        assert answer["error"]["message"] == ("request timeout: the batch ran past the server's "
                                              "limit of 1 s")
    assert seconds < 4  # not 4 x 4 s


def test_a_trace_stops_at_the_servers_limit_whatever_it_asks() -> None:
    backend = shared_demo().chain.backend  # (a network made from the server's settings)
    with serve_in_thread(backend, limits={"trace_timeout_seconds": 1.0}) as thread:
        seconds, (status, _, answer) = wait_seconds(lambda: post(url_of(thread), ENDLESS_TRACE))
    assert status == 200
    assert answer["error"]["message"] == "execution timeout", answer
    assert seconds < 10  # not the 60 s it asked for


def test_one_keys_flood_leaves_another_keys_calls_answered_as_usual() -> None:
    limits = {"slow_requests_per_key": 2, "trace_timeout_seconds": 2.0,
              "request_timeout_seconds": 20.0}
    flood = [ENDLESS_TRACE | {"id": i} for i in range(5)]
    with serve_in_thread(networks=[demo_network()], keys=TWO_KEYS, limits=limits) as thread:
        stop = threading.Event()
        refused = []

        def flooder() -> None:
            while not stop.is_set():
                try:
                    status = post(url_of(thread), flood, timeout=60)[0]
                except OSError:  # (the server stopping)
                    return
                refused.append(status == 429)

        flooders = [threading.Thread(target=flooder, daemon=True) for _ in range(20)]
        for each in flooders:
            each.start()
        assert wait_until_busy(thread.prepared.service, 2)
        try:
            for body in (call("eth_chainId"), PROOF, call("eth_call", [RETURN_ONE, "latest"])):
                seconds, (status, _, answer) = wait_seconds(
                    lambda body=body: post(url_of(thread, OTHER), body, timeout=60))
                assert status == 200 and "result" in answer, answer
                assert seconds < 3.0, body["method"]  # not behind 20 batches of 10 s
        finally:
            stop.set()
        assert any(refused)  # the flood's surplus was turned away
