"""The table service's schema (services/table/storage/schema.py) on real SQLite and real PostgreSQL:
migrations from an empty database, from the SQLite files the service wrote before shards (the schema of
services/table/poker/store.py and services/table/casino/store.py), concurrently from several shards, and
the same tables, columns and keys at the end in both dialects."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from services.table.storage import Opened, open_database, schema
from services.table.storage.migrations import VERSION_TABLE, latest
from services.table.storage.schema import CASINO, CASINO_V1_SQLITE, LEASES, POKER, POKER_V1_SQLITE

COMPONENTS = (POKER, CASINO)


def _layout(db: Opened) -> dict[str, tuple[list[str], list[str]]]:
    """table -> (columns, primary key columns), as the database itself describes them."""
    if db.dialect == "sqlite":
        names = [
            str(r[0])
            for r in db.read(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        layout = {}
        for name in names:
            info = db.read(f"PRAGMA table_info({name})")
            columns = sorted(str(r[1]) for r in info)
            key = [str(r[1]) for r in sorted((r for r in info if r[5]), key=lambda r: r[5])]
            layout[name] = (columns, key)
        return layout
    rows = db.read(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()"
    )
    keys = db.read(
        "SELECT tc.table_name, kcu.column_name FROM information_schema.table_constraints tc"
        " JOIN information_schema.key_column_usage kcu ON kcu.constraint_name = tc.constraint_name"
        " AND kcu.table_schema = tc.table_schema"
        " WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = current_schema()"
        " ORDER BY tc.table_name, kcu.ordinal_position"
    )
    layout_pg: dict[str, tuple[list[str], list[str]]] = {}
    for table, column in rows:
        layout_pg.setdefault(str(table), ([], []))[0].append(str(column))
    for table, column in keys:
        layout_pg[str(table)][1].append(str(column))
    return {t: (sorted(c), k) for t, (c, k) in layout_pg.items()}


def _versions(db: Opened) -> dict[str, int]:
    rows = db.read(f"SELECT component, MAX(version) FROM {VERSION_TABLE} GROUP BY component")
    return {str(r[0]): int(r[1]) for r in rows}


def test_an_empty_database_is_migrated_to_the_last_versions(location: Any) -> None:
    db = location.open()
    assert _versions(db) == {c: latest(c) for c in (LEASES, POKER, CASINO)}
    tables = set(_layout(db))
    assert {
        "table_leases",
        "table_shards",
        "poker_tables",
        "poker_events",
        "casino_log",
        "casino_events",
    } <= tables
    assert not {"tables", "events", "log", "requests"} & tables  # nothing unprefixed
    again = location.open()  # a second shard starting: nothing left to apply
    assert _versions(again) == _versions(db)
    assert len(db.read(f"SELECT * FROM {VERSION_TABLE}")) == sum(latest(c) for c in (LEASES, POKER, CASINO))


def test_both_dialects_end_with_the_same_tables_columns_and_keys(
    postgres_session: Any, tmp_path: Path
) -> None:
    sqlite_db = open_database("", tmp_path / "t.sqlite3", COMPONENTS)
    postgres_db = open_database(postgres_session.new_schema(), tmp_path / "unused", COMPONENTS, pool_size=2)
    try:
        assert _layout(sqlite_db) == _layout(postgres_db)
    finally:
        sqlite_db.close()
        postgres_db.close()


def test_shards_starting_together_migrate_once(location: Any) -> None:
    opened: list[Opened] = []
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def open_one() -> None:
        try:
            start.wait()
            opened.append(location.open())
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(opened) == 4
    assert len(opened[0].read(f"SELECT * FROM {VERSION_TABLE}")) == sum(
        latest(c) for c in (LEASES, POKER, CASINO)
    )


def test_leases_version_2_adds_seat_claims_and_keeps_the_data(
    location: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store at leases version 1 (before seat claims), with tables, leases and shards in it: opening it
    applies versions 2 to 5 only, keeps every row, and the claims table starts empty and works (its
    key); the shards' rows from before versions 3 and 4 have no browser door and no internal address (their
    shards write them when they join)."""
    with monkeypatch.context() as m:
        m.setitem(schema.MIGRATIONS, LEASES, schema.MIGRATIONS[LEASES][:1])
        old = location.open()
        assert _versions(old) == {LEASES: 1, POKER: latest(POKER), CASINO: latest(CASINO)}
        assert "table_seat_claims" not in _layout(old)
        old.write(
            lambda tx: tx.execute(
                "INSERT INTO poker_tables (table_id, settings, host, invite_code, invited, created_ms)"
                " VALUES ('t-1', ?, 'ana', '', '[]', 5)",
                (b"\n\x01",),
            )
        )
        old.write(
            lambda tx: tx.execute(
                "INSERT INTO table_leases (kind, table_id, owner, incarnation, epoch, expires_ms)"
                " VALUES ('poker', 't-1', 'table-0', 'inc-1', 3, 99)"
            )
        )
        old.write(
            lambda tx: tx.execute(
                "INSERT INTO table_shards (shard_id, incarnation, address, heartbeat_ms)"
                " VALUES ('table-0', 'inc-1', 'a:1', 98)"
            )
        )
    new = location.open()
    assert _versions(new) == {c: latest(c) for c in (LEASES, POKER, CASINO)} and latest(LEASES) == 5
    assert new.read("SELECT table_id, host FROM poker_tables") == [("t-1", "ana")]
    assert new.read("SELECT kind, table_id, owner, epoch FROM table_leases") == [
        ("poker", "t-1", "table-0", 3)
    ]
    assert new.read("SELECT shard_id, address FROM table_shards") == [("table-0", "a:1")]
    # Version 3: the shard's browser door; version 4: its internal port. None for a shard from before.
    assert new.read("SELECT web_url, internal_address FROM table_shards") == [("", "")]
    assert _layout(new)["table_seat_claims"] == (
        ["kind", "player", "seats", "table_id"],
        ["kind", "player", "table_id"],
    )
    assert new.read("SELECT COUNT(*) FROM table_seat_claims") == [(0,)]
    row = "INSERT INTO table_seat_claims (kind, player, table_id, seats) VALUES ('poker', 'ana', 't-1', 1)"
    new.write(lambda tx: tx.execute(row))
    with pytest.raises(Exception):  # noqa: B017 - one claim per (kind, player, table), in either dialect
        new.write(lambda tx: tx.execute(row))
    assert new.read("SELECT kind, player, table_id, seats FROM table_seat_claims") == [
        ("poker", "ana", "t-1", 1)
    ]


