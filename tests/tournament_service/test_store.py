"""The tournament store on both backends (SQLite; PostgreSQL when FELT_TEST_POSTGRES_URL is set): one
transaction per change, the log read back in order, the snapshot replaced, the outbox marked done, the
intents and answers kept; and the command codec round trip the replay depends on."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from pokerrules.tournament import commands as c

from services.tournament import codec
from services.tournament.store import Change, TournamentStore

URLS = ["", *([os.environ["FELT_TEST_POSTGRES_URL"]] if os.environ.get("FELT_TEST_POSTGRES_URL") else [])]


@pytest.fixture(params=URLS, ids=lambda url: "postgres" if url else "sqlite")
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TournamentStore]:
    opened = TournamentStore(tmp_path / "t.sqlite3", request.param)
    yield opened
    opened.close()


def test_a_change_is_stored_whole_and_read_back_in_order(store: TournamentStore) -> None:
    tid = f"tn_{secrets.token_hex(6)}"
    store.create(tid, 1, "sit_and_go", "registering", {"last_seq": 0}, ("k0", "f", b"first", 1))
    store.add_intent(tid, 1, "ana", f"{tid}:hold:1")
    assert store.pending_intents(tid) == [(1, f"{tid}:hold:1")]
    command = codec.encode_command(c.Register(5, "ana"), [(3, 1)])
    store.commit(
        Change(
            tid,
            "registering",
            {"last_seq": 2},
            (1, command),
            [(1, b"a"), (2, b"b")],
            [(1, '{"k":"x"}'), (2, '{"k":"y"}')],
            (1, b"snap"),
            (1, "DONE"),
            ("k1", "f", b"r", 2),
        )
    )
    assert store.pending_intents(tid) == []
    assert store.commands(tid, 0) == [(1, command)] and store.commands(tid, 1) == []
    assert store.events(tid, 2) == [(2, b"b")] and store.snapshot(tid) == (1, b"snap")
    store.mark_done(tid, 1)
    assert store.pending_steps(tid) == [(2, '{"k":"y"}')]
    assert store.answer("k1") == ("f", b"r") and store.answer("k0") == ("f", b"first")
    store.commit(Change(tid, "running", {"last_seq": 2}, snapshot=(2, b"later")))
    assert store.snapshot(tid) == (2, b"later")
    assert next(row for row in store.tournaments() if row[0] == tid)[3] == "running"
    with pytest.raises(Exception):  # noqa: B017 - a repeated command number: the whole change is refused
        store.commit(Change(tid, "finished", {"last_seq": 9}, (1, command), [(3, b"c")]))
    assert store.events(tid, 3) == [] and next(r for r in store.tournaments() if r[0] == tid)[3] == "running"


def test_a_waves_done_marks_are_one_write(store: TournamentStore) -> None:
    tid = f"tn_{secrets.token_hex(6)}"
    store.create(tid, 1, "mtt", "running", {"last_seq": 0}, None)
    steps = [(n, json.dumps({"k": "ReleaseHand", "n": n})) for n in range(1, 7)]
    store.commit(Change(tid, "running", {"last_seq": 0}, outbox=steps))
    store.mark_done_many(tid, [])
    store.mark_done_many(tid, [2, 3, 5])
    assert [n for n, _ in store.pending_steps(tid)] == [1, 4, 6]
    store.mark_done_many(tid, [1, 4, 6, 2])  # a repeated mark is a no-op
    assert store.pending_steps(tid) == []


def test_every_command_survives_the_log() -> None:
    result = c.HandResult("t1", 4, 2, 3, (c.SeatResult(1, "ana", 100, 0), c.SeatResult(3, "ben", 50, 150)))
    for command in (
        c.Register(1, "ana"),
        c.Unregister(2, "ana"),
        c.Start(3),
        c.HandFinished(4, result),
        c.TimePassed(5),
        c.Pause(6),
        c.Resume(7),
        c.Cancel(8),
    ):
        assert codec.decode_command(codec.encode_command(command, [(9, 4)])) == (command, [(9, 4)])


@pytest.mark.skipif(len(URLS) < 2, reason="!!! FELT_TEST_POSTGRES_URL is not set: SKIPPED !!!")
def test_postgres_sessions_end_a_transaction_left_open_by_a_stopped_process(tmp_path: Path) -> None:
    """Every pooled session ends a transaction left idle (servicekit.postgres): a tournament process
    stopped mid-write never keeps rows locked for the others."""
    from servicekit.postgres import IDLE_IN_TRANSACTION_MS

    opened = TournamentStore(tmp_path / "t.sqlite3", URLS[1])
    try:
        shown = opened._db.read("SHOW idle_in_transaction_session_timeout")[0][0]
        assert shown == f"{IDLE_IN_TRANSACTION_MS // 1000}s"
    finally:
        opened.close()
