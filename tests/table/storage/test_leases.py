"""Table leases and their fence (services/table/storage/leases.py), on real SQLite and real PostgreSQL:
several store instances on one location are several shards sharing a store; time is a virtual clock.

The property that matters: a shard that lost a table's lease — paused, partitioned, slow — never commits
for that table again, and a table is owned by one shard at a time."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import prometheus_client
import pytest

from services.table import routing
from services.table.storage import Database, Tx
from services.table.storage.leases import FencedOut, LeaseKeeper, Leases, Shard

TTL = 10_000


def _write_row(table_id: str, note: str) -> Callable[[Tx], None]:
    """A write of the table's log (one hand-log row standing for any write)."""

    def work(tx: Tx) -> None:
        n = tx.execute(
            "SELECT COALESCE(MAX(n), 0) FROM poker_hand_log WHERE table_id = ?", (table_id,)
        ).fetchone()[0]
        tx.execute(
            "INSERT INTO poker_hand_log (table_id, n, op, body) VALUES (?, ?, ?, ?)",
            (table_id, int(n) + 1, "note", note),
        )

    return work


def _notes(db: Database, table_id: str) -> list[str]:
    return [
        str(r[0])
        for r in db.read("SELECT body FROM poker_hand_log WHERE table_id = ? ORDER BY n", (table_id,))
    ]


def _metric(name: str, **labels: str) -> float:
    return prometheus_client.REGISTRY.get_sample_value(name, labels) or 0.0


def test_first_acquire_owns_the_table_and_others_are_refused(location: Any) -> None:
    a, b = location.shard("table-0"), location.shard("table-1")
    assert a.acquire("t1") == 1
    assert b.acquire("t1") is None
    owner = b.owner_of("t1")
    assert owner is not None and (owner.shard_id, owner.epoch, owner.address) == (
        "table-0",
        1,
        "table-0:50054",
    )
    a.write("t1", _write_row("t1", "a"))
    with pytest.raises(FencedOut):
        b.write("t1", _write_row("t1", "b"))
    assert _notes(a._db, "t1") == ["a"]
    # What a call for it at table-1 is answered: where to call, over gRPC and from a browser.
    refusal = routing.moved("t1", routing.place_of(owner, location.clock()))
    assert (refusal.reason, refusal.details["address"], refusal.details["web_url"]) == (
        "TABLE_MOVED",
        "table-0:50054",
        "http://table-0:8084",
    )


def test_store_instances_racing_for_leases_get_one_owner_each(location: Any) -> None:
    """Four shards on four store instances acquire the same 20 tables at the same moment: every table ends
    with exactly one owner, who is the one that was told it won."""
    shards = [location.shard(f"table-{i}") for i in range(4)]
    tables = [f"t{i}" for i in range(20)]
    won: dict[str, list[str]] = {t: [] for t in tables}
    start = threading.Barrier(len(shards))
    errors: list[BaseException] = []

    def race(leases: Leases) -> None:
        try:
            start.wait()
            for table_id in tables:
                if leases.acquire(table_id) is not None:
                    won[table_id].append(leases.shard.shard_id)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=race, args=(s,)) for s in shards]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for table_id in tables:
        assert len(won[table_id]) == 1, won[table_id]
        owner = shards[0].owner_of(table_id)
        assert owner is not None and owner.shard_id == won[table_id][0] and owner.epoch == 1
    assert sum(len(s.held()) for s in shards) == len(tables)


def test_shards_starting_together_place_the_same_tables_without_a_conflict(location: Any) -> None:
    """Shards started at once (a StatefulSet's parallel pods) each place the configured tables: every
    placement answers, all agree on each table's shard, and each table has one lease (it was a unique
    violation on the lease's key for the shard that lost the race, which then exited)."""
    shards = [location.shard(f"table-{i}") for i in range(4)]
    tables = [f"t{i}" for i in range(20)]
    answers: dict[str, set[str]] = {t: set() for t in tables}
    start = threading.Barrier(len(shards))
    errors: list[BaseException] = []

    def race(leases: Leases, here: bool) -> None:
        try:
            start.wait()
            for table_id in tables:
                answers[table_id].add(leases.place(table_id, here=here))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=race, args=(s, k % 2 == 0)) for k, s in enumerate(shards)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for table_id in tables:
        owner = shards[0].owner_of(table_id)
        assert owner is not None and answers[table_id] == {owner.shard_id} and owner.epoch == 1


