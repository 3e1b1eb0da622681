"""Issue 25: three tournament replicas as processes on one PostgreSQL store (FELT_TEST_POSTGRES_URL), with
the table service, the wallet and the dealer. A multi-table tournament and two Sit & Gos run, each
directed by one replica (placed on the one with the fewest); the replica directing the big one is
SIGKILLed mid-run, another takes it over from the log within 15 s, and every tournament ends with places
unique and complete, prizes equal to the pool, and the ledger moved only by buy-ins, fees and prizes (each
outbox step done exactly once: a prize paid twice or a capture repeated would show in the balances).

The clients (the test's operator and readers) call any replica through servicekit.shards, which follows
TOURNAMENT_MOVED to the replica directing a tournament."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import grpc
import pytest
from poker.table.v1 import table_service_pb2 as tpb
from poker.tournament.v1 import tournament_service_pb2 as pb
from poker.tournament.v1 import tournament_service_pb2_grpc as pb_grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from servicekit import auth, shards, testing
from servicekit.errors import details_of

from tests.tournament_service.conftest import TABLE_ENV, Proc, Stack, wait_until

pytestmark = pytest.mark.slow
PG_ENV = "FELT_TEST_POSTGRES_URL"
REPLICAS = 3
MTT_PLAYERS = 18
BUY_IN, FEE = 100, 10
TAKEOVER_SECONDS = 15.0


@dataclass
class Replica(Proc):
    replica_id: str = ""

    @property
    def log(self) -> Path:
        return self.data_dir / f"tournament-{self.replica_id}.log"


@dataclass
class Replicated:
    stack: Stack  # its `tournament` is the first replica; wallet, table and dealer as in the other tests
    replicas: list[Replica]
    database_url: str

    def ops(self, subject: str = "ops", role: auth.Role = auth.Role.OPERATOR) -> Any:
        """A TournamentService stub over every replica's internal port, following TOURNAMENT_MOVED."""
        token = self.stack.token(subject, role)
        pool = shards.ChannelPool(lambda address: testing.channel(address, token))
        seeds = [r.address for r in self.replicas if r.proc is not None and r.proc.poll() is None]
        router = shards.Router(pool, seeds, internal=True)
        return shards.RoutedStub(router, pb_grpc.TournamentServiceStub, key="tournament_id")

    def owner(self, tournament_id: str) -> tuple[str, int, int]:
        """(replica, epoch, expires_ms) of the tournament's lease row, ('', 0, 0) when it has none."""
        import psycopg

        with psycopg.connect(self.database_url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT owner, epoch, expires_ms FROM tn_leases WHERE tournament_id = %s", (tournament_id,)
            ).fetchone()
        return (str(row[0] or ""), int(row[1]), int(row[2])) if row else ("", 0, 0)

    def replica(self, replica_id: str) -> Replica:
        return next(r for r in self.replicas if r.replica_id == replica_id)


