"""The two databases behind the table stores (services/table/storage/sqlite.py, postgres.py), real both:
a write is one transaction, durable when it returns and seen by every other instance; a failed write
changes nothing and fails alone; the shared SQL runs unchanged on both."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from services.table.storage import StoreUnavailable, Tx


def _insert(table_id: str, n: int, body: str = "{}") -> Any:
    def work(tx: Tx) -> int:
        tx.execute(
            "INSERT INTO poker_hand_log (table_id, n, op, body) VALUES (?, ?, 'op', ?)", (table_id, n, body)
        )
        return n

    return work


def test_a_write_is_seen_by_another_instance_once_it_returns(location: Any) -> None:
    one, two = location.open(), location.open()
    assert one.write(_insert("t", 1)) == 1
    assert two.read("SELECT n, body FROM poker_hand_log WHERE table_id = ?", ("t",)) == [(1, "{}")]


def test_a_failed_write_changes_nothing(location: Any) -> None:
    db = location.open()

    def half_then_fail(tx: Tx) -> None:
        _insert("t", 1)(tx)
        raise ValueError("refused after the first row")

    with pytest.raises(ValueError):
        db.write(half_then_fail)
    assert db.read("SELECT COUNT(*) FROM poker_hand_log") == [(0,)]


def test_concurrent_writes_all_commit_and_a_failing_one_fails_alone(location: Any) -> None:
    """Many threads write at once (SQLite groups them into shared commits): every good write is there,
    the bad ones (a duplicate key) are refused one by one."""
    db = location.open()
    db.write(_insert("dup", 1))
    errors: list[BaseException] = []

    def writer(i: int) -> None:
        for n in range(20):
            try:
                db.write(_insert(f"t{i}", n))
                if n % 5 == 0:
                    db.write(_insert("dup", 1))  # already there
            except Exception as exc:  # the duplicates, counted below
                errors.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert db.read("SELECT COUNT(*) FROM poker_hand_log WHERE table_id <> 'dup'") == [(6 * 20,)]
    assert len(errors) == 6 * 4


def test_the_shared_sql_runs_on_both(location: Any) -> None:
    db = location.open()
    db.write(
        lambda tx: tx.execute(
            "INSERT INTO poker_events (table_id, seq, hand, private_player, body, time_ms) VALUES (?, ?, ?, ?, ?, ?)",
            ("t", 1, 1, None, b"\x00\xff%?", 5),
        )
    )
    # an upsert, a literal % and a ? inside a string next to a parameter
    db.write(
        lambda tx: tx.execute(
            "INSERT INTO poker_requests (key, response) VALUES (?, ?)"
            " ON CONFLICT (key) DO UPDATE SET response = excluded.response",
            ("k", b"1"),
        )
    )
    db.write(
        lambda tx: tx.execute(
            "INSERT INTO poker_requests (key, response) VALUES (?, ?)"
            " ON CONFLICT (key) DO UPDATE SET response = excluded.response",
            ("k", b"2"),
        )
    )
    assert db.read("SELECT response FROM poker_requests") == [(b"2",)]
    assert db.read("SELECT body FROM poker_events WHERE body = ? AND 'a%b?' <> ?", (b"\x00\xff%?", "x")) == [
        (b"\x00\xff%?",)
    ]
    rows = db.write(lambda tx: tx.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM poker_events").fetchall())
    assert [tuple(r) for r in rows] == [(2,)]


def test_a_closed_store_refuses_writes(location: Any) -> None:
    db = location.open()
    db.close()
    location.opened.remove(db)
    with pytest.raises((StoreUnavailable, Exception)):
        db.write(_insert("t", 1))


def test_lost_postgres_connections_are_unavailable_then_recover(postgres_session: Any, tmp_path: Any) -> None:
    import psycopg

    from services.table.storage import open_database
    from services.table.storage.schema import POKER

    url = postgres_session.new_schema()
    db = open_database(url, tmp_path / "unused", [POKER], pool_size=1)
    try:
        db.write(_insert("t", 1))
        with psycopg.connect(postgres_session.admin_url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                (postgres_session.dbname,),
            )
        with pytest.raises(StoreUnavailable):
            db.write(_insert("t", 2))
        db.write(_insert("t", 3))  # the pool replaced the broken connection
        assert db.read("SELECT n FROM poker_hand_log ORDER BY n") == [(1,), (3,)]
    finally:
        db.close()


@pytest.mark.parametrize(
    ("sql", "psycopg"),
    [
        ("SELECT ? + ?", "SELECT %s + %s"),
        ("SELECT '?' || ?", "SELECT '?' || %s"),
        ("SELECT 'it''s ?', ?", "SELECT 'it''s ?', %s"),
        ("SELECT 5 % 2 WHERE x LIKE 'a%' AND y = ?", "SELECT 5 %% 2 WHERE x LIKE 'a%%' AND y = %s"),
    ],
)
def test_placeholders_are_rewritten_outside_literals_only(sql: str, psycopg: str) -> None:
    from services.table.storage.postgres import placeholders

    assert placeholders(sql) == psycopg


def test_many_rows_insert_as_on_one_row_at_a_time(location: Any) -> None:
    """`executemany` of an INSERT (on PostgreSQL one statement of many rows, chunked, issue 24) writes what
    one statement per row writes: plain, DO NOTHING with duplicates in the batch, DO UPDATE (and, when two
    rows share the key, row by row: the last one wins)."""
    db = location.open()
    events = [("t", seq, 1, "", b"x%d" % seq, seq) for seq in range(1, 1_203)]  # three chunks of 500

    def rows(tx: Tx) -> None:
        tx.executemany(
            "INSERT INTO poker_events (table_id, seq, hand, private_player, body, time_ms)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            events,
        )
        tx.executemany(
            "INSERT INTO poker_invitations (table_id, player) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [("t", "ana"), ("t", "bo"), ("t", "ana")],
        )
        upsert = (
            "INSERT INTO poker_hand_players (table_id, hand, player, seat, net) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (table_id, hand, player) DO UPDATE SET seat = excluded.seat, net = excluded.net"
        )
        tx.executemany(upsert, [("t", 1, "ana", 1, 5), ("t", 1, "bo", 2, -5)])
        tx.executemany(upsert, [("t", 1, "ana", 3, 7), ("t", 1, "ana", 4, 9), ("t", 1, "cy", 5, 0)])

    db.write(rows)
    stored = db.read("SELECT seq, body FROM poker_events WHERE table_id = ? ORDER BY seq", ("t",))
    assert [(int(seq), bytes(body)) for seq, body in stored] == [(e[1], e[4]) for e in events]
    assert db.read("SELECT player FROM poker_invitations ORDER BY player") == [("ana",), ("bo",)]
    assert db.read("SELECT player, seat, net FROM poker_hand_players ORDER BY player") == [
        ("ana", 4, 9),
        ("bo", 2, -5),
        ("cy", 5, 0),
    ]


@pytest.mark.parametrize("text", ["it's 100%", "'; DROP TABLE poker_hand_log; --", "tab\tle\\n", "ünï 🂡"])
def test_a_write_s_first_statement_takes_any_text_as_a_value(location: Any, text: str) -> None:
    """On PostgreSQL a write's first statement goes with its BEGIN in one message, its values quoted by
    psycopg (issue 24): whatever the text, it is a value, never SQL."""
    db = location.open()

    def work(tx: Tx) -> Any:
        row = tx.execute("SELECT ?, ?", (text, 7)).fetchone()
        _insert(text, 1)(tx)
        return row

    assert tuple(db.write(work)) == (text, 7)
    assert db.read("SELECT table_id FROM poker_hand_log") == [(text,)]
