"""The platform as real processes for the suites, its RPCs as reflection lists them, and its state.

`Stack` starts every service of this checkout (`felt.registry.available()`: a new service is started, and
its RPCs enumerated, without editing this file) as `python -m services.<name>` on free ports of loopback,
each told where the others are; `overrides` re-point one service's view of another (the fault proxy sits
between the table service and the wallet/dealer that way).

Every service also opens its browser door (Connect and gRPC-Web, servicekit/door.py) on a free port
(`web_urls`): `Door(url)` in place of a channel sends an Rpc's calls there, so a suite runs over both.

`Reflected` reads each service's RPCs and message descriptors through gRPC server reflection, as any
client could: the suites never import the generated stubs to find out what exists.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from connectrpc.client import ConnectClientSync
from connectrpc.errors import ConnectError
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from felt import registry
from google.protobuf import descriptor_pool, json_format, message_factory
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase
from poker.table.v1 import casino_service_pb2 as cpb
from poker.table.v1 import casino_service_pb2_grpc as cpb_grpc
from poker.table.v1 import table_service_pb2 as tpb
from poker.table.v1 import table_service_pb2_grpc as tpb_grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from pyqwest import SyncClient, SyncHTTPTransport
from servicekit import auth, connect_client, errors, testing
from servicekit.testing import free_port, fund_player

# The checkout whose services run (FELT_SUITES_ROOT: another worktree, to try the suites on a branch).
ROOT = Path(os.environ.get("FELT_SUITES_ROOT") or Path(__file__).resolve().parents[2])
# Served by every process for probes and tools; open by design (servicekit.interceptor._OPEN_PREFIXES).
INFRASTRUCTURE = ("grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection",
                  "grpc.reflection.v1.ServerReflection")  # fmt: skip
OPERATOR = "suite-ops"


# A service whose test process is killed (a timeout) goes too: SIGTERM when its parent dies, set by
# util-linux's setpriv before it runs the service. Not by a preexec_fn calling prctl: that makes Python fork
# rather than vfork, and in the forked child gRPC's fork handlers (grpcio is built with fork support) restart
# the test process's pollers, whose epoll descriptor close_fds then closes before exec: once in a CI run the
# child aborted there ("Epoll1Poller ... epoll_wait error: Bad file descriptor", the service's log's only
# line) and the service "did not start".
DIE_WITH_THE_SUITE = ["setpriv", "--pdeathsig", "TERM"] if shutil.which("setpriv") else []


def spawn(argv: list[str], env: Mapping[str, str], out: Any) -> subprocess.Popen[bytes]:
    """A service's process, output to `out`, that gets SIGTERM when the thread that started it ends."""
    return subprocess.Popen(
        [*DIE_WITH_THE_SUITE, *argv], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
    )


