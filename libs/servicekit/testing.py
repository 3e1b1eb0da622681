"""Test helpers: a real server on a free port, tokens signed with its key, and a service run as a
supervisor of worker processes (`python -m services.<name>`) whose announced address tests read.

TLS is on in every test, as everywhere (servicekit.tls): one development CA for the test process and
every service it starts (`session_ca_dir`; processes inherit it through FELT_TLS_DEV_CA_DIR). A service's
`.address` is its internal port (mutual TLS: what the other services and the tests' platform clients
call, with a client certificate from `client_files`), `.public_address` its public one (TLS only)."""

from __future__ import annotations

import atexit
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
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import jwt
from grpc_health.v1 import health_pb2, health_pb2_grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from prometheus_client.multiprocess import MultiProcessCollector

from servicekit import auth, client, devca, tls
from servicekit.config import ServerConfig, load_server_config
from servicekit.dependencies import Dependency
from servicekit.server import Service, ServiceSpec, build

# The name on the certificate of the tests' own clients (players', operators' and anonymous calls).
TEST_CLIENT = "felt-test"
_session_ca: list[Path] = []


def session_ca_dir() -> Path:
    """The development CA of this test process (made once, removed at exit), also for the services it
    starts as processes: they inherit FELT_TLS_DEV_CA_DIR, so every certificate chains to this CA."""
    if not _session_ca:
        given = os.environ.get(tls.DEV_CA_DIR_ENV)
        if given:
            directory = Path(given)
        else:
            directory = Path(tempfile.mkdtemp(prefix="felt-test-ca-"))
            atexit.register(shutil.rmtree, directory, True)
            os.environ[tls.DEV_CA_DIR_ENV] = str(directory)
        devca.ensure_ca(directory)
        _session_ca.append(directory)
    return _session_ca[0]


def client_files(name: str = TEST_CLIENT) -> tls.TlsFiles:
    """A client certificate for `name` from the session CA: a service's name makes its service tokens
    count on an internal port (servicekit.interceptor.require_certificate_of)."""
    ca_dir = session_ca_dir()
    leaf = devca.mint(name, ca_dir / "clients", ca_dir)
    return tls.TlsFiles(leaf.ca, leaf.cert, leaf.key)


def trust_files() -> tls.TlsFiles:
    """What a client without a certificate (a player's app) trusts: the session CA."""
    return tls.TlsFiles(session_ca_dir() / devca.CA_CERT)


def channel(
    address: str,
    token: str | Callable[[], str] | None = None,
    timeout: float | None = client.DEFAULT_TIMEOUT_SECONDS,
    dependency: Dependency | None = None,
    *,
    name: str | None = None,
    options: Sequence[tuple[str, Any]] = (),
) -> grpc.Channel:
    """`client.channel` with a client certificate: for `name`, by default the subject of a service's
    `token` (its service token counts then, on an internal port) or the tests' own. A public port does
    not ask for the certificate: the same channel works there."""
    certified = name if name is not None else certificate_name(token)
    return client.channel(address, token, timeout, dependency, client_files(certified), options)


def certificate_name(token: str | Callable[[], str] | None) -> str:
    """The name a client certificate needs for `token`: a service's subject, else TEST_CLIENT."""
    role, subject = getattr(token, "role", None), getattr(token, "subject", None)
    if role is None and token is not None:
        text = token if isinstance(token, str) else token()
        try:
            claims = jwt.decode(text, options={"verify_signature": False})
        except jwt.InvalidTokenError:  # a made-up token: refused for itself, whatever the certificate
            return TEST_CLIENT
        role, subject = claims.get("role"), claims.get("sub")
    if role in (auth.Role.SERVICE, auth.Role.SERVICE.value) and isinstance(subject, str) and subject:
        return subject
    return TEST_CLIENT


def aio_channel(
    address: str, *, name: str = TEST_CLIENT, options: Sequence[tuple[str, Any]] = ()
) -> grpc.aio.Channel:
    """An asyncio channel to `address` with a client certificate for `name` (benchmarks' load clients);
    not rebuilt when the files change."""
    credentials = tls.channel_credentials(tls.watch(client_files(name)).current())
    return grpc.aio.secure_channel(address, credentials, options=list(options))


