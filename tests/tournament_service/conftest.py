"""The dealer, the wallet, the table service and the tournament service as processes on one data
directory (their SQLite files and the development keys), and the clients a test needs: operators, players
(their own tokens), the wallet's view of the money.

The `stack` fixture is one of two deployments (a module asks for both with `pytestmark = DEPLOYMENTS`; a
module that does not gets the first):

- `single-sqlite`: one tournament process and one table service on SQLite, the embedded default;
- `replicated-postgres` (issue 25): three tournament replicas and two table shards on one PostgreSQL
  schema (FELT_TEST_POSTGRES_URL; without it these tests are skipped, loudly). The tests' clients call any
  replica (each stub starts at the next one): reads are answered where they land, writes and
  WatchTournament follow TOURNAMENT_MOVED to the replica directing the tournament (servicekit.shards; a
  watch is opened again from its next seq), table calls follow TABLE_MOVED to their shard. A restart of
  "the tournament service" is a SIGKILL of the replica directing the tournament, which another takes over
  from the log within its lease; "the table service" is both shards.

Each is started once per module."""

from __future__ import annotations

import itertools
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from poker.table.v1 import table_service_pb2 as tpb
from poker.table.v1 import table_service_pb2_grpc as tpb_grpc
from poker.tournament.v1 import tournament_service_pb2 as pb
from poker.tournament.v1 import tournament_service_pb2_grpc as pb_grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import auth, shards, testing
from servicekit.errors import details_of
from servicekit.testing import free_port, fund_player

from services.tournament.store import TournamentStore

ROOT = Path(__file__).resolve().parents[2]
SINGLE, REPLICATED = "single-sqlite", "replicated-postgres"
# A module's `pytestmark` entry: every test of the module against both deployments (one of each per module).
DEPLOYMENTS = pytest.mark.parametrize("stack", [SINGLE, REPLICATED], indirect=True, scope="module")
PG_ENV = "FELT_TEST_POSTGRES_URL"
PG_SKIPPED = (
    f"!!! {PG_ENV} is not set: the tournament checks against the replicated deployment (three tournament"
    f" replicas and two table shards on PostgreSQL) are SKIPPED. Set {PG_ENV}="
    "postgresql://postgres@127.0.0.1:5432/postgres to run them (CI does). !!!"
)
REPLICAS, TABLE_SHARDS = 3, 2
LEASE_SECONDS = 4.0  # short leases keep a takeover quick (the default is 10 s)
TABLE_ENV = {
    "FELT_TABLE_POKER_TABLES": "lobby:NLHE:5/10:200-1000:2",
    "FELT_TABLE_POKER_BOT_PACING": "0",  # bots answer at once: hands unpaced
    "FELT_TABLE_POKER_HAND_PAUSE_MS": "0",
    "FELT_TABLE_RATE_ACT": "off",
    "FELT_LOG_LEVEL": "WARNING",
}