# The poker file's schema at SQLite user_version 0 (before the store versioned it), as a fixture.
POKER_USER_VERSION_0 = """
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


def _legacy_poker_file(path: Path, user_version: int = 4) -> None:
    """A tables.sqlite3 as the store wrote it before shards, at its schema's last version (4: version 1
    of this layer is that schema) or at its first (0), with rows as the store of that version wrote them:
    at version 0, invitations lived in the snapshot, and requests had no fingerprint."""
    db = sqlite3.connect(path)
    if user_version == 0:
        db.executescript(POKER_USER_VERSION_0)
        tables = "INSERT INTO tables VALUES (?, ?, ?, ?, ?, ?)"
        db.execute(
            "INSERT INTO snapshots VALUES ('priv-7', ?)", (json.dumps({"hand": 3, "invited": ["cy"]}),)
        )
        db.execute("INSERT INTO hand_log VALUES ('priv-7', 1, 'invite', ?)", (json.dumps({"player": "di"}),))
        db.execute("INSERT INTO payouts VALUES ('pay-b', 'nlhe-1', 'bo', 30, 0)")
        db.execute("INSERT INTO payouts VALUES ('pay-a', 'nlhe-1', 'ana', 20, 0)")
        db.execute("INSERT INTO requests VALUES ('Act|ana|nlhe-1|r1', x'0102')")
    else:
        db.executescript(POKER_V1_SQLITE)
        db.execute("PRAGMA user_version = 4")
        tables = "INSERT INTO tables VALUES (?, ?, ?, ?, ?, ?, '')"
        db.execute("INSERT INTO snapshots VALUES ('priv-7', ?)", (json.dumps({"hand": 3}),))
        db.execute("INSERT INTO invitations VALUES ('priv-7', 'cy'), ('priv-7', 'di')")
        db.execute("INSERT INTO payouts VALUES ('pay-b', 'nlhe-1', 'bo', 30, 0, 2, 99, 'UNAVAILABLE', 0)")
        db.execute("INSERT INTO payouts VALUES ('pay-a', 'nlhe-1', 'ana', 20, 0, 0, 0, '', 0)")
        db.execute("INSERT INTO requests VALUES ('Act|ana|nlhe-1|r1', x'0102', 'fp', 5)")
    db.execute(tables, ("nlhe-1", b"\n\x01", "", "", "[]", 1))
    db.execute(tables, ("priv-7", b"\n\x02", "ana", "CODE", '["bo"]', 2))
    db.execute("INSERT INTO events VALUES ('nlhe-1', 1, 1, NULL, x'08', 10)")
    db.execute("INSERT INTO events VALUES ('nlhe-1', 2, 1, 'ana', x'09', 11)")
    db.execute("INSERT INTO hands VALUES ('nlhe-1', 1, 10, 0, '{\"1\": \"ana\"}')")
    db.execute("INSERT INTO hand_players VALUES ('nlhe-1', 1, 'ana', 1, -50)")
    db.execute("INSERT INTO money_ops VALUES ('nlhe-1', 1, 'hold-1', 'ana', 2000, 0)")
    db.commit()
    db.close()


def _legacy_casino_file(path: Path) -> None:
    db = sqlite3.connect(path)
    db.executescript(CASINO_V1_SQLITE)
    db.execute("INSERT INTO log VALUES ('thb-1', 1, 1, 'round', '{}')")
    db.execute("INSERT INTO log VALUES ('thb-1', 1, 2, 'seat', '{}')")
    db.execute("INSERT INTO log VALUES ('ch-1', 4, 1, 'round', '{}')")
    db.execute("INSERT INTO events VALUES ('thb-1', 1, 1, 'ROUND_OPENED', NULL, NULL, '{}', 5)")
    db.execute("INSERT INTO bettors VALUES ('thb-1', 1, 'ana')")
    db.commit()
    db.close()


@pytest.mark.parametrize("user_version", [0, 4])
def test_the_files_of_the_service_before_shards_are_migrated_with_their_data(
    tmp_path: Path, user_version: int
) -> None:
    _legacy_poker_file(tmp_path / "tables.sqlite3", user_version)
    _legacy_casino_file(tmp_path / "casino.sqlite3")
    poker = open_database("", tmp_path / "tables.sqlite3", [POKER])
    casino = open_database("", tmp_path / "casino.sqlite3", [CASINO])
    try:
        assert _versions(poker) == {LEASES: latest(LEASES), POKER: latest(POKER)}
        assert _versions(casino) == {LEASES: latest(LEASES), CASINO: latest(CASINO)}
        assert poker.read("SELECT table_id, settings, invited FROM poker_tables ORDER BY table_id") == [
            ("nlhe-1", b"\n\x01", "[]"),
            ("priv-7", b"\n\x02", '["bo"]'),
        ]
        assert poker.read("SELECT body FROM poker_snapshots") == [(json.dumps({"hand": 3}),)]
        assert poker.read("SELECT player FROM poker_invitations ORDER BY player") == [("cy",), ("di",)]
        assert poker.read("SELECT tournament_id FROM poker_tables") == [("",), ("",)]
        assert poker.read("SELECT seq, private_player, body FROM poker_events ORDER BY seq") == [
            (1, None, b"\x08"),
            (2, "ana", b"\t"),
        ]
        assert poker.read("SELECT net FROM poker_hand_players") == [(-50,)]
        assert poker.read("SELECT hold_id, done FROM poker_money_ops") == [("hold-1", 0)]
        # Payouts keep the order they were owed in (it was SQLite's rowid).
        assert poker.read("SELECT transfer_id, attempts FROM poker_payouts ORDER BY n") == [
            ("pay-b", 2 if user_version else 0),
            ("pay-a", 0),
        ]
        assert poker.read("SELECT response, fingerprint FROM poker_requests") == [
            (b"\x01\x02", "fp" if user_version else "")
        ]
        # Every table has a lease row, owned by nobody yet: the first shard to start acquires it.
        assert poker.read("SELECT table_id, owner, epoch FROM table_leases ORDER BY table_id") == [
            ("nlhe-1", None, 0),
            ("priv-7", None, 0),
        ]
        assert casino.read("SELECT table_id, owner, epoch FROM table_leases ORDER BY table_id") == [
            ("ch-1", None, 0),
            ("thb-1", None, 0),
        ]
        assert casino.read("SELECT COUNT(*) FROM casino_log") == [(3,)]
        assert casino.read("SELECT player_id FROM casino_bettors") == [("ana",)]
        assert {"log", "events", "bettors"}.isdisjoint(_layout(casino))
    finally:
        poker.close()
        casino.close()
    # Opening again applies nothing more and keeps the data.
    again = open_database("", tmp_path / "tables.sqlite3", [POKER])
    try:
        assert again.read("SELECT COUNT(*) FROM poker_events") == [(2,)]
    finally:
        again.close()


@pytest.mark.parametrize("user_version", [0, 4])
def test_a_migrated_file_has_the_layout_of_a_new_one(tmp_path: Path, user_version: int) -> None:
    _legacy_poker_file(tmp_path / "old.sqlite3", user_version)
    _legacy_casino_file(tmp_path / "old-casino.sqlite3")
    old = open_database("", tmp_path / "old.sqlite3", [POKER])
    old_casino = open_database("", tmp_path / "old-casino.sqlite3", [CASINO])
    new = open_database("", tmp_path / "new.sqlite3", [POKER])
    new_casino = open_database("", tmp_path / "new-casino.sqlite3", [CASINO])
    try:
        assert _layout(old) == _layout(new)
        assert _layout(old_casino) == _layout(new_casino)
        indexes = (
            "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
        assert old.read(indexes) == new.read(indexes)
        assert old_casino.read(indexes) == new_casino.read(indexes)
    finally:
        for db in (old, old_casino, new, new_casino):
            db.close()


def test_a_failed_migration_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    """A file that is not what version 1 says (its `tables` has no `table_id`): version 2 cannot give its
    tables lease rows, the whole migration rolls back, and the store refuses to open rather than run on
    half a schema."""
    path = tmp_path / "tables.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(POKER_V1_SQLITE.replace("tables (\n    table_id TEXT", "tables (\n    id TEXT", 1))
    db.execute("PRAGMA user_version = 4")
    db.commit()
    db.close()
    with pytest.raises(sqlite3.OperationalError):
        open_database("", path, [POKER])
    db = sqlite3.connect(path)
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    db.close()
    assert "tables" in names and "poker_tables" not in names and VERSION_TABLE not in names