@pytest.fixture(scope="module")
def replicated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replicated]:
    admin = os.environ.get(PG_ENV)
    if not admin:
        pytest.skip(f"{PG_ENV} is not set: the tournament replicas need a shared PostgreSQL")
    import psycopg

    schema = "tnr_" + uuid.uuid4().hex[:12]
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    url = f"{admin}{'&' if '?' in admin else '?'}options={quote(f'-csearch_path={schema}')}"
    data_dir = tmp_path_factory.mktemp("felt")
    quiet = {"FELT_LOG_LEVEL": "WARNING"}
    dealer, wallet = Proc("dealer", data_dir, quiet), Proc("wallet", data_dir, quiet)
    table = Proc("table", data_dir, {})
    replicas = [Replica("tournament", data_dir, {}, replica_id=f"tr-{k}") for k in range(REPLICAS)]
    try:
        dealer.start()
        wallet.start()
        table.env = {
            **TABLE_ENV,
            "FELT_DEALER_ADDRESS": dealer.address,
            "FELT_WALLET_ADDRESS": wallet.address,
        }
        table.start()
        for replica in replicas:
            replica.env = {
                "FELT_LOG_LEVEL": "INFO",
                "FELT_TOURNAMENT_TICK_SECONDS": "0.05",
                "TOURNAMENT_DATABASE_URL": url,
                "FELT_TOURNAMENT_REPLICATED": "1",
                "FELT_TOURNAMENT_REPLICA_ID": replica.replica_id,
                "FELT_TOURNAMENT_ADVERTISE_ADDRESS": replica.public_address,
                "FELT_TOURNAMENT_ADVERTISE_INTERNAL_ADDRESS": replica.address,
                "FELT_TABLE_ADDRESS": table.address,
                "FELT_WALLET_ADDRESS": wallet.address,
                "FELT_DEALER_ADDRESS": dealer.address,
            }
            replica.start()
        yield Replicated(Stack(data_dir, dealer, wallet, table, replicas[0]), replicas, url)
    finally:
        for proc in (*replicas, table, wallet, dealer):
            proc.stop()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def levels(count: int = 30, hands: int = 3) -> list[pb.StructureEntry]:
    small = [10, 15, 20, 25, 30, 40, 50, 60, 80, 100, 150, 200, 250, 300, 400, 500, 600, 800, 1000, 1500]
    return [
        pb.StructureEntry(
            level=pb.BlindLevel(small_blind=sb, big_blind=2 * sb, ante=2 * sb if k >= 2 else 0, hands=hands)
        )
        for k, sb in enumerate(small[:count])
    ]


def tournament(ops: Any, tid: str) -> pb.Tournament:
    return ops.GetTournament(pb.GetTournamentRequest(tournament_id=tid)).tournament


