"""`felt up`: the whole stack on this machine, one process per service; Ctrl-C or SIGTERM stops all.

Ports are fixed and documented: evaluator, dealer, wallet, table, tournament in that order from
--base-port (default 50051), metrics likewise from --metrics-base-port (default 9101), and each service's
browser door (Connect and gRPC-Web, servicekit/door.py) likewise from --web-base-port (default 8081; 0: no
doors), open to pages from --web-origins (default the web page's origin under both names a browser may give
it, http://127.0.0.1:8080 and http://localhost:8080, or FELT_WEB_ORIGINS when set). Every gRPC port serves
TLS (servicekit.tls): `felt up` makes a development CA in the data directory (`tls/ca.pem`, which `felt
play` trusts) and each service mints its certificate from it. Each service also listens on its internal
port, its port + 1000 (mutual TLS), where the other services call it (FELT_<SERVICE>_ADDRESS). The doors
serve TLS too, except on loopback (the default --host): a browser treats http://127.0.0.1 as a secure
context, while a development CA it would have to be told to trust; bound to another interface they serve
TLS from the same certificates (import tls/ca.pem into the browser), and FELT_WEB_TLS=on|off decides
when set.

The web table (web/, built by `make web`) is served on --web-page-port (default 8080; 0: none) with the
development sign-in (felt.webpage): open the URL felt up prints and play. Never in production
(FELT_ENV=production): anyone who reaches the page may sign in as anyone.

With the tournament service, `felt up` keeps a turbo Sit & Go and a Spin open for registration (bots fill
the seats left --bot-fill-seconds after the first person registers): created at start-up, created again
as soon as one starts (felt.play.tournament names them; `felt play --sng` finds the Sit & Go).

A service that exits is started again, the others keep running: after 1 s, then 2, 4, ... up to 30 s
while it keeps exiting, from 1 s again once it has run for a minute. Each restart is printed, and the
restarted service counts it (felt_service_restarts_total, from FELT_RESTARTS).

`--table-shards N` (N > 1) runs the table service as N shards against one store (issue 15): table-0 on the
table's port, table-k on --base-port + 9 + k (metrics and web likewise from their base ports), each
advertising its own address; the store is TABLE_DATABASE_URL when set (PostgreSQL), else the data
directory's SQLite files, shared by the shards' processes (WAL, BEGIN IMMEDIATE and a busy timeout: fine on
one machine, the production store is PostgreSQL). A shard that exits is restarted like any service;
meanwhile the others take its tables over. FELT_TABLE_SHARD_ADDRESSES lists every shard for the other
services.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from poker.table.v1 import table_service_pb2 as tablepb
from poker.tournament.v1 import tournament_service_pb2 as tpb
from poker.tournament.v1 import tournament_service_pb2_grpc as tpb_grpc
from servicekit import auth, client, devca, files, tls, tokens
from servicekit.config import (
    DEFAULT_BASE_PORT,
    DEFAULT_METRICS_BASE_PORT,
    DEFAULT_WEB_BASE_PORT,
    INTERNAL_PORT_OFFSET,
    SERVICES,
    ConfigError,
    data_dir,
    setting,
)

from felt import registry, webpage
from felt.play.tournament import DEFAULT_SNG_NAME, DEFAULT_SPIN_NAME

READY_TIMEOUT_SECONDS = 30.0
STOP_TIMEOUT_SECONDS = 15.0
POLL_SECONDS = 0.2
KEEP_OPEN_SECONDS = 1.0  # how often the default tournaments are checked
DEFAULT_BOT_FILL_SECONDS = 10


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("up", help="start the whole stack with embedded defaults")
    parser.add_argument("--base-port", type=int, default=DEFAULT_BASE_PORT)
    parser.add_argument("--metrics-base-port", type=int, default=DEFAULT_METRICS_BASE_PORT)
    parser.add_argument(
        "--web-base-port",
        type=int,
        default=DEFAULT_WEB_BASE_PORT,
        help="browser doors (Connect, gRPC-Web) from this port, in service order (%(default)s; 0: none)",
    )
    parser.add_argument(
        "--web-origins",
        default=os.environ.get("FELT_WEB_ORIGINS") or None,
        help="comma-separated origins whose pages may call the doors (FELT_WEB_ORIGINS; default: the "
        "web page's, http://127.0.0.1:PAGE_PORT and http://localhost:PAGE_PORT)",
    )
    parser.add_argument(
        "--web-page-port",
        type=int,
        default=webpage.DEFAULT_PAGE_PORT,
        help="the web table's page, with the development sign-in (%(default)s; 0: none; never in production)",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--data-dir", help="local state directory (FELT_DATA_DIR)")
    parser.add_argument(
        "--bot-fill-seconds",
        type=int,
        default=DEFAULT_BOT_FILL_SECONDS,
        help="the default Sit & Go and Spin: bots fill the seats left this long after the first person "
        "registers (%(default)s; 0: no bot fill)",
    )
    parser.add_argument(
        "--no-tournaments", action="store_true", help="do not keep a default Sit & Go and Spin open"
    )
    parser.add_argument(
        "--table-shards",
        type=int,
        default=int(os.environ.get("FELT_TABLE_SHARDS", "1") or 1),
        help="table service shards on one store (FELT_TABLE_SHARDS, default 1)",
    )
    parser.set_defaults(func=run)


def default_tournaments(bot_fill_seconds: int) -> dict[str, tpb.CreateTournamentRequest]:
    """What `felt up` keeps open, by name: a turbo Sit & Go (six seats, levels every 10 hands: the
    format's published structure) and a Spin (three seats, the published multiplier table)."""
    sng = tpb.CreateTournamentRequest(
        name=DEFAULT_SNG_NAME,
        format=tpb.FORMAT_SIT_AND_GO,
        game=tablepb.GAME_NO_LIMIT_HOLDEM,
        seats_per_table=6,
        buy_in=1_000,
        fee=100,
        bot_fill_seconds=bot_fill_seconds,
    )
    spin = tpb.CreateTournamentRequest(
        name=DEFAULT_SPIN_NAME,
        format=tpb.FORMAT_SPIN,
        game=tablepb.GAME_NO_LIMIT_HOLDEM,
        buy_in=500,
        fee=25,
        bot_fill_seconds=bot_fill_seconds,
    )
    return {DEFAULT_SNG_NAME: sng, DEFAULT_SPIN_NAME: spin}


class KeepOpen:
    """Keeps one tournament of each default open for registration: whenever none of that name is
    registering (at start-up, or once the last one filled and started), creates one. Calls that fail
    (the service restarting) are tried again at the next check."""

    def __init__(self, address: str, keys: auth.Keys, bot_fill_seconds: int, trust: tls.TlsFiles) -> None:
        source = tokens.RenewingToken(keys, "felt-up", auth.Role.OPERATOR)
        self._channel = client.channel(address, source, tls_files=trust)
        self._stub = tpb_grpc.TournamentServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self._wanted = default_tournaments(bot_fill_seconds)
        self._next = 0.0
        self.created: list[str] = []

    def check(self, now: float) -> None:
        if now < self._next:
            return
        self._next = now + KEEP_OPEN_SECONDS
        try:
            for name, request in self._wanted.items():
                wanted = tpb.ListTournamentsRequest(format=request.format, state=tpb.STATE_REGISTERING)
                listed = self._stub.ListTournaments(wanted, timeout=5.0).tournaments
                if any(t.name == name for t in listed):
                    continue
                made = tpb.CreateTournamentRequest()
                made.CopyFrom(request)
                made.request_id = f"felt-up-{time.time_ns()}"
                tournament = self._stub.CreateTournament(made, timeout=5.0).tournament
                self.created.append(tournament.tournament_id)
                print(f"Felt: {name} {tournament.tournament_id} open for registration", flush=True)
        except grpc.RpcError:
            return

    def close(self) -> None:
        self._channel.close()


SHARD_PORT_OFFSET = 9  # table-k (k >= 1) listens on --base-port + 9 + k, its metrics likewise


def shard_ports(
    base_port: int, metrics_base_port: int, shards: int, web_base_port: int = 0
) -> list[tuple[str, int, int, int]]:
    """(name, port, metrics port, web port or 0) of each table shard: table-0 on the table's own ports."""
    index = SERVICES.index("table")
    ports = [("table-0", base_port + index, metrics_base_port + index, _web(web_base_port, index))]
    for k in range(1, shards):
        offset = SHARD_PORT_OFFSET + k
        ports.append(
            (f"table-{k}", base_port + offset, metrics_base_port + offset, _web(web_base_port, offset))
        )
    return ports


def _web(web_base_port: int, offset: int) -> int:
    """The web port at `offset` from the base; 0 when the doors are off."""
    return web_base_port + offset if web_base_port else 0


@dataclass
class Backoff:
    """How long to wait before starting again a service that exited: doubling while it keeps exiting
    soon after it started, capped; from the first delay again once it stayed up `stable_seconds`."""

    first_seconds: float = 1.0
    cap_seconds: float = 30.0
    stable_seconds: float = 60.0
    failures: int = 0

    def next_delay(self, ran_seconds: float) -> float:
        if ran_seconds >= self.stable_seconds:
            self.failures = 0
        delay = min(self.cap_seconds, self.first_seconds * 2.0 ** min(self.failures, 32))
        self.failures += 1
        return delay


@dataclass
class Child:
    """One service process of the stack, started again whenever it exits."""

    name: str
    command: list[str]
    env: dict[str, str]
    log_path: Path
    address: str
    metrics_url: str
    web_url: str = ""  # the browser door, if any
    process: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    restarts: int = 0
    restart_at: float | None = None
    backoff: Backoff = field(default_factory=Backoff)

    def start(self) -> None:
        env = {**self.env, "FELT_RESTARTS": str(self.restarts)}
        # Each service's JSON log lines go to its own file in the data directory (appended on restarts).
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                self.command, env=env, stdout=log, stderr=log, start_new_session=True
            )
        self.started = time.monotonic()

    def watch(self, now: float) -> None:
        """Notice an exit and schedule the restart; start it again when its time has come."""
        assert self.process is not None
        if self.restart_at is None:
            code = self.process.poll()
            if code is None:
                return
            ran = now - self.started
            delay = self.backoff.next_delay(ran)
            self.restart_at = now + delay
            _say(
                f"Felt: {self.name} exited with code {code} after {ran:.0f} s; "
                f"restarting it in {delay:g} s (see {self.log_path})"
            )
        elif now >= self.restart_at:
            self.restarts += 1
            self.restart_at = None
            self.start()
            _say(f"Felt: {self.name} restarted (restart {self.restarts}, pid {self.process.pid})")


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _wait_serving(address: str, deadline: float, trust: tls.TlsFiles) -> bool:
    with client.channel(address, tls_files=trust) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            try:
                reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1.0)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return True
            except grpc.RpcError:
                pass
            time.sleep(0.1)
    return False


