"""Issue 15: three table shards on one PostgreSQL store, with the dealer and the wallet, each its own
process; bot tables and casino rounds on every shard (casino players are gRPC clients here, following
their tables with servicekit.shards).

- SIGKILL one shard: every table it served is served again by the others within 15 s (lease + scan), its
  hand resumed with the same shoe or voided with the chips returned; a felt play session at one of them
  rides the takeover out (its calls and its stream follow the table).
- SIGSTOP one shard past its lease: the others take its tables; SIGCONT: it commits nothing for them (its
  writes are fenced, it answers TABLE_MOVED for them and drops them).
- At the end: the wallet's ledger holds its invariants, every poker escrow equals the chips on its table,
  no casino hold is left, every hand number was settled once (no hand twice in the histories).

Needs FELT_TEST_POSTGRES_URL (CI sets it); about a minute and a half. A short lease (4 s) keeps it quick:
the 15 s bound is checked against the lease and scan of the test, and measured with the default lease in
bench/table_shards.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from felt.play.session import Console, Session
from poker.table.v1 import casino_service_pb2 as cpb
from poker.table.v1 import casino_service_pb2_grpc as cpb_grpc
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import auth, errors, shards, testing
from servicekit.clients.tables import TableStubs
from servicekit.testing import ServiceProcess, fund_player, table_shard

ROOT = Path(__file__).resolve().parents[2]
PG_URL = os.environ.get("FELT_TEST_POSTGRES_URL", "")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not PG_URL, reason="!!! FELT_TEST_POSTGRES_URL is not set: the table shards test is SKIPPED !!!"
    ),
]
LEASE_SECONDS = 4.0
SCAN_SECONDS = 1.0
TAKEOVER_BOUND_SECONDS = 15.0
POKER = [f"bots-{k}" for k in range(6)]
CASINO = [f"tcp-{k}" for k in range(3)] + [f"ch-{k}" for k in range(3)]
GAMES = {
    "tcp": ({"ANTE": 5}, [cpb.CASINO_DECISION_PLAY]),
    "ch": ({"ANTE": 5}, [cpb.CASINO_DECISION_CALL]),
}
LEFT = re.compile(r"You left the table: (\d+) chips go back to your wallet\.")


QUIET = {"FELT_SHUTDOWN_GRACE_SECONDS": "2", "FELT_LOG_LEVEL": "WARNING"}


@dataclass
class Stack:
    data_dir: Path
    db_url: str
    wallet: ServiceProcess
    shards: list[ServiceProcess]
    casino_players: list[CasinoPlayer] = field(default_factory=list)

    def token(self, subject: str, role: auth.Role) -> str:
        return auth.issue_token(auth.load_keys(self.data_dir), subject, role)

    def router(self, subject: str = "ops", role: auth.Role = auth.Role.OPERATOR) -> shards.Router:
        token = self.token(subject, role)
        pool = shards.ChannelPool(lambda address: testing.channel(address, token))
        return shards.Router(pool, [s.address for s in self.shards])

    def tables(self, subject: str = "ops", role: auth.Role = auth.Role.OPERATOR) -> Any:
        return shards.RoutedStub(self.router(subject, role), pb_grpc.TableServiceStub)

    def casino(self, subject: str = "ops", role: auth.Role = auth.Role.OPERATOR) -> Any:
        return shards.RoutedStub(self.router(subject, role), cpb_grpc.CasinoServiceStub)

    def wallet_stub(self) -> wpb_grpc.WalletServiceStub:
        token = self.token("ops", auth.Role.OPERATOR)
        return wpb_grpc.WalletServiceStub(testing.channel(self.wallet.address, token))  # type: ignore[no-untyped-call]

    def fund(self, player: str, chips: int) -> None:
        fund_player(self.wallet_stub(), player, chips)

    def account(self, kind: int, owner: str) -> wpb.Account | None:
        found = self.wallet_stub().ListAccounts(wpb.ListAccountsRequest(kind=kind, owner=owner)).accounts  # type: ignore[arg-type]
        return found[0] if found else None

    def owners(self) -> dict[str, str]:
        """kind/table_id -> the live owner's shard id ("" when nobody holds it), from the store."""
        import psycopg

        now = time.time_ns() // 1_000_000
        with psycopg.connect(self.db_url) as conn:
            rows = conn.execute("SELECT kind, table_id, owner, expires_ms FROM table_leases").fetchall()
        return {f"{k}/{t}": (o or "") if e > now else "" for k, t, o, e in rows}

    def epochs(self) -> dict[str, tuple[str, int]]:
        """kind/table_id -> (owner, fencing epoch) as the lease rows have them."""
        import psycopg

        with psycopg.connect(self.db_url) as conn:
            rows = conn.execute("SELECT kind, table_id, owner, epoch FROM table_leases").fetchall()
        return {f"{k}/{t}": (o or "", int(e)) for k, t, o, e in rows}

    def lease_rows(self, keys: list[str]) -> dict[str, object]:
        """For a failure message: the lease rows of `keys` (owner, epoch, ms until they expire), every
        shard's membership row (ms since its heartbeat, draining), and the sessions holding locks on the
        lease rows (a takeover skips locked rows) with their state and query."""
        import psycopg

        now = time.time_ns() // 1_000_000
        with psycopg.connect(self.db_url) as conn:
            leases = conn.execute(
                "SELECT kind, table_id, owner, epoch, expires_ms FROM table_leases"
            ).fetchall()
            shards = conn.execute("SELECT shard_id, heartbeat_ms, draining FROM table_shards").fetchall()
            locks = conn.execute(
                "SELECT a.pid, a.state, now() - a.state_change, left(a.query, 120) FROM pg_locks l"
                " JOIN pg_class c ON c.oid = l.relation JOIN pg_stat_activity a ON a.pid = l.pid"
                " WHERE c.relname = 'table_leases' AND a.pid <> pg_backend_pid()"
            ).fetchall()
        rows: dict[str, object] = {
            f"{k}/{t}": (o, e, x - now) for k, t, o, e, x in leases if f"{k}/{t}" in keys
        }
        rows["shards"] = [(sid, now - hb, bool(d)) for sid, hb, d in shards]
        rows["lease_locks"] = [(pid, state, str(age), query) for pid, state, age, query in locks]
        return rows

    def held_by(self, shard: str) -> list[str]:
        return sorted(key for key, owner in self.owners().items() if owner == shard)


