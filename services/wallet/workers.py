"""Several wallet processes behind one gRPC port (FELT_WALLET_WORKERS=N > 1).

The wallet keeps no state outside its database, so N worker processes can serve the same port: each
binds it with SO_REUSEPORT and the kernel spreads incoming connections over them (one gRPC channel is
one connection, so one client channel always talks to one worker). Python's GIL caps one process at
about one core; N processes use N.

The supervisor (this module, run by `felt serve wallet`) owns the port and the metrics endpoint:
- it binds the port first (SO_REUSEPORT, never listening) so port 0 resolves to one port for all;
- it starts N workers (`felt serve wallet` with FELT_WALLET_WORKER_INDEX=i), each a whole wallet with
  its own store (SQLite: its own writer on the shared WAL database, group commits per process;
  PostgreSQL: its own pool), health service and hold sweeper;
- it announces the address only once every worker is serving;
- it serves /metrics for all workers at once (prometheus-client multiprocess mode: each worker writes
  its samples to files in PROMETHEUS_MULTIPROC_DIR, the supervisor sums them);
- a worker that dies is started again; SIGTERM or SIGINT drains every worker, then exits.
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from servicekit.config import ServerConfig
from servicekit.logging import get_logger

from services.wallet.config import WORKER_INDEX_ENV

READY_FD_ENV = "FELT_WALLET_READY_FD"  # a worker writes its pid there once it serves
SUPERVISOR_ENV = "FELT_WALLET_SUPERVISOR_PID"  # a worker whose supervisor is gone stops itself
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
READY_TIMEOUT_SECONDS = 60.0
RESTART_DELAY_SECONDS = 1.0

Announce = Callable[[str, int | None], None]


@dataclass
class Worker:
    index: int
    process: subprocess.Popen[bytes]


class Supervisor:
    def __init__(self, config: ServerConfig, workers: int) -> None:
        self.config = config
        self.count = workers
        self.log = get_logger(service="wallet", role="supervisor")
        self.stopping = threading.Event()
        self.workers: list[Worker] = []
        self._reservation = _reserve_port(config.host, config.port)
        self.port = int(self._reservation.getsockname()[1])
        own_dir = os.environ.get(MULTIPROC_ENV)
        # An operator-given directory is theirs to clear between runs; ours is fresh and removed at exit.
        self._metrics_dir = (
            Path(own_dir) if own_dir else Path(tempfile.mkdtemp(prefix="felt-wallet-metrics-"))
        )
        self._owns_metrics_dir = not own_dir
        self.metrics_port: int | None = None
        self._metrics_server: object | None = None

    @property
    def address(self) -> str:
        return f"{self.config.host}:{self.port}"

    def _spawn(self, index: int) -> tuple[Worker, int]:
        read_fd, write_fd = os.pipe()
        env = {
            **os.environ,
            "FELT_WALLET_WORKERS": "1",
            WORKER_INDEX_ENV: str(index),
            READY_FD_ENV: str(write_fd),
            SUPERVISOR_ENV: str(os.getpid()),
            MULTIPROC_ENV: str(self._metrics_dir),
            "FELT_DATA_DIR": str(self.config.data_dir),
        }
        command = [
            sys.executable, "-m", "felt", "serve", "wallet",
            "--host", self.config.host, "--port", str(self.port),
        ]  # fmt: skip
        # stdout/stderr are inherited: the workers' log lines go where the supervisor's go.
        process = subprocess.Popen(command, env=env, pass_fds=(write_fd,))
        os.close(write_fd)
        return Worker(index, process), read_fd

    def _await_ready(self, pending: dict[int, Worker]) -> None:
        """Wait until every worker in `pending` (read end of its ready pipe -> worker) serves."""
        selector = selectors.DefaultSelector()
        for fd in pending:
            selector.register(fd, selectors.EVENT_READ)
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        try:
            while pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError(
                        f"wallet workers {sorted(w.index for w in pending.values())} not ready"
                    )
                for key, _ in selector.select(timeout=left):
                    fd = int(key.fd)
                    data = os.read(fd, 64)
                    worker = pending.pop(fd)
                    selector.unregister(fd)
                    os.close(fd)
                    if not data:
                        raise RuntimeError(
                            f"wallet worker {worker.index} exited with code {worker.process.wait()}"
                        )
                    self.log.info("worker_ready", worker=worker.index, pid=worker.process.pid)
        finally:
            for fd in list(pending):
                os.close(fd)
            selector.close()

    def start(self) -> None:
        if self._owns_metrics_dir:
            for stale in self._metrics_dir.glob("*.db"):
                stale.unlink()
        pending: dict[int, Worker] = {}
        for index in range(self.count):
            worker, fd = self._spawn(index)
            self.workers.append(worker)
            pending[fd] = worker
        self._await_ready(pending)
        if self.config.metrics_port is not None:
            self._start_metrics(self.config.metrics_port)

    def _start_metrics(self, port: int) -> None:
        import prometheus_client
        from prometheus_client import multiprocess

        registry = prometheus_client.CollectorRegistry()
        multiprocess.MultiProcessCollector(registry, path=str(self._metrics_dir))
        server, _thread = prometheus_client.start_http_server(port, addr=self.config.host, registry=registry)
        self._metrics_server = server
        self.metrics_port = int(server.server_port)

    def watch(self) -> None:
        """Until asked to stop: start again any worker that exits."""
        while not self.stopping.wait(0.2):
            for slot, worker in enumerate(self.workers):
                code = worker.process.poll()
                if code is None or self.stopping.is_set():
                    continue
                self.log.error("worker_exited", worker=worker.index, pid=worker.process.pid, code=code)
                _mark_dead(worker.process.pid)
                if self.stopping.wait(RESTART_DELAY_SECONDS):
                    return
                try:
                    replacement, fd = self._spawn(worker.index)
                    self.workers[slot] = replacement
                    self._await_ready({fd: replacement})
                except (OSError, RuntimeError) as failed:  # try again on the next round
                    self.log.error("worker_restart_failed", worker=worker.index, error=str(failed))

    def stop(self) -> None:
        """Drain every worker (each gets SIGTERM and its own grace period), then release everything."""
        self.stopping.set()
        for worker in self.workers:
            if worker.process.poll() is None:
                worker.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + self.config.shutdown_grace_seconds + 10.0
        for worker in self.workers:
            try:
                worker.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                worker.process.kill()
                worker.process.wait()
        if self._metrics_server is not None:
            self._metrics_server.shutdown()  # type: ignore[attr-defined]
            self._metrics_server.server_close()  # type: ignore[attr-defined]
        self._reservation.close()
        if self._owns_metrics_dir:
            shutil.rmtree(self._metrics_dir, ignore_errors=True)


def _reserve_port(host: str, port: int) -> socket.socket:
    """Bind (not listen) host:port with SO_REUSEPORT: fixes the port the workers share, and fails
    early if another program holds it."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def _mark_dead(pid: int) -> None:
    from prometheus_client import multiprocess

    if os.environ.get(MULTIPROC_ENV):
        multiprocess.mark_process_dead(pid)