def run(args: argparse.Namespace) -> int:
    files.private_files()  # the logs and everything the services create: for this user only
    env = dict(os.environ)
    if args.data_dir:
        env["FELT_DATA_DIR"] = args.data_dir
    os.environ.update(env)
    state = data_dir()
    env["FELT_DATA_DIR"] = str(state)
    env.pop("FELT_RESTARTS", None)
    children: list[Child] = []
    stopping = False

    def stop_all(signum: int | None = None, _frame: FrameType | None = None) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop_all)
    signal.signal(signal.SIGINT, stop_all)
    try:
        trust = _development_ca(state)
    except ConfigError as exc:
        _say(f"felt: {exc}")
        return 2
    # Services find each other at the internal ports this stack uses (FELT_<SERVICE>_ADDRESS), by a name
    # their certificates carry (bound to every interface, they are reached on loopback).
    reach = _reach(args.host)
    for index, name in enumerate(SERVICES):
        env[f"FELT_{name.upper()}_ADDRESS"] = f"{reach}:{args.base_port + index + INTERNAL_PORT_OFFSET}"
    shards = shard_ports(
        args.base_port, args.metrics_base_port, max(1, args.table_shards), args.web_base_port
    )
    if len(shards) > 1:
        env["FELT_TABLE_SHARD_ADDRESSES"] = ",".join(
            f"{reach}:{port + INTERNAL_PORT_OFFSET}" for _, port, _, _ in shards
        )
    args.web_origins = args.web_origins or page_origins(args.host, args.web_page_port)
    if args.web_base_port:
        env["FELT_WEB_ORIGINS"] = args.web_origins
        env.setdefault("FELT_WEB_TLS", "off" if _loopback(reach) else "on")
    scheme = "https" if env.get("FELT_WEB_TLS", "on") != "off" else "http"
    logs = state / "logs"
    logs.mkdir(exist_ok=True)
    print(f"Felt: data directory {state} (service logs in {logs}; TLS, trusting {trust.ca})", flush=True)
    for entry in registry.available():
        index = SERVICES.index(entry.name)
        web = _web(args.web_base_port, index)
        instances = [(entry.name, args.base_port + index, args.metrics_base_port + index, web, env)]
        if entry.name == "table" and len(shards) > 1:
            instances = [
                (name, port, metrics, web_port, {**env, **_shard_env(name, reach, port)})
                for name, port, metrics, web_port in shards
            ]
        for name, port, metrics_port, web_port, child_env in instances:
            door = ["--web-port", str(web_port)] if web_port else []
            command = [
                sys.executable, "-m", "felt", "serve", entry.name,
                "--host", args.host, "--port", str(port), "--metrics-port", str(metrics_port), *door,
            ]  # fmt: skip
            child = Child(
                name,
                command,
                child_env,
                logs / f"{name}.log",
                f"{reach}:{port}",
                f"http://{reach}:{metrics_port}/metrics",
                f"{scheme}://{reach}:{web_port}" if web_port else "",
            )
            child.start()
            children.append(child)
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    code = 0
    for child in children:
        assert child.process is not None
        if not _wait_serving(child.address, deadline, trust) or child.process.poll() is not None:
            _say(f"Felt: {child.name} did not become ready on {child.address} (see {child.log_path})")
            stopping, code = True, 1
            break
        internal = _internal(child.address)
        browser = f"web {child.web_url:<24} " if child.web_url else ""
        print(
            f"  {child.name:<11} grpc {child.address:<18} internal {internal:<18} "
            f"{browser}metrics {child.metrics_url}",
            flush=True,
        )
    keeper, page = None, None
    if not stopping and not args.no_tournaments and any(c.name == "tournament" for c in children):
        address = next(c.address for c in children if c.name == "tournament")
        keeper = KeepOpen(address, auth.load_keys(state), args.bot_fill_seconds, trust)
    if not stopping:
        if args.web_base_port:
            print(
                f"Browsers call the web URLs with Connect or gRPC-Web (<web>/<package.Service>/<Method>), "
                f"from pages at {args.web_origins}.",
                flush=True,
            )
        page = _web_page(args, state, children)
        print("Felt is up. Ctrl-C stops every service.", flush=True)
    while not stopping:
        now = time.monotonic()
        for child in children:
            child.watch(now)
        if keeper is not None:
            keeper.check(now)
        time.sleep(POLL_SECONDS)
    if keeper is not None:
        keeper.close()
    if page is not None:
        page.close()
    _terminate(children)
    print("Felt stopped.", flush=True)
    return code


