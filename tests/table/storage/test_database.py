"""The two databases behind the table stores (services/table/storage/sqlite.py, postgres.py), real both:
a write is one transaction, durable when it returns and seen by every other instance; a failed write
changes nothing and fails alone; the shared SQL runs unchanged on both."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def test_a_write_reads_what_it_wrote_before_and_the_counts_of_its_changes(location: Any) -> None:
    """On PostgreSQL a write's statements wait to go with the next one whose result is read, or with
    COMMIT (issue 24): a read in the write still sees every row written before it, and a row count read
    late is the count of its own statement."""
    db = location.open()
    db.write(_insert("t", 1))

    def work(tx: Tx) -> Any:
        _insert("t", 2)(tx)
        updated = tx.execute("UPDATE poker_hand_log SET body = ? WHERE table_id = ?", ('{"a": 1}', "t"))
        _insert("t", 3)(tx)
        seen = tx.execute("SELECT n FROM poker_hand_log WHERE table_id = ? ORDER BY n", ("t",))
        _insert("u", 4)(tx)
        return updated.rowcount, [int(r[0]) for r in seen.fetchall()], seen.fetchone()

    assert db.write(work) == (2, [1, 2, 3], None)
    assert db.read("SELECT table_id, n FROM poker_hand_log ORDER BY n") == [
        ("t", 1),
        ("t", 2),
        ("t", 3),
        ("u", 4),
    ]


def test_a_statement_that_fails_late_fails_its_write_and_changes_nothing(location: Any) -> None:
    """A statement held back fails when it goes, with COMMIT: its write raises, nothing of it is kept,
    and the next write on the same connections commits."""
    db = location.open()
    db.write(_insert("t", 1))

    def clash(tx: Tx) -> None:
        _insert("t", 2)(tx)
        _insert("t", 1)(tx)  # the key is taken
        _insert("t", 3)(tx)

    for _ in range(3):  # more times than the pool has connections in use
        with pytest.raises(Exception, match=r"(?i)unique|duplicate"):
            db.write(clash)
    assert db.read("SELECT n FROM poker_hand_log ORDER BY n") == [(1,)]
    db.write(_insert("t", 2))
    assert db.read("SELECT n FROM poker_hand_log ORDER BY n") == [(1,), (2,)]


def test_held_statements_take_any_value_as_a_value(location: Any) -> None:
    """Held statements are quoted by psycopg (client-side): text, bytes, NULL and large integers come
    back as they went, and `%` in the SQL itself is SQL's."""
    db = location.open()
    values: list[str | None] = ["it's 100%", "'; DROP TABLE poker_events; --", "back\\slash", "ünï 🂡", None]

    def work(tx: Tx) -> None:
        for seq, text in enumerate(values, start=1):
            tx.execute(
                "INSERT INTO poker_events (table_id, seq, hand, private_player, body, time_ms)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                ("t", seq, 2**62, text, bytes([0, 39, 92, seq]) + str(text).encode(), seq),
            )
        tx.execute("UPDATE poker_events SET hand = 1 WHERE private_player LIKE '%\\%%' ESCAPE '\\'")

    db.write(work)
    rows = db.read("SELECT seq, hand, private_player, body, time_ms FROM poker_events ORDER BY seq")
    assert [(int(s), int(h), p, bytes(b), int(t)) for s, h, p, b, t in rows] == [
        (seq, 1 if "%" in str(text) else 2**62, text, bytes([0, 39, 92, seq]) + str(text).encode(), seq)
        for seq, text in enumerate(values, start=1)
    ]


_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
    # Any text a message can carry: protobuf strings are UTF-8, so no NUL (PostgreSQL refuses it) and no
    # lone surrogate (no UTF-8 for it).
    st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",))),
    st.binary(),
)


@settings(max_examples=200, deadline=None)
@given(args=st.lists(_VALUES, max_size=8), literal=st.sampled_from(["", "'?'", "'it''s ?%'"]))
def test_a_held_statement_is_quoted_as_psycopg_quotes_it(
    postgres_session: Any, args: list[Any], literal: str
) -> None:
    """A statement held back (issue 24) is quoted value by value with psycopg's own quoting, not through
    ClientCursor.mogrify's parse of the whole statement: the text sent is mogrify's, whatever the values,
    and `?` or `%` inside a string literal stay SQL's."""
    import psycopg

    from services.table.storage.postgres import PostgresTx, placeholders

    sql = "SELECT " + (", ".join(["?"] * len(args) + ([literal] if literal else [])) or "1")
    with psycopg.connect(postgres_session.url, autocommit=True) as conn:
        held = PostgresTx(conn, begin=True)._quoted(sql, tuple(args))
        assert held == psycopg.ClientCursor(conn).mogrify(placeholders(sql), tuple(args)).encode()


def test_a_write_is_as_many_messages_as_its_reads_plus_one_on_postgres(
    postgres_session: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 24: statements wait for the next read or for COMMIT. A write that reads one row first and
    then writes is two messages: BEGIN with the read, then the writes with COMMIT; a fenced write (its
    lease check raises in SQL instead of answering) whose statements read nothing is one message, and a
    stale shard's one message is still refused and commits nothing."""
    import psycopg

    from services.table.storage.leases import FencedOut
    from tests.table.storage.conftest import Location

    location = Location("postgres", postgres_session.new_schema(), tmp_path)
    shard, other = location.shard("table-0"), location.shard("table-1")
    shard.acquire("t")
    db = location.open()
    sent: list[bytes] = []
    original = psycopg.Connection.execute

    def counting(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(query if isinstance(query, bytes) else str(query).encode())
        return original(self, query, *args, **kwargs)

    def reads_then_writes(tx: Tx) -> None:
        assert tx.execute("SELECT COUNT(*) FROM poker_hand_log").fetchone() == (0,)
        for n in range(1, 4):
            _insert("t", n)(tx)
        tx.executemany(
            "INSERT INTO poker_invitations (table_id, player) VALUES (?, ?)", [("t", "a"), ("t", "b")]
        )

    monkeypatch.setattr(psycopg.Connection, "execute", counting)
    try:
        db.write(reads_then_writes)
        assert len(sent) == 2, sent
        assert sent[0].startswith(b"BEGIN; SELECT") and sent[1].endswith(b"; COMMIT")
        sent.clear()
        shard.write("t", _insert("t", 4))
        assert len(sent) == 1, sent
        assert sent[0].startswith(b"BEGIN; SELECT felt_fence(") and sent[0].endswith(b"; COMMIT")
        location.clock.advance(10 * 60_000)  # the shard is paused past its lease: the other takes over
        assert other.acquire("t") == 2
        sent.clear()
        with pytest.raises(FencedOut, match="epoch 1"):
            shard.write("t", _insert("t", 5))
        assert len(sent) == 2, sent  # the one message, then its ROLLBACK
    finally:
        monkeypatch.undo()
    assert db.read("SELECT n FROM poker_hand_log ORDER BY n") == [(1,), (2,), (3,), (4,)]
    assert not shard.holds("t")  # refused: the lease is forgotten, as after a check that answered
