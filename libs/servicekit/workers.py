"""Several processes of one service behind one gRPC port (FELT_<SERVICE>_WORKERS=N > 1).

Python's GIL caps one process at about one core; N worker processes use N. Each worker binds the same
port with SO_REUSEPORT and the kernel spreads incoming *connections* over them (one gRPC channel is one
connection, so one client channel always talks to one worker).

The supervisor (`felt serve <service>` when N > 1) owns the port and the metrics endpoint:
- it binds the port first (SO_REUSEPORT, never listening) so port 0 resolves to one port for all;
- it starts N workers (`felt serve <service>` with FELT_<SERVICE>_WORKER_INDEX=i), each a whole
  service with its own health service;
- it announces the address only once every worker is serving (each writes to a pipe when it is);
- it serves /metrics for all workers at once (prometheus-client multiprocess mode: each worker writes
  its samples to files in PROMETHEUS_MULTIPROC_DIR, the supervisor sums them);
- a worker that dies is started again (same index); SIGTERM or SIGINT drains every worker, then exits.

Services opt in with `serve()` below (wallet, dealer); what a worker shares with its siblings (a
database, nothing at all) is the service's business.
"""

from __future__ import annotations

import faulthandler
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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import FrameType
from typing import Any

from servicekit import auth, metrics
from servicekit.config import ServerConfig, positive_int, setting
from servicekit.logging import get_logger
from servicekit.server import ServiceSpec, serve_forever

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
READY_TIMEOUT_SECONDS = 60.0
RESTART_DELAY_SECONDS = 1.0
REUSEPORT = ("grpc.so_reuseport", 1)

# announce(address, internal address, metrics port): the ports serve, tell the user (felt serve).
Announce = Callable[[str, str, int | None], None]


def env_name(service: str, suffix: str) -> str:
    """FELT_<SERVICE>_<SUFFIX>: WORKERS, WORKER_INDEX (set by the supervisor), READY_FD, SUPERVISOR_PID."""
    return f"FELT_{service.upper()}_{suffix}"


def worker_settings(service: str) -> dict[str, Any]:
    """The two settings every service with workers reads (put them in its `load_config` overrides)."""
    return {
        "workers": setting(env_name(service, "WORKERS"), 1, parse=positive_int),
        # Set by the supervisor in each worker's environment, never by hand.
        "worker_index": setting(env_name(service, "WORKER_INDEX"), None, parse=int),
    }


def worker_index(config: ServerConfig) -> int | None:
    """This process's index among its service's workers; None when it is not a worker."""
    index = config.extra.get("worker_index")
    return None if index is None else int(index)


def worker_count(config: ServerConfig) -> int:
    return int(config.extra.get("workers", 1))


def port_options(config: ServerConfig) -> list[tuple[str, object]]:
    """A worker shares its port with its siblings; a lone server keeps the platform default (a port in
    use fails to bind)."""
    return [REUSEPORT] if worker_index(config) is not None else []


@dataclass
class Worker:
    index: int
    process: subprocess.Popen[bytes]


