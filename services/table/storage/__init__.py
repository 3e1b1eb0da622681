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

from services.table.storage.database import Database, StoreUnavailable, Tx
from services.table.storage.migrations import migrate
from services.table.storage.postgres import PostgresDatabase
from services.table.storage.schema import LEASES
from services.table.storage.sqlite import SqliteDatabase

Opened = SqliteDatabase | PostgresDatabase


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


def open_database(url: str, default_sqlite: Path, components: Sequence[str], *, pool_size: int = 8) -> Opened:
    """PostgreSQL for a postgresql:// URL, SQLite at the path of a sqlite:/// URL, else SQLite at
    `default_sqlite`; migrated to the last version of the leases and of `components` before it returns."""
    db: Opened
    if is_postgres_url(url):
        db = PostgresDatabase(url, pool_size=pool_size)
    elif url.startswith("sqlite:///"):
        db = SqliteDatabase(Path(url.removeprefix("sqlite:///")))
    elif url:
        raise ValueError(f"unsupported TABLE_DATABASE_URL {url!r}: use postgresql://... or sqlite:///path")
    else:
        db = SqliteDatabase(default_sqlite)
    try:
        now_ms = time.time_ns() // 1_000_000
        db.run_alone(lambda tx: migrate(tx, [LEASES, *components], now_ms))
    except BaseException:
        db.close()
        raise
    return db


__all__ = ["Database", "Opened", "StoreUnavailable", "Tx", "is_postgres_url", "open_database"]
