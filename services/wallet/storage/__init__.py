"""Wallet storage: one interface (`LedgerStore`), two backends (SQLite embedded, PostgreSQL)."""

from __future__ import annotations

import os

from servicekit.schema import MIGRATE_AT_START, SchemaPolicy

from services.wallet.storage.base import Clock, LedgerStore, StoreUnavailable, wall_clock_ms
from services.wallet.storage.engine import BatchResult, CaptureResult, Outcome, Result

SQLITE_FILE = "wallet.sqlite3"


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


def open_store(
    database_url: str,
    data_dir: str,
    *,
    clock: Clock = wall_clock_ms,
    pg_pool_size: int = 16,
    schema: SchemaPolicy = MIGRATE_AT_START,
) -> LedgerStore:
    """PostgreSQL when `database_url` is a postgresql:// URL, else SQLite in the data directory
    (or at the path of a sqlite:/// URL). `schema`: migrate it now, or wait for `felt migrate`."""
    if is_postgres_url(database_url):
        from services.wallet.storage.postgres import PostgresStore

        return PostgresStore(database_url, clock=clock, max_size=pg_pool_size, schema=schema)
    from services.wallet.storage.sqlite import SqliteStore

    return SqliteStore(sqlite_path(database_url, data_dir), clock=clock, schema=schema)


def sqlite_path(database_url: str, data_dir: str) -> str:
    if database_url.startswith("sqlite:///"):
        return database_url.removeprefix("sqlite:///")
    if database_url:
        raise ValueError(f"unsupported WALLET_DATABASE_URL {database_url!r}: use postgresql:// or sqlite:///")
    return os.path.join(data_dir, SQLITE_FILE)


def migrate_database(database_url: str, data_dir: str, now_ms: int | None = None) -> list[str]:
    """`felt migrate`: bring the ledger to this release's schema; the migrations it applied."""
    now = wall_clock_ms() if now_ms is None else now_ms
    if is_postgres_url(database_url):
        from services.wallet.storage import postgres

        return [f"wallet {v}" for v in postgres.migrate_database(database_url, now)]
    from services.wallet.storage import sqlite

    return [f"wallet {v}" for v in sqlite.migrate_database(sqlite_path(database_url, data_dir), now)]


__all__ = [
    "BatchResult",
    "CaptureResult",
    "Clock",
    "LedgerStore",
    "Outcome",
    "Result",
    "StoreUnavailable",
    "migrate_database",
    "open_store",
    "wall_clock_ms",
]