class Supervisor:
    def __init__(
        self,
        config: ServerConfig,
        workers: int,
        env: Mapping[str, str] | None = None,
        command: Sequence[str] | None = None,
    ) -> None:
        self.config = config
        self.service = config.service
        self.count = workers
        self.log = get_logger(service=self.service, role="supervisor")
        self.stopping = threading.Event()
        self.workers: list[Worker] = []
        self._env = dict(env or {})
        self._reservation = _reserve_port(config.host, config.port)
        self.port = int(self._reservation.getsockname()[1])
        # The internal port (mutual TLS: servicekit.tls), shared by the workers the same way.
        self._internal_reservation = _reserve_port(config.host, config.internal_listen_port())
        self.internal_port = int(self._internal_reservation.getsockname()[1])
        # The browser door's port, shared by the workers the same way.
        self._web_reservation = (
            _reserve_port(config.host, config.web_port) if config.web_port is not None else None
        )
        self.web_port = (
            int(self._web_reservation.getsockname()[1]) if self._web_reservation is not None else None
        )
        web = ["--web-port", str(self.web_port)] if self.web_port is not None else []
        self._command = list(command) if command is not None else [
            sys.executable, "-m", "felt", "serve", self.service,
            "--host", config.host, "--port", str(self.port), "--internal-port", str(self.internal_port),
            *web,
        ]  # fmt: skip
        own_dir = os.environ.get(MULTIPROC_ENV)
        # An operator-given directory is theirs to clear between runs; ours is fresh and removed at exit.
        self._metrics_dir = (
            Path(own_dir) if own_dir else Path(tempfile.mkdtemp(prefix=f"felt-{self.service}-metrics-"))
        )
        self._owns_metrics_dir = not own_dir
        self.metrics_port: int | None = None
        self._metrics_server: object | None = None

    @property
    def address(self) -> str:
        return f"{self.config.host}:{self.port}"

    @property
    def internal_address(self) -> str:
        return f"{self.config.host}:{self.internal_port}"

    def _spawn(self, index: int, restart: bool = False) -> tuple[Worker, int]:
        read_fd, write_fd = os.pipe()
        # felt_service_restarts_total sums every worker's files, a dead one's too: a restarted worker
        # adds 1; the first worker 0 adds the restarts of this supervisor itself (the directory is new).
        own = int(os.environ.get("FELT_RESTARTS", "0") or 0) if index == 0 and not restart else 0
        env = {
            **os.environ,
            **self._env,
            "FELT_RESTARTS": str(1 if restart else own),
            env_name(self.service, "WORKERS"): str(self.count),
            env_name(self.service, "WORKER_INDEX"): str(index),
            env_name(self.service, "READY_FD"): str(write_fd),
            env_name(self.service, "SUPERVISOR_PID"): str(os.getpid()),
            MULTIPROC_ENV: str(self._metrics_dir),
            "FELT_DATA_DIR": str(self.config.data_dir),
        }
        # stdout/stderr are inherited: the workers' log lines go where the supervisor's go.
        process = subprocess.Popen(self._command, env=env, pass_fds=(write_fd,))
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
                    indexes = sorted(w.index for w in pending.values())
                    raise RuntimeError(f"{self.service} workers {indexes} not ready")
                for key, _ in selector.select(timeout=left):
                    fd = int(key.fd)
                    data = os.read(fd, 64)
                    worker = pending.pop(fd)
                    selector.unregister(fd)
                    os.close(fd)
                    if not data:
                        raise RuntimeError(
                            f"{self.service} worker {worker.index} exited with code {worker.process.wait()}"
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
        multiprocess.MultiProcessCollector(registry, path=str(self._metrics_dir))  # type: ignore[no-untyped-call]
        keys = auth.load_keys(self.config.data_dir, self.config.production)
        self._metrics_server, self.metrics_port = metrics.start_metrics_server(
            self.config.host, port, registry, auth.jwks_routes(keys)
        )

    def watch(self) -> None:
        """Until asked to stop: start again any worker that exits."""
        while not self.stopping.wait(0.2):
            for slot, worker in enumerate(self.workers):
                code = worker.process.poll()
                if code is None or self.stopping.is_set():
                    continue
                self.log.error("worker_exited", worker=worker.index, pid=worker.process.pid, code=code)
                self._mark_dead(worker.process.pid)
                if self.stopping.wait(RESTART_DELAY_SECONDS):
                    return
                try:
                    replacement, fd = self._spawn(worker.index, restart=True)
                    self.workers[slot] = replacement
                    self._await_ready({fd: replacement})
                except (OSError, RuntimeError) as failed:  # try again on the next round
                    self.log.error("worker_restart_failed", worker=worker.index, error=str(failed))

    def _mark_dead(self, pid: int) -> None:
        # Live gauges of a dead worker stop counting (its counters still add up in the totals).
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid, path=str(self._metrics_dir))  # type: ignore[no-untyped-call]

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
        if self._web_reservation is not None:
            self._web_reservation.close()
        self._internal_reservation.close()
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


def supervise(
    config: ServerConfig,
    workers: int,
    announce: Announce,
    env: Mapping[str, str] | None = None,
    command: Sequence[str] | None = None,
) -> int:
    """Run `workers` processes of the service on one port in the foreground until SIGTERM or SIGINT.
    `env`: extra environment for the workers; `command`: what a worker runs (default `felt serve`)."""
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # as every worker does (server.serve_forever)
    supervisor = Supervisor(config, workers, env, command)

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        supervisor.log.info("signal", signal=signal.Signals(signum).name)
        supervisor.stopping.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    try:
        supervisor.start()
        supervisor.log.info("started", address=supervisor.address, workers=workers)
        announce(supervisor.address, supervisor.internal_address, supervisor.metrics_port)
        supervisor.watch()
    except RuntimeError as failed:
        supervisor.log.error("workers_failed", error=str(failed))
        return 1
    finally:
        supervisor.stop()
    return 0


def report_ready(service: str) -> None:
    """In a worker: tell the supervisor this process serves, and stop if the supervisor goes away."""
    fd = os.environ.get(env_name(service, "READY_FD"))
    if fd is not None:
        os.write(int(fd), f"{os.getpid()}\n".encode())
        os.close(int(fd))
    supervisor = os.environ.get(env_name(service, "SUPERVISOR_PID"))
    if supervisor is not None:
        threading.Thread(target=_watch_supervisor, args=(int(supervisor),), daemon=True).start()


def _watch_supervisor(supervisor_pid: int) -> None:
    # Reparented (the supervisor was killed outright): drain like on SIGTERM rather than linger.
    while os.getppid() == supervisor_pid:
        time.sleep(1.0)
    os.kill(os.getpid(), signal.SIGTERM)


def serve(
    spec_for: Callable[[ServerConfig], ServiceSpec],
    config: ServerConfig,
    announce: Announce,
    env: Mapping[str, str] | None = None,
) -> int:
    """`felt serve <service>`: one process; with FELT_<SERVICE>_WORKERS=N > 1 a supervisor of N; or,
    started by a supervisor, one of its workers (which announces to the supervisor, not to the user)."""
    if worker_index(config) is not None:
        # The supervisor serves the workers' metrics (summed); a worker has no HTTP port of its own.
        config = replace(config, metrics_port=None)
        serve_forever(spec_for(config), config, lambda _service: report_ready(config.service))
        return 0
    workers = worker_count(config)
    if workers > 1:
        return supervise(config, workers, announce, env)
    serve_forever(
        spec_for(config),
        config,
        lambda service: announce(service.address, service.internal_address, service.metrics_port),
    )
    return 0
