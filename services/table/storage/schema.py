"""The table service's schema, as versioned migrations of three components, each written for SQLite and for
PostgreSQL side by side so the two cannot drift (tests/table/storage checks both end with the same tables,
columns and keys). A migration is never edited once released: a change is a new version.

- `leases`: which shard owns each table (`table_leases`, with its fencing epoch) and the shards alive
  (`table_shards`). Migrated first: the other components' migrations give existing tables a lease row.
  Version 2: the seats each player holds, per kind and table (`table_seat_claims`,
  services/table/storage/seats.py), which the per-player seat quotas count across every shard.
  Version 3: each shard's browser door (`table_shards.web_url`), where a web client follows a table.
  Version 4: each shard's internal port (`table_shards.internal_address`, mutual TLS), where the other
  services follow a table.
- `poker`: the poker tables' log (see services/table/poker/store.py for what each table holds). Version 3:
  the tournament directors' epochs seen (`poker_director_epochs`, issue 25).
- `casino`: the casino tables' log (services/table/casino/store.py).

Version 1 of `poker` and `casino` is the embedded layout the service used before shards (one SQLite file
each, created with IF NOT EXISTS and no version table; the poker file had versions of its own in SQLite's
`user_version`, whose steps version 1 takes): applied to such a file it brings it to that layout's last
version and changes nothing else, so an existing file is simply at version 1. It never existed in
PostgreSQL (no-op there). Version 2 is the layout shards share: every table's name carries its component,
so poker and casino (and their leases) can live in one database; SQLite gets there by renaming, PostgreSQL
by creating.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from servicekit.sqlstore import FENCE_SQLSTATE

from services.table.storage.database import ScriptTx


@dataclass(frozen=True)
class Migration:
    version: int
    sqlite: str | Callable[[ScriptTx], None]  # a script, or a step that needs Python (reshaping JSON)
    postgres: str


LEASES, POKER, CASINO = "leases", "poker", "casino"

_LEASES_V1_SQLITE = """
CREATE TABLE table_shards (
    shard_id TEXT PRIMARY KEY, incarnation TEXT NOT NULL, address TEXT NOT NULL,
    heartbeat_ms INTEGER NOT NULL, draining INTEGER NOT NULL DEFAULT 0);
CREATE TABLE table_leases (
    kind TEXT NOT NULL, table_id TEXT NOT NULL, owner TEXT, incarnation TEXT,
    epoch INTEGER NOT NULL CHECK (epoch >= 0), expires_ms INTEGER NOT NULL,
    PRIMARY KEY (kind, table_id));
CREATE INDEX table_leases_by_owner ON table_leases (kind, owner, incarnation);
"""
_LEASES_V1_POSTGRES = """
CREATE TABLE table_shards (
    shard_id TEXT PRIMARY KEY, incarnation TEXT NOT NULL, address TEXT NOT NULL,
    heartbeat_ms BIGINT NOT NULL, draining INTEGER NOT NULL DEFAULT 0);
CREATE TABLE table_leases (
    kind TEXT NOT NULL, table_id TEXT NOT NULL, owner TEXT, incarnation TEXT,
    epoch BIGINT NOT NULL CHECK (epoch >= 0), expires_ms BIGINT NOT NULL,
    PRIMARY KEY (kind, table_id));
CREATE INDEX table_leases_by_owner ON table_leases (kind, owner, incarnation);
"""

# Version 2 of `leases`: seat claims, shared by poker and casino (`kind`). Empty at first: each table's
# claims are written from its seats when a shard next recovers it.
_LEASES_V2 = """
CREATE TABLE table_seat_claims (
    kind TEXT NOT NULL, player TEXT NOT NULL, table_id TEXT NOT NULL, seats INTEGER NOT NULL,
    PRIMARY KEY (kind, player, table_id));