def test_a_replica_killed_mid_tournament_loses_it_to_another_and_every_tournament_ends_right(
    replicated: Replicated,
) -> None:
    stack, ops = replicated.stack, replicated.ops()
    now = int(time.time() * 1000)
    mtt = ops.CreateTournament(
        pb.CreateTournamentRequest(
            request_id="mtt",
            name="replicated",
            format=pb.FORMAT_SCHEDULED,
            game=tpb.GAME_NO_LIMIT_HOLDEM,
            seats_per_table=9,
            starting_stack=1_000,
            levels=levels(),
            buy_in=BUY_IN,
            fee=FEE,
            registration_opens_ms=now,
            starts_ms=now + 600_000,
            decision_seconds=3,
        )
    ).tournament.tournament_id
    sngs = [
        ops.CreateTournament(
            pb.CreateTournamentRequest(
                request_id=f"sng-{k}",
                format=pb.FORMAT_SIT_AND_GO,
                game=tpb.GAME_NO_LIMIT_HOLDEM,
                seats_per_table=6,
                buy_in=BUY_IN,
                fee=FEE,
                starting_stack=1_000,
                decision_seconds=3,
            )
        ).tournament.tournament_id
        for k in range(2)
    ]
    # New tournaments go to the replica with the fewest: three tournaments, three replicas.
    owners = {tid: replicated.owner(tid)[0] for tid in (mtt, *sngs)}
    assert sorted(owners.values()) == [r.replica_id for r in replicated.replicas], owners
    # Any replica answers reads; a write at a replica that does not direct the tournament is redirected.
    for replica in replicated.replicas:
        with testing.channel(replica.address, stack.token("ops", auth.Role.OPERATOR)) as channel:
            stub = pb_grpc.TournamentServiceStub(channel)  # type: ignore[no-untyped-call]
            assert (
                stub.GetTournament(pb.GetTournamentRequest(tournament_id=mtt)).tournament.name == "replicated"
            )
            if replica.replica_id != owners[mtt]:
                with pytest.raises(grpc.RpcError) as moved:
                    stub.StartTournament(pb.StartTournamentRequest(request_id="nope", tournament_id=mtt))
                details = details_of(moved.value)
                assert details.reason == "TOURNAMENT_MOVED"
                assert details.metadata["internal_address"] == replicated.replica(owners[mtt]).address

    ops.AddBots(pb.AddBotsRequest(request_id="bots", tournament_id=mtt, count=MTT_PLAYERS))
    started = ops.StartTournament(pb.StartTournamentRequest(request_id="go", tournament_id=mtt)).tournament
    assert started.state == pb.STATE_RUNNING and started.prize_pool == MTT_PLAYERS * BUY_IN
    for k, tid in enumerate(sngs):
        ops.AddBots(pb.AddBotsRequest(request_id=f"bots-{k}", tournament_id=tid, count=6))

    def left() -> int:
        return int(ops.GetStandings(pb.GetStandingsRequest(tournament_id=mtt)).players_left)

    wait_until(lambda: 0 < left() <= MTT_PLAYERS - 3, 240, every=0.2)
    victim = replicated.replica(owners[mtt])
    _, epoch, _ = replicated.owner(mtt)
    before = ops.GetStandings(pb.GetStandingsRequest(tournament_id=mtt))
    victim.kill()
    killed = time.monotonic()
    taken = wait_until(
        lambda: (lambda o: o if o[0] not in ("", victim.replica_id) and o[1] > epoch else None)(
            replicated.owner(mtt)
        ),
        TAKEOVER_SECONDS + 10,
        every=0.1,
    )
    took = time.monotonic() - killed
    print(f"killed {victim.replica_id} at {before.players_left} left; {taken[0]} took over in {took:.1f} s")
    assert took < TAKEOVER_SECONDS
    ops = replicated.ops()  # the survivors
    after = ops.GetStandings(pb.GetStandingsRequest(tournament_id=mtt))
    assert after.players_left <= before.players_left
    assert sum(p.stack for p in after.players) == MTT_PLAYERS * 1_000  # tournament chips: none lost

    # SIGTERM of the new owner: it hands the tournament over before it stops (no wait for its lease).
    if tournament(ops, mtt).state == pb.STATE_RUNNING:
        drained = replicated.replica(taken[0])
        epoch = taken[1]
        stopping = time.monotonic()
        assert drained.proc is not None
        drained.proc.terminate()  # SIGTERM: the drain starts
        third = wait_until(
            lambda: (lambda o: o if o[0] not in ("", drained.replica_id) and o[1] > epoch else None)(
                replicated.owner(mtt)
            ),
            TAKEOVER_SECONDS + 10,
            every=0.1,
        )
        handed = time.monotonic() - stopping
        drained.proc.wait(30)
        print(f"SIGTERM {drained.replica_id}: {third[0]} took over {handed:.1f} s after the signal")
        assert third[0] != victim.replica_id and handed < 8.0  # the lease (10 s) never ran out
        ops = replicated.ops()
    for tid in (mtt, *sngs):
        wait_until(lambda tid=tid: tournament(ops, tid).state == pb.STATE_FINISHED, 300, every=0.5)

    house = 0
    for tid, entries in ((mtt, MTT_PLAYERS), *((s, 6) for s in sngs)):
        final = ops.GetStandings(pb.GetStandingsRequest(tournament_id=tid))
        places = sorted(p.place for p in final.places)
        assert len({p.entry_id for p in final.places}) == entries == len(places)
        assert places == list(range(1, entries + 1)), places  # unique and complete
        assert sum(p.prize for p in final.places) == entries * BUY_IN == tournament(ops, tid).prize_pool
        house += entries * FEE
        # Each bot's account: its entry issued, held and captured, then its prize: the prize exactly once.
        wait_until(lambda tid=tid: stack.pool(tid) == 0, 30)
        for place in final.places:
            assert stack.balance(place.player_id) == place.prize, (tid, place)
    account = stack.account(wpb.ACCOUNT_KIND_HOUSE, "tournaments")
    assert account is not None and int(account.balance) == house
    assert stack.ledger_ok()
    # Every tournament over, its outbox done: no replica holds its lease any more.
    wait_until(lambda: all(replicated.owner(t)[0] == "" for t in (mtt, *sngs)), 30)