class CasinoPlayer(threading.Thread):
    """Plays rounds at one casino table as fast as answers come, through shard moves."""

    def __init__(self, stack: Stack, table_id: str) -> None:
        super().__init__(daemon=True, name=f"casino-{table_id}")
        self.table_id, self.player = table_id, f"cp-{table_id}"
        stack.fund(self.player, 1_000_000)
        self.stub = stack.casino(self.player, auth.Role.PLAYER)
        self.stop = threading.Event()
        self.rounds = 0
        self.errors: list[str] = []
        self._n = 0

    def _rid(self) -> str:
        self._n += 1
        return f"{self.player}-{self._n}"

    def run(self) -> None:
        wagers, decisions = GAMES[self.table_id.split("-")[0]]
        stub, table = self.stub, self.table_id
        stub.JoinCasinoTable(cpb.JoinCasinoTableRequest(request_id=self._rid(), table_id=table, seat=1))
        while not self.stop.is_set():
            try:
                round_view = stub.GetRound(cpb.GetRoundRequest(table_id=table)).round
                if round_view.phase == "BETTING":
                    bets = [cpb.Bet(kind=k, amount=v) for k, v in wagers.items()]
                    stub.PlaceBets(
                        cpb.PlaceBetsRequest(request_id=self._rid(), table_id=table, seat=1, bets=bets)
                    )
                    round_view = stub.DealRound(
                        cpb.DealRoundRequest(request_id=self._rid(), table_id=table)
                    ).round
                while round_view.phase not in ("SETTLED", "VOIDED", "BETTING"):
                    legal = {d.decision for s in round_view.seats if s.own for d in s.legal_decisions}
                    if not legal:
                        time.sleep(0.1)
                        round_view = stub.GetRound(cpb.GetRoundRequest(table_id=table)).round
                        continue
                    choice = next(d for d in (*decisions, cpb.CASINO_DECISION_CHECK) if d in legal)
                    round_view = stub.Decide(
                        cpb.DecideRequest(request_id=self._rid(), table_id=table, seat=1, decision=choice)
                    ).round
                self.rounds += 1
                time.sleep(0.2)
            except grpc.RpcError as error:  # a round refused mid-move (voided, new round): go on
                details = errors.details_of(error)
                self.errors.append(f"{details.code.name} {details.reason}")
                time.sleep(0.3)
        stub.LeaveCasinoTable(cpb.LeaveCasinoTableRequest(request_id=self._rid(), table_id=table, seat=1))


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    import psycopg

    data_dir = tmp_path_factory.mktemp("shards")
    db = f"felt_shards_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {db}")
    db_url = PG_URL.rsplit("/", 1)[0] + f"/{db}"
    procs: list[ServiceProcess] = []
    try:
        dealer = ServiceProcess("dealer", data_dir, cwd=ROOT, env=QUIET)
        wallet = ServiceProcess("wallet", data_dir, cwd=ROOT, env=QUIET)
        for p in (dealer, wallet):
            p.start()
            procs.append(p)
        env = {
            **QUIET,
            "FELT_LOG_LEVEL": "INFO",
            "FELT_DEALER_ADDRESS": dealer.address,
            "FELT_WALLET_ADDRESS": wallet.address,
            "TABLE_DATABASE_URL": db_url,
            "FELT_TABLE_SHARDED": "1",
            "FELT_TABLE_LEASE_SECONDS": str(LEASE_SECONDS),
            "FELT_TABLE_SHARD_SCAN_SECONDS": str(SCAN_SECONDS),
            "FELT_TABLE_POKER_TABLES": ",".join(f"{t}:NLHE:5/10:200-1000:6:bots=5" for t in POKER),
            "FELT_TABLE_CASINO_TABLES": ",".join(
                f"{t}:{'THREE_CARD_POKER' if t.startswith('tcp') else 'CASINO_HOLDEM'}:1" for t in CASINO
            ),
            "FELT_TABLE_POKER_BOT_PACING": "0",
            "FELT_TABLE_POKER_HAND_PAUSE_MS": "300",
            "FELT_TABLE_BETTING_SECONDS": "5",
            "FELT_TABLE_DECISION_SECONDS": "5",
            "FELT_TABLE_RATE_ACT": "off",
        }
        table_shards = [table_shard(f"table-{k}", data_dir, cwd=ROOT, env=env) for k in range(3)]
        for p in table_shards:
            p.start()
            procs.append(p)
        stack = Stack(data_dir, db_url, wallet, table_shards)
        # The first shard placed every configured table; the others get their share within a few scans.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            held = [stack.held_by(s.name) for s in table_shards]
            if all(
                any(k.startswith("poker/") for k in h) and any(k.startswith("casino/") for k in h)
                for h in held
            ):
                break
            time.sleep(0.5)
        else:
            raise AssertionError(f"tables not spread over the shards: {stack.owners()}")
        print(f"shards: {[(s.name, stack.held_by(s.name)) for s in table_shards]}")
        stack.casino_players = [CasinoPlayer(stack, t) for t in CASINO]
        for player in stack.casino_players:
            player.start()
        yield stack
    finally:
        for p in reversed(procs):
            p.stop()
        for p in procs:
            print(f"--- {p.name} log (tail) ---\n{p.log.read_text()[-1500:] if p.log.exists() else ''}")
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")