def public_channel(
    address: str,
    token: str | Callable[[], str] | None = None,
    *,
    felt_up_dir: Path | None = None,
    timeout: float | None = client.DEFAULT_TIMEOUT_SECONDS,
) -> grpc.Channel:
    """A channel to a public port as a player's app has one: TLS trusting the CA, no certificate of its
    own. The CA: the session's, or the development CA `felt up` made in its data directory `felt_up_dir`
    (a `felt up` started without the session's FELT_TLS_DEV_CA_DIR)."""
    trust = tls.trust_files(felt_up_dir, environ={}) if felt_up_dir is not None else trust_files()
    return client.channel(address, token, timeout, tls_files=trust)


def plaintext_channel(address: str) -> grpc.Channel:
    """A channel without TLS: what a service refuses (the handshake fails, the call is UNAVAILABLE)."""
    return grpc.insecure_channel(address)


@dataclass
class RunningService:
    service: Service

    @property
    def address(self) -> str:
        """The internal port (mutual TLS): the other services' and the tests' platform clients' door."""
        return self.service.internal_address

    @property
    def public_address(self) -> str:
        """The public port (TLS, no client certificate): players, operators, other platforms."""
        return self.service.address

    @property
    def web_url(self) -> str:
        """The browser door's base URL (the service runs with `web_port=0` or a port of its own)."""
        assert self.service.web_url is not None, "started without a web port: pass web_port=0"
        return self.service.web_url

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.service.metrics_port}/metrics"

    def token(self, subject: str, role: auth.Role = auth.Role.PLAYER) -> str:
        """A token for `subject`, issued on the service's clock (`auth_clock` in tests that move it)."""
        clock = self.service.config.extra.get("auth_clock") or time.time
        return auth.issue_token(self.service.keys, subject, role, now=clock())

    def channel(self, subject: str | None = None, role: auth.Role = auth.Role.PLAYER) -> grpc.Channel:
        """A channel to the internal port whose calls carry a token for `subject` (none when subject is
        None), with a client certificate naming `subject` for a service's token (else the tests')."""
        token = self.token(subject, role) if subject is not None else None
        return channel(self.address, token)

    def public_channel(self, subject: str | None = None, role: auth.Role = auth.Role.PLAYER) -> grpc.Channel:
        """A channel to the public port (TLS, no client certificate), as a player's app has."""
        token = self.token(subject, role) if subject is not None else None
        return public_channel(self.public_address, token)


def config_for_tests(service: str, data_dir: Path, **overrides: Any) -> ServerConfig:
    """A service on free ports over `data_dir`. Its per-caller rate limits are lifted (a test calls
    faster than any person); a test of the limits passes `rate_limits=True` (and a `rate_clock`). Its
    refusals are answered at once (their retry delay is the virtual rate clock's); a test of the late
    refusals passes `refusal_hold_ms`."""
    session_ca_dir()
    defaults: dict[str, Any] = {
        "host": "127.0.0.1",
        "port": 0,
        "internal_port": 0,
        "metrics_port": 0,
        "data_dir": data_dir,
        "shutdown_grace_seconds": 2.0,
        "rate_limits": False,
        "refusal_hold_ms": 0,
    }
    defaults.update(overrides)
    return load_server_config(service, **defaults)


@contextmanager
def running(
    spec_for: Callable[[ServerConfig], ServiceSpec], config: ServerConfig
) -> Iterator[RunningService]:
    """Start the service built by `spec_for(config)`; stop it (draining) on exit."""
    session_ca_dir()
    service = build(spec_for(config), config).start()
    try:
        yield RunningService(service)
    finally:
        service.stop(grace=1.0)


