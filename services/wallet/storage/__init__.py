"""Wallet storage: one interface (`LedgerStore`), two backends (SQLite embedded, PostgreSQL)."""

from __future__ import annotations

import os

from services.wallet.storage.base import Clock, LedgerStore, StoreUnavailable, wall_clock_ms
from services.wallet.storage.engine import BatchResult, CaptureResult, Outcome, Result

SQLITE_FILE = "wallet.sqlite3"


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


def open_store(
    database_url: str, data_dir: str, *, clock: Clock = wall_clock_ms, pg_pool_size: int = 16
) -> LedgerStore:
    """PostgreSQL when `database_url` is a postgresql:// URL, else SQLite in the data directory
    (or at the path of a sqlite:/// URL)."""
    if is_postgres_url(database_url):
        from services.wallet.storage.postgres import PostgresStore

        return PostgresStore(database_url, clock=clock, max_size=pg_pool_size)
    from services.wallet.storage.sqlite import SqliteStore

    if database_url.startswith("sqlite:///"):
        return SqliteStore(database_url.removeprefix("sqlite:///"), clock=clock)
    if database_url:
        raise ValueError(f"unsupported WALLET_DATABASE_URL {database_url!r}: use postgresql:// or sqlite:///")
    return SqliteStore(os.path.join(data_dir, SQLITE_FILE), clock=clock)


__all__ = [
    "BatchResult",
    "CaptureResult",
    "Clock",
    "LedgerStore",
    "Outcome",
    "Result",
    "StoreUnavailable",
    "open_store",
    "wall_clock_ms",
]