def _troubles(stack: Stack) -> dict[str, list[str]]:
    """Each shard's last warnings and errors (its lease and store trouble), for a failure's message."""
    found = {}
    for shard in stack.shards:
        text = shard.log.read_text() if shard.log.exists() else ""
        lines = [
            line for line in text.splitlines() if '"level": "warning"' in line or '"level": "error"' in line
        ]
        found[shard.name] = [line[:300] for line in lines[-12:]]
    return found


def _stacks(stack: Stack, paused: ServiceProcess) -> dict[str, str]:
    """For a failure's message: every running shard's threads as SIGUSR1 dumps them (what each waits for)
    and its last lease lines."""
    sizes = {s.name: s.log.stat().st_size for s in stack.shards if s is not paused and s.log.exists()}
    for shard in stack.shards:
        if shard.name in sizes:
            shard.signal(signal.SIGUSR1)
    time.sleep(1.0)
    found = {}
    for shard in stack.shards:
        if shard.name in sizes:
            text = shard.log.read_bytes()[sizes[shard.name] :].decode(errors="replace")
            leases = [line[:240] for line in shard.log.read_text().splitlines() if "table_lease" in line]
            with urllib.request.urlopen(shard.metrics_url, timeout=5) as reply:
                metrics = reply.read().decode()
            ages = [line for line in metrics.splitlines() if line.startswith("poker_table_lease_renewal_age")]
            found[shard.name] = f"keeper rounds {ages}\n" + "\n".join(leases[-8:]) + "\n" + text[-6000:]
    return found