class Supervised:
    """`python -m services.<service>` with FELT_<SERVICE>_WORKERS worker processes behind one port
    (servicekit/workers.py), started from `cwd` (the repository) on `data_dir`, its stdout and stderr in
    `<service>.out` / `<service>.err` there, the workers' metrics files in `prom/` there. Construction
    returns once the supervisor announced its address (`felt serve`'s "listening on" line)."""

    def __init__(
        self,
        service: str,
        data_dir: Path,
        *,
        cwd: Path,
        workers: int = 2,
        env: Mapping[str, str] | None = None,
        announce_seconds: float = 60.0,
    ) -> None:
        session_ca_dir()
        self.service = service
        self.data_dir = data_dir
        self.metrics_dir = data_dir / "prom"
        self.metrics_dir.mkdir()
        self.out, self.err = data_dir / f"{service}.out", data_dir / f"{service}.err"
        environment = {
            **os.environ,
            f"FELT_{service.upper()}_WORKERS": str(workers),
            "PROMETHEUS_MULTIPROC_DIR": str(self.metrics_dir),
            **(env or {}),
        }
        argv = [
            sys.executable, "-m", f"services.{service}",
            "--port", "0", "--internal-port", "0", "--metrics-port", "0",
        ]  # fmt: skip
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen(
                [*argv, "--data-dir", str(data_dir)], cwd=cwd, env=environment, stdout=out, stderr=err
            )
        # `address`: the internal port (mutual TLS); `public_address`: the public one (TLS).
        self.public_address, self.address, self.metrics_url = self._announced(announce_seconds)

    def _announced(self, seconds: float) -> tuple[str, str, str]:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for line in self.err.read_text(errors="replace").splitlines():
                if "listening on " in line:
                    return (
                        line.split("listening on ")[1].split()[0],
                        line.split("internal ")[1].split()[0],
                        line.split("metrics ")[1].strip(),
                    )
            assert self.proc.poll() is None, self.err.read_text() + self.out.read_text()
            time.sleep(0.05)
        raise AssertionError(f"the {self.service} supervisor did not announce its address")

    def ready_workers(self) -> list[tuple[int, int]]:
        """(worker index, pid) of every worker_ready event so far, in order (a restart adds one)."""
        found = []
        for line in self.out.read_text(errors="replace").splitlines():
            if '"worker_ready"' in line:
                event = json.loads(line)
                found.append((int(event["worker"]), int(event["pid"])))
        return found

    def handled_by(self, pid: int, method: str, code: str | None = None) -> float:
        """grpc_server_handled_total of one worker for `method` (and `code`, e.g. "OK", if given), from
        that worker's own files in the multiprocess metrics directory."""
        files = [str(p) for p in self.metrics_dir.glob(f"*_{pid}.db")]
        total = 0.0
        for metric in MultiProcessCollector.merge(files, accumulate=True):  # type: ignore[no-untyped-call]
            for sample in metric.samples:
                if (
                    sample.name == "grpc_server_handled_total"
                    and sample.labels.get("grpc_method") == method
                    and (code is None or sample.labels.get("grpc_code") == code)
                ):
                    total += sample.value
        return total

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM (the supervisor drains its workers), SIGKILL after `timeout`; the exit code."""
        return terminate(self.proc, timeout)


def terminate(proc: subprocess.Popen[bytes], timeout: float) -> int:
    """SIGTERM, SIGKILL after `timeout` seconds; the exit code."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def free_port() -> int:
    """A free port on 127.0.0.1 for a process that binds it later (`free_ports(1)[0]`)."""
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """`count` consecutive free ports on 127.0.0.1 for processes that bind them later.

    They lie below the kernel's ephemeral range (`net.ipv4.ip_local_port_range`, 32768-60999 by
    default): an outbound connection takes its local port from that range, so a port picked there (what
    binding port 0 gives) can be taken by any connection opened before the process binds it. A CI run
    lost a tournament stack that way ("Address already in use" on its metrics port). Here only a
    listener can take them, and this process never hands out the same port twice."""
    low = _ephemeral_low()
    for _ in range(500):
        base = _pick.randrange(_PORTS_FROM, low - count)
        block = list(range(base, base + count))
        if _handed_out.intersection(block) or not all(bindable(port) for port in block):
            continue
        _handed_out.update(block)
        return block
    raise RuntimeError(f"no {count} free consecutive ports in {_PORTS_FROM}-{low}")


_PORTS_FROM = 20_000  # above the well-known and registered ports services here listen on
_pick = random.Random()  # seeded from the OS: two test runs on one machine pick apart
_handed_out: set[int] = set()


def _ephemeral_low() -> int:
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32_768
    return max(low, _PORTS_FROM + 1_000)


