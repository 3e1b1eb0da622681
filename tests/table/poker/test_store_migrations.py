"""A table log written by an older version of the service opens with the current one: its schema is
migrated once (SQLite's user_version, then the table store's own versions: services/table/storage), its
rows kept, and it works like a new file afterwards."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from servicekit.idempotency import Saved

from services.table.poker.store import Answer, Payout, TableStore
from services.table.storage.migrations import VERSION_TABLE, latest
from services.table.storage.schema import POKER

# The schema before versions (user_version 0), as the first release wrote it.
VERSION_0 = """
CREATE TABLE tables (
    table_id TEXT PRIMARY KEY, settings BLOB NOT NULL, host TEXT NOT NULL, invite_code TEXT NOT NULL,
    invited TEXT NOT NULL, created_ms INTEGER NOT NULL);
CREATE TABLE snapshots (table_id TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE hand_log (
    table_id TEXT NOT NULL, n INTEGER NOT NULL, op TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (table_id, n));
CREATE TABLE events (
    table_id TEXT NOT NULL, seq INTEGER NOT NULL, hand INTEGER NOT NULL, private_player TEXT,
    body BLOB NOT NULL, time_ms INTEGER NOT NULL, PRIMARY KEY (table_id, seq));
CREATE TABLE hands (
    table_id TEXT NOT NULL, hand INTEGER NOT NULL, started_ms INTEGER NOT NULL, voided INTEGER NOT NULL,
    players TEXT NOT NULL, PRIMARY KEY (table_id, hand));
CREATE TABLE hand_players (
    table_id TEXT NOT NULL, hand INTEGER NOT NULL, player TEXT NOT NULL, seat INTEGER NOT NULL,
    net INTEGER NOT NULL, PRIMARY KEY (table_id, hand, player));
CREATE INDEX hand_players_by_player ON hand_players (player, table_id, hand);
CREATE TABLE money_ops (
    table_id TEXT NOT NULL, n INTEGER NOT NULL, hold_id TEXT NOT NULL, player TEXT NOT NULL,
    amount INTEGER NOT NULL, done INTEGER NOT NULL, PRIMARY KEY (table_id, n));
CREATE TABLE payouts (
    transfer_id TEXT PRIMARY KEY, table_id TEXT NOT NULL, player TEXT NOT NULL, amount INTEGER NOT NULL,
    done INTEGER NOT NULL);
CREATE TABLE requests (key TEXT PRIMARY KEY, response BLOB NOT NULL);
"""


def _version_0(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.executescript(VERSION_0)
        db.execute("INSERT INTO requests VALUES ('JoinTable|ana|hu|r1', x'0801')")
        snapshot = {"seats": {}, "button": None, "hand_number": 3, "invited": ["ivy", "zoe"]}
        snapshot |= {"chips_bought_in": 0, "chips_returned": 0}
        db.execute("INSERT INTO snapshots VALUES ('home', ?)", (json.dumps(snapshot),))
        db.execute("""INSERT INTO hand_log VALUES ('home', 1, 'invite', '{"by": "hal", "player": "max"}')""")
        db.execute("INSERT INTO payouts VALUES ('pt-home-q7-s1-out', 'home', 'ivy', 500, 0)")


def test_an_older_file_is_migrated_once_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "tables.sqlite3"
    _version_0(path)
    store = TableStore(path)
    try:
        # The old answer is still there, unreachable by any new (caller-scoped) key, and ages out.
        old = store.response("JoinTable|ana|hu|r1")
        assert old == Saved("", b"\x08\x01")
        assert store.prune_requests(before_ms=1) == 1
        answer = Answer('["player","ana","JoinTable","hu","r1"]', Saved("f" * 64, b"\x08\x02"), 5)
        store.save_response(answer)
        assert store.response(answer.key) == answer.saved
        # Invitations moved out of the snapshot (and the hand log) into rows of their own.
        assert store.invitations("home") == ["ivy", "max", "zoe"]
        body = store.snapshot("home")
        assert body is not None and "invited" not in body and body["hand_number"] == 3
        # An open payout is still owed, with no failed attempt yet.
        assert store.open_payouts("home") == [Payout("pt-home-q7-s1-out", "ivy", 500)]
        assert store.pending_payouts() == (1, 500, 0)
    finally:
        store.close()
    again = TableStore(path)  # opening again migrates nothing more
    try:
        assert again.response(answer.key) == answer.saved
    finally:
        again.close()
    assert _poker_version(path) == latest(POKER)


def _poker_version(path: Path) -> int:
    with sqlite3.connect(path) as db:
        row = db.execute(f"SELECT MAX(version) FROM {VERSION_TABLE} WHERE component = 'poker'").fetchone()
    return int(row[0])


def test_a_new_file_gets_the_current_schema(tmp_path: Path) -> None:
    store = TableStore(tmp_path / "tables.sqlite3")
    store.close()
    assert _poker_version(tmp_path / "tables.sqlite3") == latest(POKER)
    with sqlite3.connect(tmp_path / "tables.sqlite3") as db:
        columns = {row[1] for row in db.execute("PRAGMA table_info(poker_requests)")}
    assert {"key", "response", "fingerprint", "created_ms"} <= columns
    with sqlite3.connect(tmp_path / "tables.sqlite3") as db:
        assert db.execute("SELECT COUNT(*) FROM poker_invitations").fetchone()[0] == 0
