"""A table service that serves every table of its store (services/table/storage/ownership.py), on real
SQLite and PostgreSQL: what it acquires at open, on a first write and never, so that nothing it writes
can come from a state older than the log."""

from __future__ import annotations

from typing import Any

import pytest

from services.table.storage import Tx
from services.table.storage.leases import FencedOut, Leases, Shard
from services.table.storage.ownership import ShardTables

TTL = 10_000


def _note(table_id: str, body: str) -> Any:
    def work(tx: Tx) -> None:
        n = tx.execute(
            "SELECT COALESCE(MAX(n), 0) + 1 FROM poker_hand_log WHERE table_id = ?", (table_id,)
        ).fetchone()[0]
        tx.execute(
            "INSERT INTO poker_hand_log (table_id, n, op, body) VALUES (?, ?, 'note', ?)", (table_id, n, body)
        )

    return work


def _serve(location: Any, shard_id: str = "table-0") -> ShardTables:
    return ShardTables(
        location.open(), "poker", Shard(shard_id), ttl_ms=TTL, clock=location.clock, renew=False
    )


def _table_row(table_id: str) -> Any:
    return lambda tx: tx.execute(
        "INSERT INTO poker_tables (table_id, settings, host, invite_code, invited, created_ms)"
        " VALUES (?, ?, '', '', '[]', 0)",
        (table_id, b"s"),
    )


def test_a_restarted_service_takes_every_table_back_at_open(location: Any) -> None:
    first = _serve(location)
    first.create("t1", _table_row("t1"))
    first.write("t1", _note("t1", "first"))
    # The process dies without closing: its leases are still live. The next one (same pod) starts.
    second = _serve(location)
    assert second.holds("t1") and second.leases.held()["t1"] == 2
    second.write("t1", _note("t1", "second"))
    with pytest.raises(FencedOut):
        first.write("t1", _note("t1", "zombie"))


def test_a_new_table_is_acquired_on_its_first_write(location: Any) -> None:
    tables = _serve(location)
    tables.write("fresh", _note("fresh", "x"))  # no row, no lease before: nobody else can have it
    assert tables.holds("fresh")


def test_a_table_another_shard_holds_at_open_is_never_written(location: Any) -> None:
    other = Leases(location.open(), "poker", Shard("table-9"), ttl_ms=TTL, clock=location.clock)
    other.join()
    other.acquire("theirs")
    mine = _serve(location)
    assert not mine.holds("theirs")
    with pytest.raises(FencedOut):
        mine.write("theirs", _note("theirs", "mine"))
    location.clock.advance(TTL + 1)  # the other shard dies: still not taken by a process that loaded it
    with pytest.raises(FencedOut):
        mine.write("theirs", _note("theirs", "mine"))


def test_a_lost_table_is_not_taken_back_by_the_same_process(location: Any) -> None:
    mine = _serve(location)
    mine.create("t1", _table_row("t1"))
    location.clock.advance(TTL + 1)
    other = Leases(location.open(), "poker", Shard("table-9"), ttl_ms=TTL, clock=location.clock)
    other.join()
    assert other.acquire("t1") == 2
    with pytest.raises(FencedOut):
        mine.write("t1", _note("t1", "stale"))
    other.release("t1")
    with pytest.raises(FencedOut):  # free again, but this process's copy of t1 is older than the log
        mine.write("t1", _note("t1", "stale"))


def test_a_table_is_created_with_its_lease_in_one_transaction(location: Any) -> None:
    tables = _serve(location)

    def broken(tx: Tx) -> None:
        _table_row("t1")(tx)
        raise ValueError("the table's rows fail")

    with pytest.raises(ValueError):
        tables.create("t1", broken)
    db = location.opened[-1]
    assert db.read("SELECT COUNT(*) FROM table_leases") == [(0,)]
    assert db.read("SELECT COUNT(*) FROM poker_tables") == [(0,)]


def test_close_releases_so_the_next_process_need_not_wait(location: Any) -> None:
    first = _serve(location)
    first.create("t1", _table_row("t1"))
    first.close()
    other = Leases(location.open(), "poker", Shard("table-9"), ttl_ms=TTL, clock=location.clock)
    other.join()
    assert other.acquire("t1") == 2  # no expiry to wait for


def test_the_keeper_renews_in_the_background(location: Any) -> None:
    tables = ShardTables(location.open(), "poker", Shard("table-0"), ttl_ms=TTL, clock=location.clock)
    try:
        assert tables.keeper is not None and tables.keeper.interval_s == pytest.approx(TTL / 3000)
    finally:
        tables.close()