def wait_serving(address: str, seconds: float, proc: subprocess.Popen[bytes] | None = None) -> bool:
    deadline = time.monotonic() + seconds
    with testing.channel(address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            try:
                if health.Check(health_pb2.HealthCheckRequest(), timeout=1).status == 1:
                    return True
            except grpc.RpcError:
                pass
            if proc is not None and proc.poll() is not None:
                return False
            time.sleep(0.1)
    return False


def _exit_status(proc: subprocess.Popen[bytes]) -> str:
    """How a service that did not start ended: its return code (negative: the signal that killed it,
    named), or that it was still running."""
    code = proc.poll()
    if code is None:
        return "still running, not serving"
    if code < 0:
        try:
            return f"return code {code}: killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"return code {code}: killed by signal {-code}"
    return f"return code {code}"


@dataclass
class Stack:
    """Every service as a process over `data_dir`. `env` is given to all; `per_service[name]` to one
    (FELT_WALLET_ADDRESS=<proxy> for the table only, say)."""

    data_dir: Path
    env: Mapping[str, str] = field(default_factory=dict)
    per_service: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    addresses: dict[str, str] = field(default_factory=dict)  # internal ports (mutual TLS)
    public_addresses: dict[str, str] = field(default_factory=dict)  # public ports (TLS)
    web_urls: dict[str, str] = field(default_factory=dict)  # each service's browser door
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def start(self) -> Stack:
        self.names = [entry.name for entry in registry.available()]
        # Addresses given beforehand are kept (a test puts a proxy in front of one it knows).
        self.addresses = {name: self.addresses.get(name) or f"127.0.0.1:{free_port()}" for name in self.names}
        where = {f"FELT_{name.upper()}_ADDRESS": address for name, address in self.addresses.items()}
        for name in self.names:  # in port order: each one's dependencies are up before it
            env = {
                **os.environ,
                "FELT_SHUTDOWN_GRACE_SECONDS": "2",
                "FELT_LOG_LEVEL": "WARNING",
                # A fatal signal (gRPC's abort on a failed epoll_wait, a segfault) prints every thread's
                # Python stack into the log: a service that dies at start says where each thread was.
                "PYTHONFAULTHANDLER": "1",
                **where,
                **self.env,
                **self.per_service.get(name, {}),
            }
            # Each address is the service's internal port (mutual TLS): the others' and the suites' door.
            internal = self.addresses[name].rpartition(":")[2]
            self.public_addresses[name] = f"127.0.0.1:{free_port()}"
            web_port = free_port()
            self.web_urls[name] = f"https://127.0.0.1:{web_port}"  # TLS, the session CA's
            argv = [sys.executable, "-m", f"services.{name}",
                    "--port", self.public_addresses[name].rpartition(":")[2], "--internal-port", internal,
                    "--web-port", str(web_port),
                    "--metrics-port", str(free_port()), "--data-dir", str(self.data_dir)]  # fmt: skip
            with self.log(name).open("wb") as out:
                self.procs[name] = spawn(argv, env, out)
            if not wait_serving(self.addresses[name], 60, self.procs[name]):
                exit_status = _exit_status(self.procs[name])  # before stop() ends a process still up
                self.stop()
                raise AssertionError(
                    f"{name} did not start ({exit_status}):\n{self.log(name).read_text()[-3000:]}"
                )
        return self

    def log(self, name: str) -> Path:
        return self.data_dir / f"{name}.log"

    def stop(self) -> None:
        for name in reversed(list(self.procs)):  # the table first: it closes its shoes with the dealer up
            proc = self.procs[name]
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    @property
    def keys(self) -> auth.KeyPair:
        return auth.load_keys(self.data_dir)

    def token(self, subject: str, role: auth.Role = auth.Role.PLAYER, **kw: Any) -> str:
        return auth.issue_token(self.keys, subject, role, **kw)

    def channel(self, service: str, token: str | None) -> grpc.Channel:
        return testing.channel(self.addresses[service], token)

    # -- the operator's view of the state the suites watch -----------------------------------------

    def wallet(self) -> wpb_grpc.WalletServiceStub:
        return wpb_grpc.WalletServiceStub(self.channel("wallet", self.token(OPERATOR, auth.Role.OPERATOR)))

    def tables(self) -> tpb_grpc.TableServiceStub:
        return tpb_grpc.TableServiceStub(self.channel("table", self.token(OPERATOR, auth.Role.OPERATOR)))

    def casino(self) -> cpb_grpc.CasinoServiceStub:
        return cpb_grpc.CasinoServiceStub(self.channel("table", self.token(OPERATOR, auth.Role.OPERATOR)))

    def fund(self, player: str, chips: int) -> str:
        return fund_player(self.wallet(), player, chips)

    def balance(self, kind: int, owner: str) -> int:
        found = self.wallet().ListAccounts(wpb.ListAccountsRequest(kind=kind, owner=owner)).accounts  # type: ignore[arg-type]
        return int(found[0].balance) if found else 0

    def snapshot(self, extra_tables: tuple[str, ...] = ()) -> dict[str, Any]:
        """The ledger summary, every account, and each table's view (version, seats, stacks, pots) and
        casino round, as the operator reads them: equal before and after a refused call."""
        wallet = self.wallet()
        summary = json_format.MessageToDict(wallet.GetLedgerSummary(wpb.GetLedgerSummaryRequest()))
        accounts = {}
        token = ""
        while True:
            page = wallet.ListAccounts(wpb.ListAccountsRequest(page_size=100, page_token=token))
            for a in page.accounts:
                accounts[a.account_id] = (a.balance, json_format.MessageToDict(a).get("pending", 0))
            token = page.next_page_token
            if not token:
                break
        tables = self.tables()
        ids = {t.table_id for t in tables.ListTables(tpb.ListTablesRequest(page_size=100)).tables}
        views = {}
        for table_id in sorted(ids | set(extra_tables)):
            view = tables.GetTableView(tpb.GetTableViewRequest(table_id=table_id)).view
            views[table_id] = json_format.MessageToDict(view)
        casino = self.casino()
        rounds = {}
        for t in casino.ListCasinoTables(cpb.ListCasinoTablesRequest()).tables:
            got = casino.GetRound(cpb.GetRoundRequest(table_id=t.table_id)).round
            rounds[t.table_id] = (json_format.MessageToDict(t), json_format.MessageToDict(got))
        return {"summary": summary, "accounts": accounts, "tables": views, "casino": rounds}


class Door:
    """Calls through a service's browser door instead of its gRPC channel: Connect with binary bodies
    sent and answered as raw bytes (any request, or garbage), as `Rpc.exchange` sends them over gRPC."""

    def __init__(self, url: str) -> None:
        # The door serves TLS: trust the session's CA, as a browser trusts the platform's certificate.
        self.transport = SyncHTTPTransport(tls_ca_cert=testing.trust_files().ca.read_bytes())
        self.client = ConnectClientSync(
            url, codec=_RawCodec(), send_compression=None, http_client=SyncClient(self.transport)
        )

    def close(self) -> None:
        self.client.close()
        self.transport.close()


class _RawCodec:
    """connectrpc's binary codec without the message classes: bytes in, bytes out."""

    def name(self) -> str:
        return "proto"

    def encode(self, message: bytes) -> bytes:
        return message

    def decode(self, data: bytes | bytearray, message_class: type[Any]) -> bytes:
        return bytes(data)


class DoorError(Exception):
    """A call refused through the door, read as a failed gRPC call is: `code()`, `details()`, and its
    google.rpc details through `details_of`."""

    def __init__(self, error: ConnectError) -> None:
        super().__init__(error.message)
        self.error_details = connect_client.details_of(error)

    def code(self) -> grpc.StatusCode:
        return self.error_details.code

    def details(self) -> str:
        return self.error_details.message


def details_of(error: Any) -> errors.ErrorDetails:
    """The google.rpc details of a failed call, through either door."""
    return error.error_details if isinstance(error, DoorError) else errors.details_of(error)


@dataclass(frozen=True)
class Rpc:
    service: str  # the Felt service (process) serving it: evaluator, dealer, wallet, table, ...
    method: MethodDescriptor
    request_class: type[Message]

    @property
    def path(self) -> str:
        return f"/{self.method.containing_service.full_name}/{self.method.name}"

    @property
    def name(self) -> str:  # "poker.wallet.v1.WalletService/Issue"
        return self.path.lstrip("/")

    @property
    def streaming(self) -> bool:
        return bool(self.method.server_streaming)

    def request(self, fields: Mapping[str, Any] | None = None) -> Message:
        message = self.request_class()
        if fields:
            json_format.ParseDict(dict(fields), message)
        return message

    def call(
        self, channel: grpc.Channel | Door, body: bytes, token: str | None = None, timeout: float = 10.0
    ) -> tuple[grpc.StatusCode, Any]:
        """Send `body` (raw bytes: any request, or garbage) with `token` (None: none, given as is); the
        code, and the error when it failed. A server stream is read for at most its first message."""
        code, error, _answer = self.exchange(channel, body, token, timeout)
        return code, error

    def exchange(
        self, channel: grpc.Channel | Door, body: bytes, token: str | None = None, timeout: float = 10.0
    ) -> tuple[grpc.StatusCode, Any, bytes]:
        """`call`, and the answer's bytes (a stream's first message; b"" when it failed)."""
        if isinstance(channel, Door):
            return self._through_door(channel, body, token, timeout)
        metadata = (("authorization", f"Bearer {token}"),) if token is not None else None
        identity = lambda b: b  # noqa: E731 - the body is sent as given, the answer kept as bytes
        answer = b""
        try:
            if self.streaming:
                stream = channel.unary_stream(
                    self.path, request_serializer=identity, response_deserializer=identity
                )(body, metadata=metadata, timeout=min(timeout, 1.5))
                with contextlib.suppress(StopIteration):
                    answer = next(iter(stream))
                stream.cancel()
                return grpc.StatusCode.OK, None, answer
            answer = channel.unary_unary(
                self.path, request_serializer=identity, response_deserializer=identity
            )(body, metadata=metadata, timeout=timeout)
            return grpc.StatusCode.OK, None, answer
        except grpc.RpcError as failed:
            code = failed.code()  # type: ignore[attr-defined]
            if self.streaming and code is grpc.StatusCode.DEADLINE_EXCEEDED:
                return grpc.StatusCode.OK, None, answer  # an open stream with nothing (more) to say yet
            return code, failed, b""

    def _through_door(
        self, door: Door, body: bytes, token: str | None, timeout: float
    ) -> tuple[grpc.StatusCode, Any, bytes]:
        headers = {"authorization": f"Bearer {token}"} if token is not None else {}
        method = MethodInfo(
            name=self.method.name,
            service_name=self.method.containing_service.full_name,
            input=bytes,
            output=bytes,
            idempotency_level=IdempotencyLevel.UNKNOWN,
            stream_type=StreamType.SERVER_STREAM if self.streaming else StreamType.UNARY,
        )
        answer = b""
        try:
            if self.streaming:
                stream = door.client.execute_server_stream(
                    request=body, method=method, headers=headers, timeout_ms=int(min(timeout, 1.5) * 1000)
                )
                with contextlib.suppress(StopIteration):
                    answer = next(stream)
                stream.close()  # type: ignore[attr-defined]
                return grpc.StatusCode.OK, None, answer
            answer = door.client.execute_unary(
                request=body, method=method, headers=headers, timeout_ms=int(timeout * 1000)
            )
            return grpc.StatusCode.OK, None, answer
        except ConnectError as failed:
            refused = DoorError(failed)
            if self.streaming and refused.code() is grpc.StatusCode.DEADLINE_EXCEEDED:
                return grpc.StatusCode.OK, None, answer  # an open stream with nothing (more) to say yet
            return refused.code(), refused, b""


def reflect(stack: Stack) -> Iterator[Rpc]:
    """Every RPC every service of the stack serves (reflection's own services and health aside)."""
    for name in stack.names:
        channel = testing.channel(stack.addresses[name])
        database = ProtoReflectionDescriptorDatabase(channel)
        pool = descriptor_pool.DescriptorPool(database)
        for service_name in database.get_services():
            if service_name in INFRASTRUCTURE:
                continue
            service = pool.FindServiceByName(service_name)
            for method in service.methods:
                yield Rpc(name, method, message_factory.GetMessageClass(method.input_type))
