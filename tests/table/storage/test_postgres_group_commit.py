"""PostgreSQL's group commit of the table store (issue 24): fenced writes of a shard's tables that wait for
a lane go together in one transaction and one message; a group that fails is rolled back and each write
runs again alone, so each gets its own answer; the lease renewal never deadlocks with a group."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import prometheus_client
import psycopg
import pytest

from services.table.storage import Tx
from services.table.storage.leases import FencedOut, Leases
from tests.table.storage.conftest import TTL_MS, Location


@pytest.fixture
def location(postgres_session: Any, tmp_path: Any) -> Iterator[Location]:
    loc = Location("postgres", postgres_session.new_schema(), tmp_path)
    try:
        yield loc
    finally:
        loc.close_all()


def _note(table_id: str, note: str) -> Callable[[Tx], str]:
    def work(tx: Tx) -> str:
        tx.execute(
            "INSERT INTO poker_hand_log (table_id, n, op, body)"
            " SELECT ?, COALESCE(MAX(n), 0) + 1, 'note', ? FROM poker_hand_log WHERE table_id = ?",
            (table_id, note, table_id),
        )
        return note

    return work


def _row(table_id: str, n: int) -> Callable[[Tx], None]:
    def work(tx: Tx) -> None:
        tx.execute(
            "INSERT INTO poker_hand_log (table_id, n, op, body) VALUES (?, ?, 'note', '')", (table_id, n)
        )

    return work


def _notes(shard: Leases) -> list[tuple[str, str]]:
    rows = shard._db.read("SELECT table_id, body FROM poker_hand_log ORDER BY table_id, n")
    return [(str(t), str(b)) for t, b in rows]


def _metric(name: str) -> float:
    return prometheus_client.REGISTRY.get_sample_value(name) or 0.0


class _Held:
    """The shard's one lane held by a write that waits for `release`, so the writes started meanwhile
    queue and go as one group once it is let go."""

    def __init__(self, shard: Leases, table_id: str) -> None:
        self.shard, self.release, self.running = shard, threading.Event(), threading.Event()

        def blocking(tx: Tx) -> None:
            self.running.set()
            assert self.release.wait(10)
            _note(table_id, "first")(tx)

        self.thread = threading.Thread(target=lambda: shard.write(table_id, blocking))
        self.thread.start()
        assert self.running.wait(10)

    def queue(self, writes: dict[str, Callable[[Tx], Any]]) -> dict[str, Any]:
        """Each of `writes` (table -> work) from a thread of its own, behind the held lane: their
        answers (a result or the exception raised) once the lane is let go."""
        answers: dict[str, Any] = {}

        def one(table_id: str, work: Callable[[Tx], Any]) -> None:
            try:
                answers[table_id] = self.shard.write(table_id, work)
            except Exception as error:
                answers[table_id] = error

        threads = [threading.Thread(target=one, args=item) for item in writes.items()]
        for thread in threads:
            thread.start()
        db = self.shard._db
        deadline = time.monotonic() + 10
        while len(db._waiting) < len(writes):  # every write is waiting for the lane
            assert time.monotonic() < deadline
            time.sleep(0.005)
        self.release.set()
        for thread in [*threads, self.thread]:
            thread.join(10)
        return answers


def _shard(location: Location, shard_id: str, tables: list[str]) -> Leases:
    shard = location.shard(shard_id)
    shard._db.group_lanes = 1
    for table_id in tables:
        assert shard.acquire(table_id) is not None
    return shard


def test_writes_that_wait_for_the_lane_commit_as_one_group_in_one_message(
    location: Location, monkeypatch: pytest.MonkeyPatch
) -> None:
    tables = [f"t{k}" for k in range(6)]
    shard = _shard(location, "table-0", ["held", *tables])
    held = _Held(shard, "held")
    sent: list[bytes] = []
    original = psycopg.Connection.execute

    def counting(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(query if isinstance(query, bytes) else str(query).encode())
        return original(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "execute", counting)
    groups, grouped = (
        _metric("table_store_postgres_group_commits_total"),
        _metric("table_store_postgres_grouped_writes_total"),
    )
    answers = held.queue({t: _note(t, f"note of {t}") for t in reversed(tables)})
    monkeypatch.undo()
    assert answers == {t: f"note of {t}" for t in tables}
    group = [m for m in sent if m.count(b"felt_fence(") == len(tables)]
    assert len(group) == 1 and group[0].startswith(b"BEGIN; ") and group[0].endswith(b"; COMMIT"), sent
    # In the order of the tables' ids, whatever the order they came in: the lease rows are locked so.
    assert [group[0].index(f"'{t}'".encode()) for t in tables] == sorted(
        group[0].index(f"'{t}'".encode()) for t in tables
    )
    assert _metric("table_store_postgres_group_commits_total") == groups + 1
    assert _metric("table_store_postgres_grouped_writes_total") == grouped + len(tables)
    assert _notes(shard) == [("held", "first"), *((t, f"note of {t}") for t in tables)]


def test_a_write_that_fails_in_a_group_fails_alone(location: Location) -> None:
    """One write raises in Python, another breaks a key when its statements go (with COMMIT), a third
    is a table whose lease another shard took: each fails with its own error, the rest commit once."""
    shard = _shard(location, "table-0", ["held", "a", "b", "c", "d", "stolen"])
    other = location.shard("table-1")
    shard._db.write(_note("b", "b's first"))  # n = 1 taken: b's clash below reuses it

    def raises(tx: Tx) -> None:
        _note("a", "a never")(tx)
        raise ValueError("a refuses")

    def clashes(tx: Tx) -> None:
        tx.execute("INSERT INTO poker_hand_log (table_id, n, op, body) VALUES ('b', 1, 'note', 'b never')")

    location.clock.advance(TTL_MS + 1)
    for table_id in ("held", "a", "b", "c", "d"):  # the others' leases renewed by hand, "stolen"'s not
        shard._db.write(
            lambda tx, t=table_id: tx.execute(
                "UPDATE table_leases SET expires_ms = ? WHERE table_id = ?", (location.clock() + TTL_MS, t)
            )
        )
    assert other.acquire("stolen") == 2
    splits = _metric("table_store_postgres_groups_split_total")
    held = _Held(shard, "held")
    answers = held.queue(
        {
            "a": raises,
            "b": clashes,
            "c": _note("c", "c's"),
            "d": _note("d", "d's"),
            "stolen": _note("stolen", "x"),
        }
    )
    assert isinstance(answers["a"], ValueError)
    assert isinstance(answers["b"], psycopg.errors.UniqueViolation)
    assert isinstance(answers["stolen"], FencedOut) and not shard.holds("stolen")
    assert (answers["c"], answers["d"]) == ("c's", "d's")
    assert _metric("table_store_postgres_groups_split_total") == splits + 1
    assert _notes(shard) == [("b", "b's first"), ("c", "c's"), ("d", "d's"), ("held", "first")]


def test_renewals_and_groups_of_fenced_writes_never_wait_for_each_other_in_a_cycle(
    location: Location,
) -> None:
    """The renewal locks its lease rows in the order of their ids, as a group locks its tables' rows: with
    both running over and over on the same tables, no group fails (a deadlock would roll one back, after
    PostgreSQL's deadlock_timeout) and every write commits once."""
    tables = [f"t{k:02d}" for k in range(24)]
    shard = location.shard("table-0")
    for table_id in reversed(tables):  # the rows' order on disk is not their ids' order
        shard.acquire(table_id)
    splits = _metric("table_store_postgres_groups_split_total")
    stop = threading.Event()
    failures: list[BaseException] = []

    def renew() -> None:
        while not stop.is_set():
            shard.renew()

    def write(worker: int) -> None:
        try:
            for n in range(25):
                table_id = tables[(worker * 7 + n) % len(tables)]
                shard.write(table_id, _row(table_id, worker * 1000 + n))
        except BaseException as error:
            failures.append(error)

    renewer = threading.Thread(target=renew)
    renewer.start()
    writers = [threading.Thread(target=write, args=(w,)) for w in range(8)]
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join(60)
    stop.set()
    renewer.join(10)
    assert failures == []
    assert _metric("table_store_postgres_groups_split_total") == splits
    assert len(_notes(shard)) == 8 * 25
