"""The suites' services are started so that a process busy with gRPC can start them reliably, and so that
they end with the test process."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Iterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.suites.stack import DIE_WITH_THE_SUITE, spawn


@pytest.fixture
def grpc_busy() -> Iterator[None]:
    """This process's gRPC pollers at work: threads calling a port nobody serves."""
    stop = threading.Event()

    def call() -> None:
        with grpc.insecure_channel("127.0.0.1:1") as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            while not stop.is_set():
                with contextlib.suppress(grpc.RpcError):
                    stub.Check(health_pb2.HealthCheckRequest(), timeout=0.01)

    threads = [threading.Thread(target=call, daemon=True) for _ in range(3)]
    for thread in threads:
        thread.start()
    try:
        yield
    finally:
        stop.set()
        for thread in threads:
            thread.join()


def test_no_started_process_dies_before_it_runs_while_grpc_is_busy(grpc_busy: None) -> None:
    """A CI run lost a suite's platform to a child that aborted between fork and exec (gRPC's fork handlers
    restarted the pollers in it, then close_fds closed their epoll descriptor): about 2 % of children did
    when a preexec_fn made Python fork. `spawn` starts none that way."""
    codes = []
    for _ in range(300):
        proc = spawn(["true"], os.environ, subprocess.PIPE)
        output, _ = proc.communicate(timeout=10)
        codes.append((proc.returncode, output[-200:]))
    assert [c for c in codes if c[0] != 0] == []


@pytest.mark.skipif(not DIE_WITH_THE_SUITE, reason="util-linux's setpriv is not installed")
def test_a_started_process_ends_when_the_thread_that_started_it_does() -> None:
    """PR_SET_PDEATHSIG (setpriv --pdeathsig TERM): a suite killed by its timeout leaves no service behind."""
    started: list[subprocess.Popen[bytes]] = []

    def start() -> None:
        proc = spawn(["sh", "-c", "echo ready; exec sleep 30"], os.environ, subprocess.PIPE)
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"  # its death signal is set
        started.append(proc)

    thread = threading.Thread(target=start)
    thread.start()
    thread.join()
    assert started[0].wait(timeout=10) == -15  # SIGTERM
