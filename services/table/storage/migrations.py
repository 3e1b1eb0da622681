"""Applies the schema's migrations (services/table/storage/schema.py) at start, in one transaction, so a
database is always at a released version. Several shards may start at once against one database: SQLite's
write lock (BEGIN IMMEDIATE) or a PostgreSQL advisory lock makes them take turns, and each finds what the
others applied in `table_schema_migrations`."""

from __future__ import annotations

from collections.abc import Sequence

from services.table.storage.database import ScriptTx
from services.table.storage.schema import MIGRATIONS

# Any constant: serialises the migrations of shards starting together (the wallet's is another number).
_ADVISORY_LOCK = 7_426_015
VERSION_TABLE = "table_schema_migrations"


def applied(tx: ScriptTx) -> set[tuple[str, int]]:
    rows = tx.execute(f"SELECT component, version FROM {VERSION_TABLE}").fetchall()
    return {(str(r[0]), int(r[1])) for r in rows}


def missing(tx: ScriptTx, components: Sequence[str]) -> list[str]:
    """The migrations of `components` this release needs that the database lacks (FELT_MIGRATE=external)."""
    if tx.dialect == "postgres":
        present = tx.execute(f"SELECT to_regclass('{VERSION_TABLE}')").fetchone()[0] is not None
    else:
        found = tx.execute(f"SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '{VERSION_TABLE}'")
        present = found.fetchone() is not None
    done = applied(tx) if present else set()
    return [
        f"table {component} {migration.version}"
        for component in components
        for migration in MIGRATIONS[component]
        if (component, migration.version) not in done
    ]


def migrate(tx: ScriptTx, components: Sequence[str], now_ms: int) -> list[tuple[str, int]]:
    """Brings `components` up to date, in order and each to its last version before the next (a later
    component may rely on an earlier one's tables); returns the (component, version) pairs it applied."""
    if tx.dialect == "postgres":
        tx.execute("SELECT pg_advisory_xact_lock(?)", (_ADVISORY_LOCK,))
    tx.execute(
        f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (component TEXT NOT NULL, version INTEGER NOT NULL,"
        " applied_ms BIGINT NOT NULL, PRIMARY KEY (component, version))"
    )
    done_before = applied(tx)
    done = []
    for component in components:
        for migration in MIGRATIONS[component]:
            if (component, migration.version) in done_before:
                continue
            step = migration.sqlite if tx.dialect == "sqlite" else migration.postgres
            if callable(step):
                step(tx)
            elif step.strip():
                tx.script(step)
            tx.execute(
                f"INSERT INTO {VERSION_TABLE} (component, version, applied_ms) VALUES (?, ?, ?)",
                (component, migration.version, now_ms),
            )
            done.append((component, migration.version))
    return done


def latest(component: str) -> int:
    return max(m.version for m in MIGRATIONS[component])