def _hand_of(stub: Any, table_id: str) -> int:
    return int(stub.GetTableView(pb.GetTableViewRequest(table_id=table_id)).view.hand_number)


def _served_again(stack: Stack, tables: list[str], since: float) -> dict[str, float]:
    """Seconds from `since` until each table answered at a shard again and moved on (a new hand for a
    poker table, a round view for a casino table)."""
    poker, casino = stack.tables(), stack.casino()
    start_hand = {}
    for key in tables:
        kind, table_id = key.split("/")
        if kind == "poker":
            start_hand[key] = _hand_of(poker, table_id)
    times: dict[str, float] = {}
    deadline = time.monotonic() + 40
    while len(times) < len(tables) and time.monotonic() < deadline:
        for key in tables:
            if key in times:
                continue
            kind, table_id = key.split("/")
            try:
                if kind == "poker":
                    if _hand_of(poker, table_id) > start_hand[key]:
                        times[key] = time.monotonic() - since
                else:
                    casino.GetRound(cpb.GetRoundRequest(table_id=table_id))
                    times[key] = time.monotonic() - since
            except grpc.RpcError:
                pass
        time.sleep(0.1)
    return times


def _busiest(stack: Stack, alive: list[ServiceProcess]) -> ServiceProcess:
    return max(alive, key=lambda s: len(stack.held_by(s.name)))


def test_sigkill_a_shard_every_table_is_served_again_within_15_s_and_felt_play_rides_it_out(
    stack: Stack,
) -> None:
    victim = _busiest(stack, stack.shards)
    lost = stack.held_by(victim.name)
    poker_lost = [k.split("/")[1] for k in lost if k.startswith("poker/")]
    assert poker_lost, lost
    # A felt play session at one of the victim's poker tables, through the routed stub.
    stack.fund("ana", 1_000)
    lines: list[str] = []
    killed = threading.Event()
    after_kill = [0]  # turns the player was offered after the kill

    def read(prompt: str) -> str:
        if killed.is_set() and stack_served.is_set():
            after_kill[0] += 1
            if after_kill[0] > 3:
                return "q"
        offer = next((line for line in reversed(lines) if line.startswith("Your turn (")), "")
        return "x" if "x check" in offer else "f"

    stack_served = threading.Event()
    session = Session(stack.tables("ana", auth.Role.PLAYER), poker_lost[0], Console(read, lines.append), 500)
    result: list[int] = []
    player = threading.Thread(target=lambda: result.append(session.run()), daemon=True)
    player.start()
    time.sleep(3)
    killed_at = time.monotonic()
    victim.signal(signal.SIGKILL)
    victim.proc.wait()  # type: ignore[union-attr]
    killed.set()
    times = _served_again(stack, lost, killed_at)
    stack_served.set()
    print(
        f"takeover after SIGKILL of {victim.name}: "
        + ", ".join(f"{k} {v:.1f} s" for k, v in sorted(times.items()))
    )
    assert set(times) == set(lost), f"not served again: {sorted(set(lost) - set(times))}"
    assert max(times.values()) < TAKEOVER_BOUND_SECONDS
    # felt play followed the table to its new shard and played on; the player leaves with the stack.
    deadline = time.monotonic() + 60
    while player.is_alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    out = "\n".join(lines)
    assert result == [0], out[-3000:]
    assert after_kill[0] > 3, out[-3000:]  # it was offered turns at the table's new shard, and played them
    returned = LEFT.search(out)
    assert returned is not None, out[-3000:]
    # The shard comes back (a restarted pod): it is given tables again.
    victim.start()
    deadline = time.monotonic() + 30
    while not stack.held_by(victim.name) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert stack.held_by(victim.name)