def supervise(config: ServerConfig, workers: int, announce: Announce) -> int:
    """Run `workers` wallet processes on one port in the foreground until SIGTERM or SIGINT."""
    supervisor = Supervisor(config, workers)

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        supervisor.log.info("signal", signal=signal.Signals(signum).name)
        supervisor.stopping.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    try:
        supervisor.start()
        supervisor.log.info("started", address=supervisor.address, workers=workers)
        announce(supervisor.address, supervisor.metrics_port)
        supervisor.watch()
    except RuntimeError as failed:
        supervisor.log.error("workers_failed", error=str(failed))
        return 1
    finally:
        supervisor.stop()
    return 0


def report_ready() -> None:
    """In a worker: tell the supervisor this process serves, and stop if the supervisor goes away."""
    fd = os.environ.get(READY_FD_ENV)
    if fd is not None:
        os.write(int(fd), f"{os.getpid()}\n".encode())
        os.close(int(fd))
    supervisor = os.environ.get(SUPERVISOR_ENV)
    if supervisor is not None:
        threading.Thread(target=_watch_supervisor, args=(int(supervisor),), daemon=True).start()


def _watch_supervisor(supervisor_pid: int) -> None:
    # Reparented (the supervisor was killed outright): drain like on SIGTERM rather than linger.
    while os.getppid() == supervisor_pid:
        time.sleep(1.0)
    os.kill(os.getpid(), signal.SIGTERM)
