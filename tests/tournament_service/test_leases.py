"""One owner per tournament (issue 25), on the store's two backends (SQLite; PostgreSQL when
FELT_TEST_POSTGRES_URL is set): every write of a tournament's rows passes its lease's fence in the same
transaction (the table shards' servicekit.leases), a new tournament goes to the live replica with the
fewest, a replica that stops renewing loses its tournaments to the others, and a finished tournament's
lease is retired."""

from __future__ import annotations

import os
import secrets
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from services.tournament.replicas import MOVED, MOVING, FencedOut, Replicas, this_replica
from services.tournament.store import Change, TournamentStore

URLS = ["", *([os.environ["FELT_TEST_POSTGRES_URL"]] if os.environ.get("FELT_TEST_POSTGRES_URL") else [])]
TTL = 10_000


class Clock:
    def __init__(self) -> None:
        self.ms = 1_800_000_000_000

    def __call__(self) -> int:
        return self.ms


@pytest.fixture(params=URLS, ids=lambda url: "postgres" if url else "sqlite")
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[TournamentStore]]:
    """Three stores on one database (three replicas): a file of the test's own, or a PostgreSQL schema of
    its own (its search_path), dropped after."""
    url, schema = str(request.param), ""
    if url:
        import psycopg

        schema = "tnl_" + uuid.uuid4().hex[:12]
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        url = f"{url}{'&' if '?' in url else '?'}options={quote(f'-csearch_path={schema}')}"
    opened = [TournamentStore(tmp_path / "t.sqlite3", url) for _ in range(3)]
    yield opened
    for store in opened:
        store.close()
    if schema:
        with psycopg.connect(str(request.param), autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def replica(store: TournamentStore, name: str, clock: Clock) -> Replicas:
    replicas = Replicas(
        store.database, this_replica(name, f"{name}:1", f"{name}:2"), replicated=True, ttl_ms=TTL
    )
    replicas.leases._clock = clock
    replicas.leases.join()
    store.leases = replicas.leases
    return replicas


def create(store: TournamentStore, here: bool = False) -> tuple[str, str]:
    tid = f"tn_{secrets.token_hex(6)}"
    owner = store.create(tid, 1, "sit_and_go", "registering", {"last_seq": 0}, None, here=here)
    return tid, owner


def change(tid: str, n: int) -> Change:
    return Change(tid, "registering", {"last_seq": n}, events=[(n, b"e")], outbox=[(n, '{"k":"x"}')])


def test_the_owner_writes_and_a_replica_that_lost_the_lease_commits_nothing(
    stores: list[TournamentStore],
) -> None:
    clock = Clock()
    a, b = replica(stores[0], "a", clock), replica(stores[1], "b", clock)
    tid, owner = create(stores[0], here=True)
    assert owner == a.replica.shard_id and a.holds(tid)
    stores[0].commit(change(tid, 1))
    # b does not hold it: its write is refused before it reaches the database.
    with pytest.raises(FencedOut):
        stores[1].commit(change(tid, 2))
    # a stops renewing (paused); past its lease b takes it over, raising the epoch.
    clock.ms += TTL + 1
    assert b.leases.take_over(10) == [tid]
    # a, resumed, still believes it holds the lease: the fence in its transaction refuses the write.
    assert a.holds(tid)
    with pytest.raises(FencedOut) as refused:
        stores[0].commit(change(tid, 2))
    assert refused.value.reason == MOVING and not a.holds(tid)
    for write in (
        lambda: stores[0].mark_done(tid, 1),
        lambda: stores[0].add_intent(tid, 1, "ana", "h"),
        lambda: stores[0].save_data(tid, "running", {}),
    ):
        with pytest.raises(FencedOut):
            write()
    assert stores[1].events(tid, 1) == [(1, b"e")] and stores[1].pending_steps(tid) == [(1, '{"k":"x"}')]
    stores[1].commit(change(tid, 2))
    stores[1].mark_done(tid, 1)
    assert stores[0].events(tid, 1) == [(1, b"e"), (2, b"e")]
    # The refusal a client of a now redirects to b, with b's addresses.
    moved = a.refusal(tid)
    assert moved.reason == MOVED and moved.details["address"] == "b:1"
    assert moved.details["internal_address"] == "b:2"


def test_new_tournaments_go_to_the_replica_with_the_fewest(stores: list[TournamentStore]) -> None:
    clock = Clock()
    replicas = [replica(store, name, clock) for store, name in zip(stores, "abc", strict=True)]
    owners = [create(stores[0])[1] for _ in range(6)]
    assert sorted(owners) == ["a", "a", "b", "b", "c", "c"]
    # b's placed tournaments reach it at its next renewal (granted), or at once when it is asked.
    granted = replicas[1].leases.renew().granted
    assert len(granted) == 2 and all(replicas[1].holds(t) for t in granted)


def test_a_drained_replica_hands_over_at_once_and_a_finished_tournament_is_retired(
    stores: list[TournamentStore],
) -> None:
    clock = Clock()
    a, b = replica(stores[0], "a", clock), replica(stores[1], "b", clock)
    tid, _ = create(stores[0], here=True)
    assert a.drain() == [tid]
    assert b.leases.take_over(10) == [tid]  # no wait for the lease to expire
    stores[1].commit(change(tid, 1))
    b.retire(tid)
    assert b.leases.owner_of(tid) is None and not b.holds(tid)
    with pytest.raises(FencedOut):
        stores[1].commit(change(tid, 2))
    clock.ms += 10 * TTL
    assert b.leases.take_over(10) == []  # nobody takes a finished tournament over