def test_a_paused_shard_loses_its_tables_and_commits_nothing_for_them_after(stack: Stack) -> None:
    victim = _busiest(stack, stack.shards)
    held = stack.held_by(victim.name)
    fenced_before = victim.metric("poker_table_fenced_writes_total") + victim.metric(
        "poker_table_lease_losses_total"
    )
    victim.signal(signal.SIGSTOP)
    stopped_at = time.monotonic()
    try:
        # A lease lasts LEASE_SECONDS; the others take the tables within a few renewal rounds of that. 60 s
        # leaves room for a machine busy with the rest of the suite (30 s once ran out with one table left).
        deadline = stopped_at + 60
        while time.monotonic() < deadline:
            owners = stack.owners()
            if all(owners.get(k) not in ("", victim.name) for k in held):
                break
            time.sleep(0.3)
        orphans = [k for k in held if owners.get(k) in ("", victim.name)]
        if orphans:  # the whole story on stdout (pytest shows it with the failure; a message is cut short)
            print(f"orphaned: {orphans}\nlease rows: {stack.lease_rows(orphans)}\nowners: {owners}")
            print(f"warnings and errors: {_troubles(stack)}")
            for name, dump in _stacks(stack, victim).items():
                print(f"--- {name}: keeper rounds, lease lines, thread stacks ---\n{dump}")
        assert not orphans, (orphans, stack.lease_rows(orphans))
        taken = time.monotonic() - stopped_at
        print(f"{victim.name} paused: its {len(held)} tables taken over after {taken:.1f} s")
        poker = stack.tables()
        hands = {k: _hand_of(poker, k.split("/")[1]) for k in held if k.startswith("poker/")}
        taken_at = stack.epochs()
    finally:
        victim.signal(signal.SIGCONT)
    time.sleep(LEASE_SECONDS)
    # It found out (a renewal or a write refused by the fence) and dropped them.
    after = victim.metric("poker_table_fenced_writes_total") + victim.metric("poker_table_lease_losses_total")
    assert after > fenced_before
    direct = pb_grpc.TableServiceStub(testing.channel(victim.address, stack.token("ops", auth.Role.OPERATOR)))  # type: ignore[no-untyped-call]
    now = stack.epochs()
    for key in held:
        kind, table_id = key.split("/")
        if kind != "poker":
            continue
        owner, epoch = now[key]
        if owner == victim.name:
            # Given back to it since (it holds less than its share): a new lease, loaded from the log.
            assert epoch > taken_at[key][1], (key, now[key], taken_at[key])
        else:
            with pytest.raises(grpc.RpcError) as refused:
                direct.GetTableView(pb.GetTableViewRequest(table_id=table_id))
            assert errors.details_of(refused.value).reason in ("TABLE_MOVED", "TABLE_MOVING")
        # The log goes on from where the new owner had it: nothing of the paused shard came in between.
        assert _hand_of(poker, table_id) >= hands[key]


def test_a_drained_shard_hands_its_tables_over_before_it_exits(stack: Stack) -> None:
    """SIGTERM: the shard releases its leases first, so the others serve its tables well before a lease
    would have expired, and it exits 0."""
    victim = _busiest(stack, stack.shards)
    held = stack.held_by(victim.name)
    assert held
    # A stream of one of its tables, held at the shard itself: it ends saying where to resume from.
    watched = next(k.split("/")[1] for k in held if k.startswith("poker/"))
    direct = pb_grpc.TableServiceStub(testing.channel(victim.address, stack.token("ops", auth.Role.OPERATOR)))  # type: ignore[no-untyped-call]
    stream = direct.WatchTable(pb.WatchTableRequest(table_id=watched, from_seq=1))
    ended: list[grpc.RpcError] = []
    seen = [0]

    def follow() -> None:
        try:
            for reply in stream:
                seen[0] = max([seen[0], *(e.seq for e in reply.events)])
        except grpc.RpcError as error:
            ended.append(error)

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    time.sleep(1)
    drained_at = time.monotonic()
    victim.signal(signal.SIGTERM)
    times = _served_again(stack, held, drained_at)
    follower.join(10)
    assert ended, "the stream of a drained table did not end"
    details = errors.details_of(ended[0])
    assert details.reason in ("TABLE_MOVING", "TABLE_MOVED"), details
    assert int(details.metadata["from_seq"]) == seen[0] + 1  # the next event, at the new shard
    assert victim.proc is not None and victim.proc.wait(30) == 0
    print(f"{victim.name} drained: " + ", ".join(f"{k} {v:.1f} s" for k, v in sorted(times.items())))
    assert set(times) == set(held), f"not served again: {sorted(set(held) - set(times))}"
    # Handed over, not expired: the slowest table came back before its lease could have run out.
    assert max(times.values()) < LEASE_SECONDS + SCAN_SECONDS
    victim.start()


