"""``ethread serve --workers N``: one supervisor, N worker processes on the same sockets
(docs/scaling.md, "Workers on one machine"; docs/server.md, "Workers: built once, then forked").

The supervisor validates the configuration, checks the ledger, builds every network and binds
the sockets, then forks. Each worker inherits the sockets (:mod:`.fair_accept`) and the chains
(copy-on-write), and opens what must not cross a fork: its ledger connection, thread pools,
event loop, LMDB environment, Era1 files.

A worker that exits is replaced at once (one dying within :data:`QUICK_DEATH_SECONDS` after a
growing pause); SIGTERM or SIGINT stops the workers gracefully, killing those still running
after :data:`STOP_SECONDS`; on Linux a worker whose supervisor dies gets SIGTERM. The
supervisor runs no threads and no event loop: it waits for signals with ``sigtimedwait``.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

from ...backend import Closeable
from ..metrics import remove_directory
from ..networks import Network, open_network, service_context
from ..workers_board import WorkerBoard
from .runner import (
    GRACEFUL_SHUTDOWN_SECONDS,
    Listening,
    Stopped,
    assemble,
    settle_heap,
    stop_requested,
)
from .shared_fragments import SharedFragmentStore, make_directory

log = logging.getLogger("ethread.workers")

QUICK_DEATH_SECONDS = 2.0
"""A worker that dies sooner than this after starting is restarted after a pause."""
MAX_RESTART_PAUSE = 10.0
STOP_SECONDS = GRACEFUL_SHUTDOWN_SECONDS + 5.0
"""How long a stop waits for the workers' graceful shutdown before killing them."""
REOPENED_IN_WORKERS = ("era", "db")
"""Backends each worker opens again after the fork: they hold open files (an LMDB
environment's reader slots carry the pid that opened it, and a killed worker's would never be
reclaimed). Every other network is built once in the supervisor and inherited."""

_WATCHED = {signal.SIGCHLD, signal.SIGTERM, signal.SIGINT}
_STOPPING = {signal.SIGTERM, signal.SIGINT}