def page_origins(host: str, page_port: int) -> str:
    """The web page's origins (as CORS compares them: scheme, host, port), under every name a browser
    on this machine may give it."""
    hosts = dict.fromkeys(["127.0.0.1", "localhost", host if host not in ("0.0.0.0", "::") else "127.0.0.1"])
    return ",".join(f"http://{h}:{page_port}" for h in hosts)


def _web_page(args: argparse.Namespace, state: Path, children: list[Child]) -> webpage.PageServer | None:
    """The web table's page, calling the children's doors; None when there is none to serve."""
    if not args.web_page_port or not args.web_base_port:
        return None
    if os.environ.get("FELT_ENV", "development") == "production":
        _say("Felt: no web page in production (FELT_ENV=production): its sign-in is for development")
        return None
    doors = {c.name.split("-")[0]: c.web_url for c in reversed(children) if c.web_url}  # table: table-0
    shard_doors = {c.address: c.web_url for c in children if c.name.startswith("table") and c.web_url}
    wallet = f"{_reach(args.host)}:{args.base_port + SERVICES.index('wallet') + INTERNAL_PORT_OFFSET}"
    config = webpage.PageConfig(doors, shard_doors)
    try:
        page = webpage.start_for_stack(args.host, args.web_page_port, config, state, wallet)
    except OSError as exc:
        _say(f"Felt: the web page cannot listen on {args.host}:{args.web_page_port}: {exc}")
        return None
    built = "" if page.built else " (not built: run `make web`, then reload)"
    print(f"  web page    {page.url}{built}  <- open it in a browser to play", flush=True)
    return page