def wait_serving(address: str, proc: subprocess.Popen[bytes], log: Path, seconds: float = 60) -> None:
    with testing.channel(address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                if health.Check(health_pb2.HealthCheckRequest(), timeout=1).status == 1:
                    return
            except grpc.RpcError:
                pass
            if proc.poll() is not None:
                break
            time.sleep(0.1)
    raise AssertionError(f"{address} did not start:\n{log.read_text()[-3000:]}")


@dataclass
class Proc:
    name: str
    data_dir: Path
    env: dict[str, str]
    port: int = field(default_factory=free_port)
    internal_port: int = field(default_factory=free_port)
    metrics_port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        """The internal port (mutual TLS): the other services' and the tests' door."""
        return f"127.0.0.1:{self.internal_port}"

    @property
    def public_address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.data_dir / f"{self.name}.log"

    def start(self) -> None:
        self.spawn()
        self.wait_serving()

    def wait_serving(self) -> None:
        assert self.proc is not None
        wait_serving(self.address, self.proc, self.log)

    def spawn(self) -> None:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    f"services.{self.name}",
                    "--port",
                    str(self.port),
                    "--internal-port",
                    str(self.internal_port),
                    "--metrics-port",
                    str(self.metrics_port),
                    "--data-dir",
                    str(self.data_dir),
                ],
                cwd=ROOT,
                env={**os.environ, "FELT_SHUTDOWN_GRACE_SECONDS": "2", **self.env},
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def metrics(self) -> str:
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5) as page:
            return str(page.read().decode())

    def kill(self) -> None:
        """SIGKILL: no drain, nothing flushed but what was committed."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


def start_together(procs: Sequence[Proc]) -> None:
    """Start processes that do not need each other side by side (the machine's cores shared)."""
    for proc in procs:
        proc.spawn()
    for proc in procs:
        proc.wait_serving()


@dataclass
class Instance(Proc):
    """One of several processes of a service (a replica, a shard): its own id and log."""

    instance: str = ""

    @property
    def log(self) -> Path:
        return self.data_dir / f"{self.name}-{self.instance}.log"

    def metric(self, name: str) -> float:
        """The sum of every sample of `name` (all its labels) as the process serves them now."""
        pattern = re.compile(rf"^{re.escape(name)}(?:{{[^}}]*}})? (\S+)$", re.MULTILINE)
        return sum(float(v) for v in pattern.findall(self.metrics()))


@dataclass
class Stack:
    """The services a test calls. Replicated, `tournament` is the first replica and `table` the first shard
    (`replicas`, `table_shards`: all of them); the methods below hide which deployment it is."""

    data_dir: Path
    dealer: Proc
    wallet: Proc
    table: Proc
    tournament: Proc
    replicas: list[Proc] = field(default_factory=list)
    table_shards: list[Proc] = field(default_factory=list)
    database_url: str = ""
    _turn: Iterator[int] = field(default_factory=itertools.count)
    _pools: dict[tuple[str, auth.Role], shards.ChannelPool] = field(default_factory=dict)

    @property
    def deployment(self) -> str:
        return REPLICATED if self.replicas else SINGLE

    def token(self, subject: str, role: auth.Role = auth.Role.PLAYER) -> str:
        return auth.issue_token(auth.load_keys(self.data_dir), subject, role)

    def _pool(self, subject: str, role: auth.Role) -> shards.ChannelPool:
        """One channel per address for each caller (the routed stubs of a test share them)."""
        if (subject, role) not in self._pools:
            token = self.token(subject, role)
            self._pools[subject, role] = shards.ChannelPool(lambda address: testing.channel(address, token))
        return self._pools[subject, role]

    def tournaments(self, subject: str = "ops", role: auth.Role = auth.Role.OPERATOR) -> Any:
        """A TournamentService stub. Replicated: over every live replica, starting at the next one each
        time (clients call any replica), following TOURNAMENT_MOVED (a watch too: `Followed`)."""
        if not self.replicas:
            return pb_grpc.TournamentServiceStub(
                testing.channel(self.tournament.address, self.token(subject, role))
            )
        live = [r.address for r in self.replicas if r.alive]
        k = next(self._turn) % len(live)
        router = shards.Router(self._pool(subject, role), live[k:] + live[:k], internal=True)
        return Followed(shards.RoutedStub(router, pb_grpc.TournamentServiceStub, key="tournament_id"))

    def tables(self, subject: str) -> Any:
        """A TableService stub for a player; replicated, over both shards, following TABLE_MOVED."""
        if not self.table_shards:
            return tpb_grpc.TableServiceStub(testing.channel(self.table.address, self.token(subject)))
        router = shards.Router(
            self._pool(subject, auth.Role.PLAYER), [s.address for s in self.table_shards], internal=True
        )
        return shards.RoutedStub(router, tpb_grpc.TableServiceStub)

    def wallet_stub(self) -> wpb_grpc.WalletServiceStub:
        return wpb_grpc.WalletServiceStub(
            testing.channel(self.wallet.address, self.token("ops", auth.Role.OPERATOR))
        )

    def fund(self, player: str, chips: int) -> None:
        fund_player(self.wallet_stub(), player, chips)

    def account(self, kind: int, owner: str) -> wpb.Account | None:
        found = self.wallet_stub().ListAccounts(wpb.ListAccountsRequest(kind=kind, owner=owner)).accounts  # type: ignore[arg-type]
        return found[0] if found else None

    def balance(self, player: str) -> int:
        account = self.account(wpb.ACCOUNT_KIND_PLAYER, player)
        return int(account.balance) if account else 0

    def available(self, player: str) -> int:
        account = self.account(wpb.ACCOUNT_KIND_PLAYER, player)
        return int(account.available) if account else 0

    def pool(self, tournament_id: str) -> int:
        account = self.account(wpb.ACCOUNT_KIND_TOURNAMENT_PRIZE_POOL, tournament_id)
        return int(account.balance) if account else 0

    def ledger_ok(self) -> bool:
        summary = self.wallet_stub().GetLedgerSummary(wpb.GetLedgerSummaryRequest())
        return bool(summary.invariants_hold) if hasattr(summary, "invariants_hold") else True

    # ---- replicated: the store's view of who directs what

    def rows(self, sql: str, *args: object) -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.database_url, autocommit=True) as conn:
            return list(conn.execute(sql, args).fetchall())

    def lease(self, tournament_id: str) -> tuple[str, int]:
        """(replica, epoch) of the tournament's lease row; ('', epoch) once retired, ('', 0) without one."""
        found = self.rows("SELECT owner, epoch FROM tn_leases WHERE tournament_id = %s", tournament_id)
        return (str(found[0][0] or ""), int(found[0][1])) if found else ("", 0)

    def director_of(self, tournament_id: str) -> Proc:
        """The process directing the tournament now (the one tournament process, or the lease's owner:
        call it before the tournament is over, when its lease is retired)."""
        if not self.replicas:
            return self.tournament
        owner, _ = self.lease(tournament_id)
        found = [r for r in self.replicas if isinstance(r, Instance) and r.instance == owner]
        assert found, f"{tournament_id}: no replica holds its lease ({owner!r})"
        return found[0]

    # ---- crashes

    def restart_tournament(self, kill: bool = True, tournament_id: str = "") -> None:
        """The tournament service killed (SIGKILL, or stopped: SIGTERM) and started again. Replicated: the
        replica directing `tournament_id`, gone until another replica has taken the tournament over from
        the log (its lease ran out, or was handed over by the drain), as when a node is lost; then it
        comes back with nothing of its own. (Started again at once it would take its own leases back
        under its id, which is the single deployment's restart.)"""
        if not self.replicas:
            self.tournament.kill() if kill else self.tournament.stop()
            self.tournament.start()
            return
        victim = self.director_of(tournament_id)
        owner, epoch = self.lease(tournament_id)
        victim.kill() if kill else victim.stop()

        def taken_over() -> bool:
            now_owner, now_epoch = self.lease(tournament_id)
            return now_owner not in ("", owner) and now_epoch > epoch

        wait_until(taken_over, LEASE_SECONDS + 15, 0.1)
        victim.start()

    def restart_table(self) -> None:
        """The table service SIGKILLed and started again (replicated: the first shard)."""
        self.table.kill()
        self.table.start()

    def stop_tables(self) -> None:
        """The whole table service away: the one process, or every shard."""
        for shard in self.table_shards or [self.table]:
            shard.stop()

    def start_tables(self) -> None:
        start_together(self.table_shards or [self.table])


