"""The table service's storage layer: one schema for SQLite (embedded, the default) and PostgreSQL
(`TABLE_DATABASE_URL=postgresql://...`, shared by shards), with per-table leases fenced on every write.

- database.py: the interface (`write` one transaction, `read` one query), sqlite.py and postgres.py
- schema.py, migrations.py: versioned migrations of both dialects, applied at open
- leases.py: which shard owns a table, renewal, takeover, placement, and the fence every write passes
- seats.py: the seats each player holds at each table (claims), which the seat quotas count across shards
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from servicekit.schema import MIGRATE_AT_START, SchemaPolicy, await_schema, describe

from services.table.storage.database import Database, StoreUnavailable, Tx
from services.table.storage.migrations import migrate, missing
from services.table.storage.postgres import PostgresDatabase
from services.table.storage.schema import CASINO, LEASES, POKER
from services.table.storage.sqlite import SqliteDatabase

Opened = SqliteDatabase | PostgresDatabase


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


# The embedded default: each component's log in a file of its own in the data directory.
SQLITE_FILES = {POKER: "tables.sqlite3", CASINO: "casino.sqlite3"}


def open_database(
    url: str,
    default_sqlite: Path,
    components: Sequence[str],
    *,
    pool_size: int = 8,
    schema: SchemaPolicy = MIGRATE_AT_START,
) -> Opened:
    """PostgreSQL for a postgresql:// URL, SQLite at the path of a sqlite:/// URL, else SQLite at
    `default_sqlite`; at the last version of the leases and of `components` before it returns: migrated
    now, or (FELT_MIGRATE=external) once `felt migrate` has (servicekit.schema)."""
    db = _open(url, default_sqlite, pool_size)
    try:
        if schema.external:
            where = str(db.path) if isinstance(db, SqliteDatabase) else describe(url)
            lacking = [LEASES, *components]
            await_schema("table", where, lambda: db.run_alone(lambda tx: missing(tx, lacking)), schema)
        else:
            now_ms = time.time_ns() // 1_000_000
            db.run_alone(lambda tx: migrate(tx, [LEASES, *components], now_ms))
    except BaseException:
        db.close()
        raise
    return db


def _open(url: str, default_sqlite: Path, pool_size: int) -> Opened:
    if is_postgres_url(url):
        return PostgresDatabase(url, pool_size=pool_size)
    if url.startswith("sqlite:///"):
        return SqliteDatabase(Path(url.removeprefix("sqlite:///")))
    if url:
        raise ValueError(f"unsupported TABLE_DATABASE_URL {url!r}: use postgresql://... or sqlite:///path")
    return SqliteDatabase(default_sqlite)


def migrate_database(url: str, data_dir: Path) -> list[str]:
    """`felt migrate`: every component at its last version, in the database(s) the service would open
    (one for a URL; by default a file per component in the data directory); the migrations applied."""
    now_ms = time.time_ns() // 1_000_000
    if url:
        return [f"table {c} {v}" for c, v in _migrate_one(url, Path(), [LEASES, POKER, CASINO], now_ms)]
    done: list[str] = []
    for component in (POKER, CASINO):
        file = SQLITE_FILES[component]
        applied = _migrate_one(url, data_dir / file, [LEASES, component], now_ms)
        done += [f"table {c} {v} ({file})" for c, v in applied]
    return done


def _migrate_one(url: str, path: Path, components: list[str], now_ms: int) -> list[tuple[str, int]]:
    db = _open(url, path, pool_size=1)
    try:
        return db.run_alone(lambda tx: migrate(tx, components, now_ms))
    finally:
        db.close()


__all__ = [
    "SQLITE_FILES",
    "Database",
    "Opened",
    "StoreUnavailable",
    "Tx",
    "is_postgres_url",
    "migrate_database",
    "open_database",
]