def test_a_renewed_lease_outlives_its_first_term(location: Any) -> None:
    a, b = location.shard("table-0"), location.shard("table-1")
    a.acquire("t1")
    for _ in range(5):
        location.clock.advance(TTL // 2)
        assert a.renew().renewed == ["t1"]
        assert b.acquire("t1") is None
    a.write("t1", _write_row("t1", "still mine"))


def test_a_paused_holder_cannot_commit_after_another_took_over(location: Any) -> None:
    """The fence: the holder stops renewing (SIGSTOP, a partition, a long pause); its lease expires and
    another shard takes the table over at a higher epoch; the old holder then wakes up and tries to write
    with its old epoch. Refused, nothing committed, and its next renewal says the lease is gone."""
    a, b = location.shard("table-0"), location.shard("table-1")
    assert a.acquire("t1") == 1
    a.write("t1", _write_row("t1", "a before the pause"))
    location.clock.advance(TTL + 1)  # a is paused: no renewal
    takeovers = _metric("poker_table_lease_takeovers_total", kind="poker")
    assert b.acquire("t1") == 2
    assert _metric("poker_table_lease_takeovers_total", kind="poker") == takeovers + 1
    b.write("t1", _write_row("t1", "b after the takeover"))
    fenced = _metric("poker_table_fenced_writes_total", kind="poker")
    losses = _metric("poker_table_lease_losses_total", kind="poker", how="fenced_write")
    with pytest.raises(FencedOut):
        a.write("t1", _write_row("t1", "a after waking up"))
    assert _notes(a._db, "t1") == ["a before the pause", "b after the takeover"]
    assert not a.holds("t1")
    assert _metric("poker_table_fenced_writes_total", kind="poker") == fenced + 1
    assert _metric("poker_table_lease_losses_total", kind="poker", how="fenced_write") == losses + 1
    with pytest.raises(FencedOut):  # and it stays refused
        a.write("t1", _write_row("t1", "a again"))
    assert _notes(b._db, "t1") == ["a before the pause", "b after the takeover"]


def test_a_holder_that_learns_on_renewal_stops_at_once(location: Any) -> None:
    a, b = location.shard("table-0"), location.shard("table-1")
    a.acquire("t1")
    a.acquire("t2")
    location.clock.advance(TTL + 1)
    b.acquire("t1")
    losses = _metric("poker_table_lease_losses_total", kind="poker", how="renewal")
    renewal = a.renew()
    assert (renewal.lost, renewal.renewed) == (["t1"], ["t2"])
    assert _metric("poker_table_lease_losses_total", kind="poker", how="renewal") == losses + 1
    with pytest.raises(FencedOut):
        a.write("t1", _write_row("t1", "a"))
    a.write("t2", _write_row("t2", "a keeps t2"))  # expired but taken by nobody: renewed, still a's


def test_a_takeover_waits_for_the_write_in_flight(location: Any) -> None:
    """The old holder passed the fence and is inside its transaction when its lease expires and another
    shard takes over: the takeover waits for that transaction (the lease row is locked), so the write that
    passed the fence commits before the new owner's epoch exists, and the new owner sees it."""
    a, b = location.shard("table-0"), location.shard("table-1")
    a.acquire("t1")
    inside, resume = threading.Event(), threading.Event()
    took: list[int | None] = []

    def slow_write(tx: Tx) -> None:
        _write_row("t1", "a in flight")(tx)
        inside.set()
        assert resume.wait(30)

    writer = threading.Thread(target=a.write, args=("t1", slow_write))
    writer.start()
    assert inside.wait(30)
    location.clock.advance(TTL + 1)
    taker = threading.Thread(target=lambda: took.append(b.acquire("t1")))
    taker.start()
    taker.join(timeout=0.5)
    assert taker.is_alive(), "the takeover must wait for the write that passed the fence"
    resume.set()
    writer.join(timeout=30)
    taker.join(timeout=30)
    assert took == [2]
    assert _notes(b._db, "t1") == ["a in flight"]
    with pytest.raises(FencedOut):
        a.write("t1", _write_row("t1", "a after"))


def test_a_restarted_shard_takes_its_tables_back_at_once_and_fences_its_old_process(location: Any) -> None:
    old = location.shard("table-0")
    old.acquire("t1")
    new = Leases(
        location.open(), "poker", Shard("table-0", "table-0:50054"), ttl_ms=TTL, clock=location.clock
    )
    new.join()  # same pod name, another process: no need to wait for the lease to expire
    assert new.acquire("t1") == 2
    new.write("t1", _write_row("t1", "new"))
    with pytest.raises(FencedOut):
        old.write("t1", _write_row("t1", "old"))
    renewal = old.renew()
    assert renewal.superseded and old.held() == {}
    assert _notes(new._db, "t1") == ["new"]


def test_a_released_lease_is_taken_without_waiting(location: Any) -> None:
    a, b = location.shard("table-0"), location.shard("table-1")
    a.acquire("t1")
    a.release("t1")
    assert b.acquire("t1") == 2  # at once: no expiry to wait for
    with pytest.raises(FencedOut):
        a.write("t1", _write_row("t1", "a"))


def test_a_drained_shard_releases_everything_and_gets_no_new_tables(location: Any) -> None:
    a, b = location.shard("table-0"), location.shard("table-1")
    for t in ("t1", "t2"):
        a.acquire(t)
    assert a.drain() == ["t1", "t2"]
    assert set(b.unowned()) == {"t1", "t2"}
    assert b.place("t3") == "table-1"  # a drains: placement skips it though it holds nothing
    assert a.take_over(10) == []


def test_placement_picks_the_live_shard_with_the_fewest_tables(location: Any) -> None:
    a, b, c = (location.shard(f"table-{i}") for i in range(3))
    for t in ("a1", "a2"):
        a.acquire(t)
    b.acquire("b1")
    assert a.place("new-1") == "table-2"
    assert a.place("new-2") == "table-1"  # b and c have one each: the lowest id
    assert a.place("new-1") == "table-2"  # placed already: unchanged
    # c learns of its table at its next renewal and may write for it; a may not.
    renewal = c.renew()
    assert renewal.granted == ["new-1"] and c.holds("new-1")
    c.write("new-1", _write_row("new-1", "c"))
    with pytest.raises(FencedOut):
        a.write("new-1", _write_row("new-1", "a"))
    # A shard whose heartbeat is stale is not given tables.
    location.clock.advance(TTL + 1)
    a.renew()
    assert a.place("new-3") == "table-0"


def test_the_keeper_takes_over_a_dead_shards_tables_by_fair_share(location: Any) -> None:
    dead, b, c = (location.shard(f"table-{i}") for i in range(3))
    tables = [f"t{i}" for i in range(6)]
    for t in tables:
        dead.acquire(t)
    gained: dict[str, list[str]] = {"table-1": [], "table-2": []}
    keepers = [LeaseKeeper(s, take_over=True, on_gained=gained[s.shard.shard_id].extend) for s in (b, c)]
    for _ in range(4):  # the others renew on schedule (a third of the lease); dead has stopped
        location.clock.advance(TTL // 3 + 1)
        for keeper in keepers:
            keeper.tick()
    assert sorted(gained["table-1"] + gained["table-2"]) == tables
    assert len(gained["table-1"]) == len(gained["table-2"]) == 3
    for keeper in keepers:
        assert keeper.tick().unowned == 0
    assert _metric("poker_table_unowned_tables", kind="poker") == 0
    assert _metric("poker_table_shards_live") == 2


def test_a_stuck_keeper_shows_in_the_age_of_its_last_round(location: Any) -> None:
    """poker_table_lease_renewal_age_seconds: growing while one of the keeper's rounds is stuck (here in the
    service's on_gained); once it goes on, its rounds come every interval again."""
    import time

    dead, b = location.shard("table-0"), location.shard("table-1")
    dead.acquire("t1")
    location.clock.advance(TTL + 1)  # t1 is free to take
    stuck, entered = threading.Event(), threading.Event()

    def on_gained(tables: list[str]) -> None:
        entered.set()
        stuck.wait(10)

    keeper = LeaseKeeper(b, take_over=True, on_gained=on_gained, interval_s=0.05).start()
    try:
        assert entered.wait(10)
        time.sleep(0.5)
        assert _metric("poker_table_lease_renewal_age_seconds", kind="poker") >= 0.4
        stuck.set()
        # (The gauge is the oldest round of every keeper in this process; other tests' keepers may run
        # on longer intervals: this one's own round is what goes on.)
        deadline = time.monotonic() + 10
        while time.monotonic() - keeper.last_round > 0.3:
            assert time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        stuck.set()
        keeper.stop()


def test_unowned_tables_are_counted(location: Any) -> None:
    a = location.shard("table-0")
    for t in ("t1", "t2", "t3"):
        a.acquire(t)
    a.release("t3")
    assert a.renew().unowned == 1
    assert _metric("poker_table_unowned_tables", kind="poker") == 1
    location.clock.advance(TTL + 1)
    b = location.shard("table-1")
    assert b.renew().unowned == 3
    assert sorted(b.unowned()) == ["t1", "t2", "t3"]


def test_leases_of_poker_and_casino_tables_are_apart(location: Any) -> None:
    db = location.open()
    poker, casino = location.shard("table-0", "poker", db), location.shard("table-1", "casino", db)
    assert poker.acquire("same-id") == 1
    assert casino.acquire("same-id") == 1
    assert poker.owner_of("same-id").shard_id == "table-0"  # type: ignore[union-attr,unused-ignore]
    assert casino.owner_of("same-id").shard_id == "table-1"  # type: ignore[union-attr,unused-ignore]


def test_held_leases_are_a_metric(location: Any) -> None:
    before = _metric("poker_table_leases_held", kind="casino")
    a = location.shard("table-0", "casino")
    a.acquire("c1")
    a.acquire("c2")
    assert _metric("poker_table_leases_held", kind="casino") == before + 2
    a.release("c1")
    assert _metric("poker_table_leases_held", kind="casino") == before + 1


def test_shards_taking_over_at_once_get_disjoint_tables(location: Any) -> None:
    """A dead shard's 30 tables, taken over by three shards at the same moment (one transaction each):
    every table goes to exactly one of them, at the next epoch."""
    dead = location.shard("table-0")
    tables = [f"t{i:02}" for i in range(30)]
    for t in tables:
        dead.acquire(t)
    location.clock.advance(TTL + 1)
    takers = [location.shard(f"table-{i}") for i in (1, 2, 3)]
    got: dict[str, list[str]] = {}
    start = threading.Barrier(len(takers))

    def take(leases: Leases) -> None:
        start.wait()
        got[leases.shard.shard_id] = leases.take_over(12)

    threads = [threading.Thread(target=take, args=(s,)) for s in takers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    everything = sorted(t for taken in got.values() for t in taken)
    assert everything == tables  # 12 + 12 + 6: all of them, none twice
    assert all(len(taken) <= 12 for taken in got.values())
    for taker in takers:
        for table_id in got[taker.shard.shard_id]:
            assert taker.held()[table_id] == 2
            taker.write(table_id, _write_row(table_id, taker.shard.shard_id))
    with pytest.raises(FencedOut):
        dead.write("t00", _write_row("t00", "dead"))
