"""`felt up`: the whole stack on this machine, one process per service; Ctrl-C or SIGTERM stops all.

Ports are fixed and documented: evaluator, dealer, wallet, table, tournament in that order from
--base-port (default 50051), metrics likewise from --metrics-base-port (default 9101).

With the tournament service, `felt up` keeps a turbo Sit & Go and a Spin open for registration (bots fill
the seats left --bot-fill-seconds after the first person registers): created at start-up, created again
as soon as one starts (felt.play.tournament names them; `felt play --sng` finds the Sit & Go).

A service that exits is started again, the others keep running: after 1 s, then 2, 4, ... up to 30 s
while it keeps exiting, from 1 s again once it has run for a minute. Each restart is printed, and the
restarted service counts it (felt_service_restarts_total, from FELT_RESTARTS).

`--table-shards N` (N > 1) runs the table service as N shards against one store (issue 15): table-0 on the
table's port, table-k on --base-port + 9 + k (metrics likewise from --metrics-base-port), each advertising
its own address; the store is TABLE_DATABASE_URL when set (PostgreSQL), else the data directory's SQLite
files, shared by the shards' processes (WAL, BEGIN IMMEDIATE and a busy timeout: fine on one machine, the
production store is PostgreSQL). A shard that exits is restarted like any service; meanwhile the others
take its tables over. FELT_TABLE_SHARD_ADDRESSES lists every shard for the other services.
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
from servicekit import auth, client, files, tokens
from servicekit.config import DEFAULT_BASE_PORT, DEFAULT_METRICS_BASE_PORT, SERVICES, data_dir

from felt import registry
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

    def __init__(self, address: str, keys: auth.KeyPair, bot_fill_seconds: int) -> None:
        source = tokens.RenewingToken(keys, "felt-up", auth.Role.OPERATOR)
        self._channel = client.channel(address, source)
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


def shard_ports(base_port: int, metrics_base_port: int, shards: int) -> list[tuple[str, int, int]]:
    """(name, port, metrics port) of each table shard: table-0 on the table's own ports."""
    index = SERVICES.index("table")
    ports = [("table-0", base_port + index, metrics_base_port + index)]
    for k in range(1, shards):
        ports.append(
            (f"table-{k}", base_port + SHARD_PORT_OFFSET + k, metrics_base_port + SHARD_PORT_OFFSET + k)
        )
    return ports


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


def _wait_serving(address: str, deadline: float) -> bool:
    with grpc.insecure_channel(address) as channel:
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
    # Services find each other at the ports this stack uses (FELT_<SERVICE>_ADDRESS).
    for index, name in enumerate(SERVICES):
        env[f"FELT_{name.upper()}_ADDRESS"] = f"{args.host}:{args.base_port + index}"
    shards = shard_ports(args.base_port, args.metrics_base_port, max(1, args.table_shards))
    if len(shards) > 1:
        env["FELT_TABLE_SHARD_ADDRESSES"] = ",".join(f"{args.host}:{port}" for _, port, _ in shards)
    logs = state / "logs"
    logs.mkdir(exist_ok=True)
    print(f"Felt: data directory {state} (service logs in {logs})", flush=True)
    for entry in registry.available():
        index = SERVICES.index(entry.name)
        instances = [(entry.name, args.base_port + index, args.metrics_base_port + index, env)]
        if entry.name == "table" and len(shards) > 1:
            instances = [
                (name, port, metrics, {**env, **_shard_env(name, f"{args.host}:{port}")})
                for name, port, metrics in shards
            ]
        for name, port, metrics_port, child_env in instances:
            command = [
                sys.executable, "-m", "felt", "serve", entry.name,
                "--host", args.host, "--port", str(port), "--metrics-port", str(metrics_port),
            ]  # fmt: skip
            child = Child(
                name,
                command,
                child_env,
                logs / f"{name}.log",
                f"{args.host}:{port}",
                f"http://{args.host}:{metrics_port}/metrics",
            )
            child.start()
            children.append(child)
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    code = 0
    for child in children:
        assert child.process is not None
        if not _wait_serving(child.address, deadline) or child.process.poll() is not None:
            _say(f"Felt: {child.name} did not become ready on {child.address} (see {child.log_path})")
            stopping, code = True, 1
            break
        print(f"  {child.name:<11} grpc {child.address:<18} metrics {child.metrics_url}", flush=True)
    keeper = None
    if not stopping and not args.no_tournaments and any(c.name == "tournament" for c in children):
        address = next(c.address for c in children if c.name == "tournament")
        keeper = KeepOpen(address, auth.load_keys(state), args.bot_fill_seconds)
    if not stopping:
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
    _terminate(children)
    print("Felt stopped.", flush=True)
    return code


def _shard_env(name: str, address: str) -> dict[str, str]:
    return {"FELT_TABLE_SHARDED": "1", "FELT_TABLE_SHARD_ID": name, "FELT_TABLE_ADVERTISE_ADDRESS": address}


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