def test_no_chip_is_lost_or_duplicated_and_every_hand_is_settled_once(stack: Stack) -> None:
    for player in stack.casino_players:
        player.stop.set()
    for player in stack.casino_players:
        player.join(30)
    rounds = {p.table_id: p.rounds for p in stack.casino_players}
    print(f"casino rounds per table: {rounds}")
    assert all(n > 0 for n in rounds.values()), (rounds, [p.errors[:3] for p in stack.casino_players])
    wallet = stack.wallet_stub()
    summary = wallet.GetLedgerSummary(wpb.GetLedgerSummaryRequest())
    assert summary.invariants_hold, list(summary.violations)
    assert sum(t.balance for t in summary.totals) == 0
    # No casino hold is left: every bet was settled or returned.
    for player in stack.casino_players:
        deadline = time.monotonic() + 20
        account = stack.account(wpb.ACCOUNT_KIND_PLAYER, player.player)
        while account is not None and account.pending and time.monotonic() < deadline:
            time.sleep(0.3)
            account = stack.account(wpb.ACCOUNT_KIND_PLAYER, player.player)
        assert account is not None and account.pending == 0, player.player
    # The services' client (servicekit.clients.tables, the tournament service's director client).
    tables = TableStubs(
        [s.address for s in stack.shards],
        stack.token("ops", auth.Role.OPERATOR),
        tls_files=testing.client_files(),  # the shards' internal ports (mutual TLS)
    )
    poker = tables.tables
    for table_id in POKER:
        # The escrow equals the chips on the table (stacks and chips in the hand), once it settles.
        def balanced(table_id: str = table_id) -> bool:
            view = poker.GetTableView(pb.GetTableViewRequest(table_id=table_id)).view
            on_table = sum(p.seat.stack + (p.committed if view.hand_in_play else 0) for p in view.players)
            escrow = stack.account(wpb.ACCOUNT_KIND_TABLE_ESCROW, f"table:{table_id}")
            return escrow is not None and escrow.balance == on_table and escrow.pending == 0

        _wait(balanced, 20, f"escrow of {table_id}")
        # Every hand number once in the histories: settled exactly once (or voided).
        listed = poker.ListHandHistories(pb.ListHandHistoriesRequest(table_id=table_id, page_size=100))
        numbers = [h.hand_number for h in listed.hands]
        assert len(numbers) == len(set(numbers)), table_id
        assert numbers, table_id


def test_the_services_aio_watch_follows_each_table_to_its_shard(stack: Stack) -> None:
    """The tournament director's table watches (grpc.aio, TableStubs.watch_table: a stream per table on
    one event loop) follow a table to its shard as the synchronous stream does: a watch at a shard that
    does not serve the table ends with TABLE_MOVED (or UNAVAILABLE at a stopped one), the router learns,
    and the next watch is served; `only` leaves out every other kind."""
    tables = TableStubs(
        [s.address for s in stack.shards],
        stack.token("ops", auth.Role.OPERATOR),
        tls_files=testing.client_files(),
    )
    refused: list[str] = []

    async def first(table_id: str) -> pb.TableEvent:
        request = pb.WatchTableRequest(table_id=table_id, from_seq=1, only=["hand_started"])
        for _ in range(10):
            try:
                async for response in tables.watch_table(request):
                    return response.events[0]
            except grpc.aio.AioRpcError as error:
                refused.append(errors.details_of(error).reason or error.code().name)
                await asyncio.sleep(0.2)
        raise AssertionError(f"no watch of {table_id} served: {refused}")

    async def every() -> list[pb.TableEvent]:
        try:
            return await asyncio.gather(*(first(t) for t in POKER))
        finally:
            await tables.close_aio()

    events = asyncio.run(every())
    assert [e.WhichOneof("event") for e in events] == ["hand_started"] * len(POKER)
    assert tables.router.redirects > 0 and "TABLE_MOVED" in refused  # some table is not on the first shard


def _wait(check: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except grpc.RpcError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"{what} never held")