def _development_ca(state: Path) -> tls.TlsFiles:
    """The CA the stack's certificates chain to: FELT_TLS_CA_FILE when the operator gives certificates,
    else the development CA in the data directory, made here once (before the services race for it)."""
    if setting(tls.CA_FILE_ENV, ""):
        return tls.trust_files(state)
    devca.ensure_ca(tls.dev_ca_dir(state))
    return tls.trust_files(state)


def _reach(host: str) -> str:
    """Where this machine reaches a stack bound to `host`: loopback for every interface."""
    return "127.0.0.1" if host in ("", "0.0.0.0", "::", "[::]") else host


def _loopback(host: str) -> bool:
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")


def _internal(address: str) -> str:
    host, _, port = address.rpartition(":")
    return f"{host}:{int(port) + INTERNAL_PORT_OFFSET}"


def _shard_env(name: str, host: str, port: int) -> dict[str, str]:
    return {
        "FELT_TABLE_SHARDED": "1",
        "FELT_TABLE_SHARD_ID": name,
        "FELT_TABLE_ADVERTISE_ADDRESS": f"{host}:{port}",
        "FELT_TABLE_ADVERTISE_INTERNAL_ADDRESS": f"{host}:{port + INTERNAL_PORT_OFFSET}",
    }


def _terminate(children: list[Child]) -> None:
    running = [c.process for c in children if c.process is not None and c.process.poll() is None]
    for process in running:
        process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
    for process in running:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