class Followed:
    """A routed TournamentService stub whose WatchTournament follows the tournament to the replica
    directing it: a stream refused or ended TOURNAMENT_MOVED / MOVING is opened again from the seq after
    the last event it gave (as `felt play` does), within the call's `timeout` when it has one."""

    def __init__(self, routed: shards.RoutedStub) -> None:
        self._routed = routed

    def __getattr__(self, name: str) -> Any:
        return getattr(self._routed, name)

    def WatchTournament(self, request: pb.WatchTournamentRequest, **kwargs: Any) -> Iterator[Any]:
        timeout = kwargs.pop("timeout", None)
        give_up = None if timeout is None else time.monotonic() + timeout
        seq = request.from_seq
        while True:
            again = pb.WatchTournamentRequest()
            again.CopyFrom(request)
            again.from_seq = seq
            left = None if give_up is None else max(0.01, give_up - time.monotonic())
            try:
                for response in self._routed.WatchTournament(again, timeout=left, **kwargs):
                    if response.events:
                        seq = response.events[-1].seq + 1
                    yield response
                return
            except grpc.RpcError as error:
                redirect = shards.redirect_of(error, internal=True)
                if redirect is None or (give_up is not None and time.monotonic() >= give_up):
                    raise
                time.sleep(redirect[2])