def bindable(port: int) -> bool:
    """Whether nothing listens on `port` of 127.0.0.1 now (a test's own check before a process binds it)."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class ServiceProcess:
    """`python -m services.<service>` as one process on ports fixed at construction, so that a restart after
    a SIGKILL comes back where its clients (and the other services) look for it. Its stdout and stderr are
    appended to `<service>.log` in `data_dir`. `start` returns once health says SERVING (a table service is
    SERVING once its dealer and wallet answer)."""

    def __init__(
        self,
        service: str,
        data_dir: Path,
        *,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        name: str = "",
    ) -> None:
        session_ca_dir()
        self.service = service
        self.name = name or service  # several of one service (table shards) need their own logs
        self.data_dir = data_dir
        self.cwd = cwd
        self.env = dict(env or {})
        self.port, self.internal_port, self.metrics_port = free_port(), free_port(), free_port()
        # `address`: the internal port (mutual TLS); `public_address`: the public one (TLS).
        self.address = f"127.0.0.1:{self.internal_port}"
        self.public_address = f"127.0.0.1:{self.port}"
        self.metrics_url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        self.log = data_dir / f"{self.name}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self, ready_seconds: float = 60.0) -> None:
        self.launch()
        if not self.wait_serving(ready_seconds):
            self.kill()
            raise AssertionError(f"{self.name} did not become SERVING:\n{self.log.read_text()[-3000:]}")

    def launch(self) -> None:
        """The process, without waiting for it to serve (a test of what it says before it does)."""
        argv = [
            sys.executable, "-m", f"services.{self.service}", "--port", str(self.port),
            "--internal-port", str(self.internal_port), "--metrics-port", str(self.metrics_port),
            "--data-dir", str(self.data_dir),
        ]  # fmt: skip
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                argv, cwd=self.cwd, env={**os.environ, **self.env}, stdout=log, stderr=subprocess.STDOUT
            )
        self.starts += 1

    def serving(self, timeout: float = 1.0) -> bool:
        with channel(self.address) as health:
            try:
                reply = health_pb2_grpc.HealthStub(health).Check(
                    health_pb2.HealthCheckRequest(), timeout=timeout
                )
            except grpc.RpcError:
                return False
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)

    def wait_serving(self, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                return False
            if self.serving():
                return True
            time.sleep(0.1)
        return False

    def kill(self) -> None:
        """SIGKILL: no drain, no cleanup; what it committed stays."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def signal(self, sig: int) -> None:
        assert self.proc is not None, f"{self.name} was never started"
        self.proc.send_signal(sig)

    def metric(self, name: str) -> float:
        """The sum of every sample of metric `name` (all its labels) as the process serves them now."""
        with urllib.request.urlopen(self.metrics_url, timeout=5) as reply:
            text = reply.read().decode()
        return sum(float(m.group(1)) for m in re.finditer(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M))

    def stop(self, timeout: float = 30.0) -> int | None:
        """SIGTERM (it drains), SIGKILL after `timeout`; the exit code. A stopped (SIGSTOP) process is
        continued first, or the SIGTERM would wait with it."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
        return None if self.proc is None else terminate(self.proc, timeout)


def table_shard(shard_id: str, data_dir: Path, *, cwd: Path, env: Mapping[str, str]) -> ServiceProcess:
    """A table service run as shard `shard_id`, advertising its own address to the clients it redirects."""
    shard = ServiceProcess("table", data_dir, cwd=cwd, env=env, name=shard_id)
    shard.env |= {
        "FELT_TABLE_SHARD_ID": shard_id,
        "FELT_TABLE_ADVERTISE_ADDRESS": shard.public_address,
        "FELT_TABLE_ADVERTISE_INTERNAL_ADDRESS": shard.address,
    }
    return shard


def fund_player(wallet: Any, player: str, chips: int) -> str:
    """Open `player`'s chips account and issue them `chips` (a promotion), as an operator's wallet stub:
    the setup of a test's or a benchmark's players. Returns the account id. The request ids derive from the
    player, so calling it twice for one player is refused, not doubled."""
    account = wallet.CreateAccount(
        wpb.CreateAccountRequest(request_id=f"acct-{player}", kind=wpb.ACCOUNT_KIND_PLAYER, owner=player)
    ).account.account_id
    wallet.Issue(
        wpb.IssueRequest(
            request_id=f"fund-{player}", account_id=account, amount=chips, reason=wpb.ISSUE_REASON_PROMOTION
        )
    )
    return str(account)
