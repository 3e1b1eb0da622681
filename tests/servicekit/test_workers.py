"""The worker supervisor (servicekit/workers.py) with stand-in workers: small Python processes that
report ready on the pipe the supervisor gives them, and note SIGTERM in a file before exiting.

Real services under the supervisor: tests/wallet/test_workers.py, tests/dealer/test_workers_processes.py."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from servicekit.config import ServerConfig
from servicekit.testing import config_for_tests
from servicekit.workers import Supervisor, env_name, port_options, worker_count, worker_index

# Reports ready (its pid, on the supervisor's pipe), then waits; on SIGTERM writes "drained-<index>"
# holding the worker count and the restarts it was told to count (FELT_RESTARTS).
_STAND_IN = """
import os, signal, sys, time
index = os.environ["FELT_ECHO_WORKER_INDEX"]
def drain(*_):
    told = os.environ["FELT_ECHO_WORKERS"] + ":" + os.environ["FELT_RESTARTS"]
    open(os.path.join(sys.argv[1], "drained-" + index), "w").write(told)
    sys.exit(0)
signal.signal(signal.SIGTERM, drain)
fd = int(os.environ["FELT_ECHO_READY_FD"])
os.write(fd, str(os.getpid()).encode()); os.close(fd)
while True:
    time.sleep(0.05)
"""


def _config(tmp_path: Path) -> ServerConfig:
    return ServerConfig("echo", "127.0.0.1", 0, None, tmp_path, shutdown_grace_seconds=2.0)


def _wait(predicate: object, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_supervisor_starts_n_restarts_the_dead_and_drains_all(tmp_path: Path) -> None:
    supervisor = Supervisor(_config(tmp_path), 2, command=[sys.executable, "-c", _STAND_IN, str(tmp_path)])
    watcher = threading.Thread(target=supervisor.watch)
    try:
        supervisor.start()
        assert supervisor.port > 0 and supervisor.address.endswith(f":{supervisor.port}")
        first = [w.process.pid for w in supervisor.workers]
        assert [w.index for w in supervisor.workers] == [0, 1] and all(
            w.process.poll() is None for w in supervisor.workers
        )
        watcher.start()
        os.kill(first[0], signal.SIGKILL)
        _wait(lambda: supervisor.workers[0].process.pid != first[0])
        assert supervisor.workers[0].index == 0 and supervisor.workers[1].process.pid == first[1]
        _wait(lambda: supervisor.workers[0].process.poll() is None)
    finally:
        supervisor.stopping.set()
        if watcher.is_alive():
            watcher.join()
        supervisor.stop()
    # SIGTERM reached every live worker, which saw the worker count in its environment; the restarted
    # one was told to count one restart (felt_service_restarts_total), the other none.
    assert sorted(p.name for p in tmp_path.glob("drained-*")) == ["drained-0", "drained-1"]
    assert (tmp_path / "drained-0").read_text() == "2:1"
    assert (tmp_path / "drained-1").read_text() == "2:0"
    assert all(w.process.returncode == 0 for w in supervisor.workers)


def test_a_worker_that_never_serves_fails_the_start(tmp_path: Path) -> None:
    supervisor = Supervisor(_config(tmp_path), 2, command=[sys.executable, "-c", "raise SystemExit(3)"])
    try:
        with pytest.raises(RuntimeError, match="exited with code 3"):
            supervisor.start()
    finally:
        supervisor.stop()


def test_the_port_is_reserved_for_the_workers_only(tmp_path: Path) -> None:
    supervisor = Supervisor(_config(tmp_path), 2, command=[sys.executable, "-c", ""])
    try:
        import socket

        with socket.socket() as other, pytest.raises(OSError):
            other.bind(("127.0.0.1", supervisor.port))  # no SO_REUSEPORT: refused
    finally:
        supervisor.stop()


def test_worker_settings_and_options() -> None:
    assert env_name("dealer", "WORKERS") == "FELT_DEALER_WORKERS"
    lone = config_for_tests("dealer", Path("/tmp"))
    assert worker_index(lone) is None and worker_count(lone) == 1 and port_options(lone) == []
    worker = lone.with_overrides(workers=3, worker_index=2)
    assert worker_index(worker) == 2 and worker_count(worker) == 3
    assert port_options(worker) == [("grpc.so_reuseport", 1)]