@contextmanager
def postgres_schema() -> Iterator[str]:
    """A schema of its own in FELT_TEST_POSTGRES_URL's database, as a URL whose search_path is it."""
    admin = os.environ.get(PG_ENV)
    if not admin:
        pytest.skip(PG_SKIPPED)
    import psycopg

    schema = "tnr_" + uuid.uuid4().hex[:12]
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{admin}{'&' if '?' in admin else '?'}options={quote(f'-csearch_path={schema}')}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@contextmanager
def replicated_stack(data_dir: Path, url: str, lease_seconds: float = LEASE_SECONDS) -> Iterator[Stack]:
    """The dealer and the wallet, TABLE_SHARDS table shards and REPLICAS tournament replicas on the
    PostgreSQL schema of `url` (the tournament log's tables are prefixed tn_, the shards' poker_)."""
    quiet = {"FELT_LOG_LEVEL": "WARNING"}
    dealer, wallet = Proc("dealer", data_dir, quiet), Proc("wallet", data_dir, quiet)
    table_shards = [Instance("table", data_dir, {}, instance=f"table-{k}") for k in range(TABLE_SHARDS)]
    replicas = [Instance("tournament", data_dir, {}, instance=f"tr-{k}") for k in range(REPLICAS)]
    for shard in table_shards:
        shard.env = {
            **TABLE_ENV,
            "FELT_LOG_LEVEL": "INFO",
            "FELT_DEALER_ADDRESS": dealer.address,
            "FELT_WALLET_ADDRESS": wallet.address,
            "TABLE_DATABASE_URL": url,
            "FELT_TABLE_SHARDED": "1",
            "FELT_TABLE_SHARD_ID": shard.instance,
            "FELT_TABLE_ADVERTISE_ADDRESS": shard.public_address,
            "FELT_TABLE_ADVERTISE_INTERNAL_ADDRESS": shard.address,
            "FELT_TABLE_LEASE_SECONDS": str(lease_seconds),
        }
    for replica in replicas:
        replica.env = {
            "FELT_LOG_LEVEL": "INFO",
            "FELT_TOURNAMENT_TICK_SECONDS": "0.05",
            "TOURNAMENT_DATABASE_URL": url,
            "FELT_TOURNAMENT_REPLICATED": "1",
            "FELT_TOURNAMENT_REPLICA_ID": replica.instance,
            "FELT_TOURNAMENT_ADVERTISE_ADDRESS": replica.public_address,
            "FELT_TOURNAMENT_ADVERTISE_INTERNAL_ADDRESS": replica.address,
            "FELT_TOURNAMENT_LEASE_SECONDS": str(lease_seconds),
            "FELT_TABLE_SHARD_ADDRESSES": ",".join(s.address for s in table_shards),
            "FELT_WALLET_ADDRESS": wallet.address,
            "FELT_DEALER_ADDRESS": dealer.address,
        }
    try:
        start_together([dealer, wallet])
        # Not two shards at once: two starting together race to place the configured tables and the loser
        # exits (UniqueViolation on table_leases_pkey: servicekit.leases' _place inserts the lease row it
        # did not find, without ON CONFLICT). The replicas only need one shard to answer.
        table_shards[0].start()
        start_together([*table_shards[1:], *replicas])
        yield Stack(
            data_dir,
            dealer,
            wallet,
            table_shards[0],
            replicas[0],
            list(replicas),
            list(table_shards),
            url,
        )
    finally:
        for proc in (*replicas, *table_shards, wallet, dealer):
            if proc.alive:
                assert proc.proc is not None
                proc.proc.send_signal(signal.SIGCONT)  # a paused one stops too
            proc.stop()