class Supervisor:
    """Starts, watches and stops ``count`` workers serving ``listening``."""

    def __init__(self, listening: Listening, count: int) -> None:
        self.listening = listening
        self.count = count
        self.board = WorkerBoard(count)
        self.shared = (make_directory()
                       if count > 1 and listening.config.shared_fragments else None)
        """Where the workers share the answers they decoded (:mod:`.shared_fragments`)."""
        self._pids: dict[int, int] = {}
        """slot -> pid of the worker in that slot."""
        self._started: dict[int, float] = {}
        self._pause: dict[int, float] = {}
        self._due: dict[int, float] = {}
        """slot -> when its replacement starts."""
        self._restarts: Any = None
        if listening.metrics_dir is not None:
            from ..metrics import worker_restarts

            self._restarts = worker_restarts(listening.metrics_dir)
        for network in listening.networks:
            if network.info.get("backend") in REOPENED_IN_WORKERS and isinstance(
                    network.backend, Closeable):
                network.backend.close()  # index built; each worker opens its own handles

    def run(self) -> int:
        """Serve until SIGTERM or SIGINT; 0 after every worker has stopped."""
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, _WATCHED)
        try:
            for slot in range(self.count):
                self._start(slot)
            while True:
                info = signal.sigtimedwait(_WATCHED, self._wait_time())
                if info is not None and info.si_signo in _STOPPING:
                    log.info("stopping %d worker(s)", len(self._pids))
                    self._stop()
                    return 0
                self._reap(replace_them=True)
                self._start_due()
        finally:
            while signal.sigtimedwait(_WATCHED, 0) is not None:
                pass  # a second Ctrl-C during the stop must not surface after it
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
            self.listening.close()
            remove_directory(self.shared)

    # -- starting and replacing ----------------------------------------------------------------

    def _start(self, slot: int) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            _worker(self.listening, self.board, slot, parent, self.shared)
        self._pids[slot] = pid
        self._started[slot] = time.monotonic()
        log.info("worker %d started (pid %d)", slot + 1, pid)

    def _reap(self, *, replace_them: bool) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            slot = next((s for s, p in self._pids.items() if p == pid), None)
            if slot is None:
                continue
            del self._pids[slot]
            self.board.mark(slot, False)
            code = os.waitstatus_to_exitcode(status)
            how = (f"was killed by {signal.Signals(-code).name}" if code < 0
                   else f"exited with status {code}")
            if not replace_them:
                log.info("worker %d (pid %d) %s", slot + 1, pid, how)
                continue
            lived = time.monotonic() - self._started[slot]
            if lived >= QUICK_DEATH_SECONDS:
                self._pause[slot] = 0.0
            else:
                self._pause[slot] = min(MAX_RESTART_PAUSE,
                                        max(0.5, 2 * self._pause.get(slot, 0.0)))
            self._due[slot] = time.monotonic() + self._pause[slot]
            if self._restarts is not None:
                self._restarts.inc()
            log.warning("worker %d (pid %d) %s; %s", slot + 1, pid, how,
                        "replacing it" if not self._pause[slot]
                        else f"replacing it in {self._pause[slot]:.1f} s")

    def _start_due(self) -> None:
        now = time.monotonic()
        for slot, when in sorted(self._due.items()):
            if when <= now:
                del self._due[slot]
                self._start(slot)

    def _wait_time(self) -> float:
        if not self._due:
            return 5.0
        return max(0.0, min(self._due.values()) - time.monotonic())

    # -- stopping ------------------------------------------------------------------------------

    def _stop(self) -> None:
        self._due.clear()
        for pid in self._pids.values():
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_SECONDS
        while self._pids and time.monotonic() < deadline:
            signal.sigtimedwait({signal.SIGCHLD}, 0.1)
            self._reap(replace_them=False)
        for slot, pid in list(self._pids.items()):
            log.warning("worker %d (pid %d) did not stop in %.0f s: killing it", slot + 1, pid,
                        STOP_SECONDS)
            _signal(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            del self._pids[slot]
            self.board.mark(slot, False)


def _signal(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signum)


# -- a worker ----------------------------------------------------------------------------------


def _worker(listening: Listening, board: WorkerBoard, slot: int, parent: int,
            shared: Path | None) -> NoReturn:
    """The body of a forked worker: never returns to the supervisor's code."""
    code = 1
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for signum in _STOPPING:
            signal.signal(signum, stop_requested)  # uvicorn restores and re-raises these
        _die_with(parent)
        networks = [_reopened(network, listening) for network in listening.networks]
        if shared is not None:
            _share_fragments(networks, shared)
        prepared = assemble(replace(listening, networks=networks), board, slot)
        settle_heap()
        prepared.run()
        code = 0
    except Stopped:
        code = 0
    except BaseException:
        log.exception("worker %d failed", slot + 1)
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _reopened(network: Network, listening: Listening) -> Network:
    if network.info.get("backend") not in REOPENED_IN_WORKERS:
        return network
    config = next(n for n in listening.config.networks if n.name == network.name)
    reopened = open_network(config, service_context(listening.config))
    reopened.port = network.port  # the port actually bound (0 resolved)
    return reopened


def _share_fragments(networks: list[Network], directory: Path) -> None:
    """Give each network's fragment cache the workers' shared store (opened after the fork)."""
    try:
        store = SharedFragmentStore(directory)
    except Exception as exc:
        log.error("the workers' shared answers in %s cannot be opened (%s); each worker "
                  "answers from its own caches", directory, exc)
        return
    for network in networks:
        fragments = network.dispatcher.context.fragments
        if fragments is not None:
            fragments.shared = store.for_network(network.name)


def _die_with(parent: int) -> None:
    """Linux: SIGTERM this worker when the supervisor dies, so that no orphan keeps serving."""
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGTERM), 0, 0, 0)
    if os.getppid() != parent:
        raise Stopped


def supervise(listening: Listening, count: int) -> int:
    """Run ``count`` workers on ``listening`` until SIGTERM/SIGINT."""
    return Supervisor(listening, count).run()