CREATE INDEX table_seat_claims_by_table ON table_seat_claims (kind, table_id);
"""

# Version 4 of `leases`: the address of each shard's internal port (mutual TLS, servicekit.tls), where the
# other services' calls are sent when a table moved (the public `address` is for players).
_LEASES_V4 = "ALTER TABLE table_shards ADD COLUMN internal_address TEXT NOT NULL DEFAULT '';"

# Version 5 of `leases` (issue 24): on PostgreSQL a fenced write's lease check goes in the same message as
# the write's other statements and its COMMIT (services/table/storage/postgres.py), so nobody reads its
# result: the check raises instead, with FENCE_SQLSTATE and the reason, and the transaction rolls back.
_LEASES_V5_POSTGRES = f"""
CREATE OR REPLACE FUNCTION felt_fence(held BOOLEAN, why TEXT) RETURNS VOID LANGUAGE plpgsql AS $$
BEGIN
    IF NOT held THEN
        RAISE EXCEPTION USING ERRCODE = '{FENCE_SQLSTATE}', MESSAGE = why;
    END IF;
END $$;
"""

# The poker store's schema before shards, as services/table/poker/store.py last created it (its SQLite
# `user_version` 4), and the steps that store took from its older versions (`user_version` 0 to 3).
POKER_V1_SQLITE = """
CREATE TABLE IF NOT EXISTS tables (
    table_id TEXT PRIMARY KEY, settings BLOB NOT NULL, host TEXT NOT NULL, invite_code TEXT NOT NULL,
    invited TEXT NOT NULL, created_ms INTEGER NOT NULL, tournament_id TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS snapshots (table_id TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS invitations (
    table_id TEXT NOT NULL, player TEXT NOT NULL, PRIMARY KEY (table_id, player));
CREATE TABLE IF NOT EXISTS hand_log (
    table_id TEXT NOT NULL, n INTEGER NOT NULL, op TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (table_id, n));
CREATE TABLE IF NOT EXISTS events (
    table_id TEXT NOT NULL, seq INTEGER NOT NULL, hand INTEGER NOT NULL, private_player TEXT,
    body BLOB NOT NULL, time_ms INTEGER NOT NULL, PRIMARY KEY (table_id, seq));
CREATE TABLE IF NOT EXISTS hands (
    table_id TEXT NOT NULL, hand INTEGER NOT NULL, started_ms INTEGER NOT NULL, voided INTEGER NOT NULL,
    players TEXT NOT NULL, PRIMARY KEY (table_id, hand));
CREATE TABLE IF NOT EXISTS hand_players (
    table_id TEXT NOT NULL, hand INTEGER NOT NULL, player TEXT NOT NULL, seat INTEGER NOT NULL,
    net INTEGER NOT NULL, PRIMARY KEY (table_id, hand, player));
CREATE INDEX IF NOT EXISTS hand_players_by_player ON hand_players (player, table_id, hand);
CREATE TABLE IF NOT EXISTS money_ops (
    table_id TEXT NOT NULL, n INTEGER NOT NULL, hold_id TEXT NOT NULL, player TEXT NOT NULL,
    amount INTEGER NOT NULL, done INTEGER NOT NULL, PRIMARY KEY (table_id, n));
CREATE TABLE IF NOT EXISTS payouts (
    transfer_id TEXT PRIMARY KEY, table_id TEXT NOT NULL, player TEXT NOT NULL, amount INTEGER NOT NULL,
    done INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_at_ms INTEGER NOT NULL DEFAULT 0,
    last_error TEXT NOT NULL DEFAULT '', refused INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS payouts_open ON payouts (table_id) WHERE done = 0;
CREATE TABLE IF NOT EXISTS requests (
    key TEXT PRIMARY KEY, response BLOB NOT NULL, fingerprint TEXT NOT NULL DEFAULT '',
    created_ms INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS requests_by_age ON requests (created_ms);
"""


def _poker_user_version_1(tx: ScriptTx) -> None:
    """Answers carry the request's fingerprint and their age (older keys never match a new one)."""
    tx.execute("ALTER TABLE requests ADD COLUMN fingerprint TEXT NOT NULL DEFAULT ''")
    tx.execute("ALTER TABLE requests ADD COLUMN created_ms INTEGER NOT NULL DEFAULT 0")
    tx.execute("CREATE INDEX IF NOT EXISTS requests_by_age ON requests (created_ms)")


def _poker_user_version_2(tx: ScriptTx) -> None:
    """Invitations are rows of their own, out of the snapshots and the hand logs."""
    tx.execute(
        "CREATE TABLE invitations"
        " (table_id TEXT NOT NULL, player TEXT NOT NULL, PRIMARY KEY (table_id, player))"
    )
    for table_id, raw in tx.execute("SELECT table_id, body FROM snapshots").fetchall():
        body = json.loads(raw)
        invited = body.pop("invited", [])
        tx.executemany("INSERT OR IGNORE INTO invitations VALUES (?, ?)", [(table_id, p) for p in invited])
        tx.execute("UPDATE snapshots SET body = ? WHERE table_id = ?", (json.dumps(body), table_id))
    for table_id, raw in tx.execute("SELECT table_id, body FROM hand_log WHERE op = 'invite'").fetchall():
        tx.execute("INSERT OR IGNORE INTO invitations VALUES (?, ?)", (table_id, json.loads(raw)["player"]))


def _poker_user_version_3(tx: ScriptTx) -> None:
    """An open payout carries its failed attempts, its next try, its last error and whether it was refused."""
    for column in (
        "attempts INTEGER NOT NULL DEFAULT 0",
        "next_at_ms INTEGER NOT NULL DEFAULT 0",
        "last_error TEXT NOT NULL DEFAULT ''",
        "refused INTEGER NOT NULL DEFAULT 0",
    ):
        tx.execute(f"ALTER TABLE payouts ADD COLUMN {column}")


def _poker_user_version_4(tx: ScriptTx) -> None:
    """A table may belong to a tournament."""
    tx.execute("ALTER TABLE tables ADD COLUMN tournament_id TEXT NOT NULL DEFAULT ''")


_POKER_USER_VERSIONS = [
    _poker_user_version_1,
    _poker_user_version_2,
    _poker_user_version_3,
    _poker_user_version_4,
]


def _poker_v1_sqlite(tx: ScriptTx) -> None:
    """A file of the store before shards: brought to its last layout (`user_version` 4) the way that store
    did it; a new file: that layout created."""
    if tx.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tables'").fetchone():
        version = int(tx.execute("PRAGMA user_version").fetchone()[0])
        for step in _POKER_USER_VERSIONS[version:]:
            step(tx)
    tx.script(POKER_V1_SQLITE)
    tx.execute(f"PRAGMA user_version = {len(_POKER_USER_VERSIONS)}")


# Shared layout: prefixed names; payouts get an explicit order (`n`, was SQLite's rowid); every table a
# lease row (unowned: no owner, epoch 0, expired).
_POKER_V2_SQLITE = """
ALTER TABLE tables RENAME TO poker_tables;
ALTER TABLE snapshots RENAME TO poker_snapshots;
ALTER TABLE invitations RENAME TO poker_invitations;
ALTER TABLE hand_log RENAME TO poker_hand_log;
ALTER TABLE events RENAME TO poker_events;
ALTER TABLE hands RENAME TO poker_hands;
ALTER TABLE hand_players RENAME TO poker_hand_players;
DROP INDEX hand_players_by_player;
CREATE INDEX poker_hand_players_by_player ON poker_hand_players (player, table_id, hand);
ALTER TABLE money_ops RENAME TO poker_money_ops;
ALTER TABLE payouts RENAME TO poker_payouts;
ALTER TABLE poker_payouts ADD COLUMN n INTEGER NOT NULL DEFAULT 0;
UPDATE poker_payouts SET n = rowid;
DROP INDEX payouts_open;
CREATE INDEX poker_payouts_open ON poker_payouts (table_id, n) WHERE done = 0;
ALTER TABLE requests RENAME TO poker_requests;
DROP INDEX requests_by_age;
CREATE INDEX poker_requests_by_age ON poker_requests (created_ms);
INSERT INTO table_leases (kind, table_id, owner, incarnation, epoch, expires_ms)
    SELECT 'poker', table_id, NULL, NULL, 0, 0 FROM poker_tables;
"""
_POKER_V2_POSTGRES = """
CREATE TABLE poker_tables (
    table_id TEXT PRIMARY KEY, settings BYTEA NOT NULL, host TEXT NOT NULL, invite_code TEXT NOT NULL,
    invited TEXT NOT NULL, created_ms BIGINT NOT NULL, tournament_id TEXT NOT NULL DEFAULT '');
CREATE TABLE poker_snapshots (table_id TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE poker_invitations (
    table_id TEXT NOT NULL, player TEXT NOT NULL, PRIMARY KEY (table_id, player));
CREATE TABLE poker_hand_log (
    table_id TEXT NOT NULL, n BIGINT NOT NULL, op TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (table_id, n));
CREATE TABLE poker_events (
    table_id TEXT NOT NULL, seq BIGINT NOT NULL, hand BIGINT NOT NULL, private_player TEXT,
    body BYTEA NOT NULL, time_ms BIGINT NOT NULL, PRIMARY KEY (table_id, seq));
CREATE TABLE poker_hands (
    table_id TEXT NOT NULL, hand BIGINT NOT NULL, started_ms BIGINT NOT NULL, voided INTEGER NOT NULL,
    players TEXT NOT NULL, PRIMARY KEY (table_id, hand));
CREATE TABLE poker_hand_players (
    table_id TEXT NOT NULL, hand BIGINT NOT NULL, player TEXT NOT NULL, seat INTEGER NOT NULL,
    net BIGINT NOT NULL, PRIMARY KEY (table_id, hand, player));
CREATE INDEX poker_hand_players_by_player ON poker_hand_players (player, table_id, hand);
CREATE TABLE poker_money_ops (
    table_id TEXT NOT NULL, n BIGINT NOT NULL, hold_id TEXT NOT NULL, player TEXT NOT NULL,
    amount BIGINT NOT NULL, done INTEGER NOT NULL, PRIMARY KEY (table_id, n));
CREATE TABLE poker_payouts (
    transfer_id TEXT PRIMARY KEY, table_id TEXT NOT NULL, player TEXT NOT NULL, amount BIGINT NOT NULL,
    done INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_at_ms BIGINT NOT NULL DEFAULT 0,
    last_error TEXT NOT NULL DEFAULT '', refused INTEGER NOT NULL DEFAULT 0, n BIGINT NOT NULL DEFAULT 0);
CREATE INDEX poker_payouts_open ON poker_payouts (table_id, n) WHERE done = 0;
CREATE TABLE poker_requests (
    key TEXT PRIMARY KEY, response BYTEA NOT NULL, fingerprint TEXT NOT NULL DEFAULT '',
    created_ms BIGINT NOT NULL DEFAULT 0);
CREATE INDEX poker_requests_by_age ON poker_requests (created_ms);
"""

# The casino store's schema before shards, exactly as services/table/casino/store.py created it.
CASINO_V1_SQLITE = """
CREATE TABLE IF NOT EXISTS log (
    table_id TEXT NOT NULL, round INTEGER NOT NULL, n INTEGER NOT NULL, op TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (table_id, round, n));
CREATE TABLE IF NOT EXISTS events (
    table_id TEXT NOT NULL, seq INTEGER NOT NULL, round INTEGER NOT NULL, kind TEXT NOT NULL,
    seat INTEGER, player_id TEXT, data TEXT NOT NULL, time_ms INTEGER NOT NULL,
    PRIMARY KEY (table_id, seq));
CREATE TABLE IF NOT EXISTS bettors (
    table_id TEXT NOT NULL, round INTEGER NOT NULL, player_id TEXT NOT NULL,
    PRIMARY KEY (table_id, round, player_id));
CREATE INDEX IF NOT EXISTS bettors_by_player ON bettors (player_id, round);
"""
_CASINO_V2_SQLITE = """
ALTER TABLE log RENAME TO casino_log;
ALTER TABLE events RENAME TO casino_events;
ALTER TABLE bettors RENAME TO casino_bettors;
DROP INDEX bettors_by_player;
CREATE INDEX casino_bettors_by_player ON casino_bettors (player_id, round);
INSERT INTO table_leases (kind, table_id, owner, incarnation, epoch, expires_ms)
    SELECT DISTINCT 'casino', table_id, NULL, NULL, 0, 0 FROM casino_log;
"""
_CASINO_V2_POSTGRES = """
CREATE TABLE casino_log (
    table_id TEXT NOT NULL, round BIGINT NOT NULL, n BIGINT NOT NULL, op TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (table_id, round, n));
CREATE TABLE casino_events (
    table_id TEXT NOT NULL, seq BIGINT NOT NULL, round BIGINT NOT NULL, kind TEXT NOT NULL,
    seat INTEGER, player_id TEXT, data TEXT NOT NULL, time_ms BIGINT NOT NULL,
    PRIMARY KEY (table_id, seq));
CREATE TABLE casino_bettors (
    table_id TEXT NOT NULL, round BIGINT NOT NULL, player_id TEXT NOT NULL,
    PRIMARY KEY (table_id, round, player_id));
CREATE INDEX casino_bettors_by_player ON casino_bettors (player_id, round);
"""

# Version 3: the answers to the players' casino requests (idempotent retries, issue 14).
_CASINO_V3_SQLITE = """
CREATE TABLE casino_requests (
    key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, result TEXT NOT NULL, response BLOB,
    time_ms INTEGER NOT NULL);
CREATE INDEX casino_requests_by_time ON casino_requests (time_ms);
"""
_CASINO_V3_POSTGRES = """
CREATE TABLE casino_requests (
    key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, result TEXT NOT NULL, response BYTEA,
    time_ms BIGINT NOT NULL);
CREATE INDEX casino_requests_by_time ON casino_requests (time_ms);
"""

# Version 3 of `leases`: the base URL of each shard's browser door (servicekit/door.py; '' without one).
_LEASES_V3 = "ALTER TABLE table_shards ADD COLUMN web_url TEXT NOT NULL DEFAULT '';"

# Version 3 of `poker` (issue 25): the highest tournament-director epoch each tournament's instructions
# carried to any shard, so a table refuses a stale director's instruction (STALE_DIRECTOR) after a restart
# of its shard or a takeover of the table by another shard too (services/table/poker/director.py).
_POKER_V3 = """
CREATE TABLE poker_director_epochs (tournament_id TEXT PRIMARY KEY, epoch BIGINT NOT NULL);
"""

MIGRATIONS: dict[str, list[Migration]] = {
    LEASES: [
        Migration(1, _LEASES_V1_SQLITE, _LEASES_V1_POSTGRES),
        Migration(2, _LEASES_V2, _LEASES_V2),
        Migration(3, _LEASES_V3, _LEASES_V3),
        Migration(4, _LEASES_V4, _LEASES_V4),
        Migration(5, "", _LEASES_V5_POSTGRES),
    ],
    POKER: [
        Migration(1, _poker_v1_sqlite, ""),
        Migration(2, _POKER_V2_SQLITE, _POKER_V2_POSTGRES),
        Migration(3, _POKER_V3, _POKER_V3),
    ],
    CASINO: [
        Migration(1, CASINO_V1_SQLITE, ""),
        Migration(2, _CASINO_V2_SQLITE, _CASINO_V2_POSTGRES),
        Migration(3, _CASINO_V3_SQLITE, _CASINO_V3_POSTGRES),
    ],
}