@contextmanager
def single_stack(data_dir: Path) -> Iterator[Stack]:
    quiet = {"FELT_LOG_LEVEL": "WARNING"}
    dealer = Proc("dealer", data_dir, quiet)
    wallet = Proc("wallet", data_dir, quiet)
    table = Proc("table", data_dir, {})
    tournament = Proc(
        "tournament", data_dir, {"FELT_LOG_LEVEL": "INFO", "FELT_TOURNAMENT_TICK_SECONDS": "0.05"}
    )
    table.env = {**TABLE_ENV, "FELT_DEALER_ADDRESS": dealer.address, "FELT_WALLET_ADDRESS": wallet.address}
    tournament.env.update(
        FELT_TABLE_ADDRESS=table.address,
        FELT_WALLET_ADDRESS=wallet.address,
        FELT_DEALER_ADDRESS=dealer.address,
    )
    try:
        start_together([dealer, wallet])
        table.start()
        tournament.start()
        yield Stack(data_dir, dealer, wallet, table, tournament)
    finally:
        for proc in (tournament, table, wallet, dealer):
            proc.stop()


@pytest.fixture(scope="module")
def stack(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """The module's deployment (`DEPLOYMENTS`), started once for its tests."""
    deployment = getattr(request, "param", SINGLE)
    data_dir = tmp_path_factory.mktemp("felt")
    if deployment == SINGLE:
        with single_stack(data_dir) as single:
            yield single
        return
    with postgres_schema() as url, replicated_stack(data_dir, url) as replicated:
        yield replicated
        assert_clients_called_any_replica(replicated)


READS = frozenset({"GetTournament", "GetStandings", "GetMyTable", "ListTournaments"})


def assert_clients_called_any_replica(stack: Stack) -> None:
    """The module's tests did run against the replicas as clients do: every replica up now answered reads,
    and writes sent to a replica that does not direct the tournament were redirected (TOURNAMENT_MOVED)."""
    redirected = 0.0
    for replica in stack.replicas:
        if not replica.alive:
            continue
        text = replica.metrics()
        handled = re.findall(
            r'^grpc_server_handled_total\{[^}]*grpc_method="(\w+)"[^}]*\} (\S+)$', text, re.M
        )
        assert sum(float(n) for method, n in handled if method in READS) > 0, f"{replica.log.name}: no read"
        moved = re.findall(
            r'^poker_tournament_routed_away_total\{reason="TOURNAMENT_MOVED"\} (\S+)$', text, re.M
        )
        redirected += sum(float(n) for n in moved)
    assert redirected > 0, "no write was redirected: the clients called only the replicas directing"


def reason(error: grpc.RpcError) -> str:
    return details_of(error).reason


def retrying(call: Callable[[], Any], seconds: float = 20.0) -> Any:
    """`call()`, again while a service just restarted is not reachable yet (UNAVAILABLE)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return call()
        except grpc.RpcError as error:
            if error.code() is not grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def wait_until(check: Callable[[], Any], seconds: float = 60.0, every: float = 0.05) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every)
    raise AssertionError("timed out")


_ = tpb


def assert_places_complete(places: Sequence[pb.Place], entries: int) -> None:
    """Every entry placed once, and the places a ranking of them all: place `v` is 1 + the entries placed
    better; tied players (busted in one hand with equal stacks, or in one hand-for-hand round) share the
    better place (`shared` of them; the places they cover are skipped), as the payouts rule has it."""
    assert len({p.entry_id for p in places}) == len(places) == entries, [p.entry_id for p in places]
    for place in places:
        better = sum(1 for p in places if p.place < place.place)
        sharing = sum(1 for p in places if p.place == place.place)
        assert place.place == better + 1 and place.shared == sharing, (place, sorted(p.place for p in places))


# ---- scripted players ------------------------------------------------------------------------------


class Scripted:
    """A person played by a script: follows GetMyTable (table moves by itself), acts at its table through
    TableService with its own token (checks or calls, now and then all in), until eliminated or the end."""

    def __init__(self, stack: Stack, tournament_id: str, player: str, all_in_every: int = 6) -> None:
        import threading

        self.stack, self.tid, self.player = stack, tournament_id, player
        self.all_in_every = all_in_every
        self.stop = threading.Event()
        self.acted = 0
        self.tables_seen: set[str] = set()
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Scripted:
        self.thread.start()
        return self

    def _run(self) -> None:
        tournaments = self.stack.tournaments(self.player, auth.Role.PLAYER)
        tables = self.stack.tables(self.player)
        table_id, checked = "", 0.0
        n = 0
        while not self.stop.is_set():
            try:
                if not table_id or time.monotonic() - checked > 0.5:
                    mine = tournaments.GetMyTable(pb.GetMyTableRequest(tournament_id=self.tid))
                    checked = time.monotonic()
                    if mine.place or (not mine.table_id and not mine.moving and not mine.waiting_for_start):
                        return
                    table_id = mine.table_id
                    if table_id:
                        self.tables_seen.add(table_id)
                if not table_id:
                    time.sleep(0.05)
                    continue
                view = tables.GetTableView(tpb.GetTableViewRequest(table_id=table_id)).view
                if not (view.hand_in_play and view.your_seat and view.seat_to_act == view.your_seat):
                    time.sleep(0.03)
                    continue
                n += 1
                legal = view.legal
                if self.all_in_every and n % self.all_in_every == 0 and legal.can_all_in:
                    kind = tpb.ACTION_KIND_ALL_IN
                else:
                    kind = tpb.ACTION_KIND_CHECK if legal.can_check else tpb.ACTION_KIND_CALL
                tables.Act(
                    tpb.ActRequest(
                        request_id=f"{self.player}-{table_id}-{view.version}-{n}",
                        table_id=table_id,
                        expected_version=view.version,
                        kind=kind,
                    )
                )
                self.acted += 1
            except grpc.RpcError as error:
                why = reason(error)
                if why not in (
                    "STALE_VERSION",
                    "NOT_YOUR_TURN",
                    "TIME_EXPIRED",
                    "NO_HAND_IN_PROGRESS",
                    "NOT_SEATED",
                    "TABLE_NOT_FOUND",
                    "HAND_OVER",
                    "TABLE_CLOSED",
                    "NOT_IN_HAND",
                ) and error.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                    self.errors.append(f"{why or error.code()}: {details_of(error).message}")
                table_id = "" if why in ("NOT_SEATED", "TABLE_NOT_FOUND", "TABLE_CLOSED") else table_id
                time.sleep(0.1)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[TournamentStore]:
    """A tournament store on SQLite, for the tests of the runtime in process (test_store.py has its own,
    on both backends)."""
    opened = TournamentStore(tmp_path / "t.sqlite3")
    yield opened
    opened.close()
