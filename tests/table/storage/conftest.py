"""The table storage layer against real SQLite and real PostgreSQL, every test on both.

PostgreSQL comes from FELT_TEST_POSTGRES_URL (CI sets it to postgresql://postgres@127.0.0.1:5432/postgres):
each test session creates a database of its own, each test a schema in it (the URL's search_path), and the
database is dropped at the end. Without the variable those tests are skipped with a loud message. Several
store instances opened on one location stand for several shards sharing a store.
"""

from __future__ import annotations

import os
import threading
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import pytest

from services.table.storage import Opened, open_database
from services.table.storage.leases import Leases, Shard
from services.table.storage.schema import CASINO, POKER

PG_ENV = "FELT_TEST_POSTGRES_URL"
SKIP_MESSAGE = (
    f"!!! {PG_ENV} is not set: the PostgreSQL table storage tests are SKIPPED. "
    f"Set {PG_ENV}=postgresql://postgres@127.0.0.1:5432/postgres to run them (CI does). !!!"
)
TTL_MS = 10_000


class PostgresSession:
    """One throwaway database for the whole test session; a schema per test."""

    def __init__(self, admin_url: str) -> None:
        import psycopg

        self.admin_url = admin_url
        self.dbname = "felt_test_table_" + uuid.uuid4().hex[:12]
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self.dbname}"')
        parts = urlsplit(admin_url)
        self.url = urlunsplit((parts.scheme, parts.netloc, "/" + self.dbname, "", ""))

    def new_schema(self) -> str:
        import psycopg

        schema = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        return f"{self.url}?options={quote(f'-csearch_path={schema}')}"

    def drop(self) -> None:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.dbname}" WITH (FORCE)')


@pytest.fixture(scope="session")
def postgres_session() -> Iterator[PostgresSession]:
    url = os.environ.get(PG_ENV)
    if not url:
        warnings.warn(SKIP_MESSAGE, stacklevel=1)
        pytest.skip(SKIP_MESSAGE)
    session = PostgresSession(url)
    try:
        yield session
    finally:
        session.drop()


class Clock:
    """Milliseconds that only move when a test says so; shared by every shard of a test."""

    def __init__(self, start_ms: int = 1_800_000_000_000) -> None:
        self.now = start_ms
        self._lock = threading.Lock()

    def __call__(self) -> int:
        with self._lock:
            return self.now

    def advance(self, ms: int) -> None:
        with self._lock:
            self.now += ms


@dataclass
class Location:
    """Where one test's table store lives; every `open()` is another store instance on it."""

    backend: str
    url: str
    data_dir: Path
    clock: Clock = field(default_factory=Clock)
    opened: list[Opened] = field(default_factory=list)

    def open(self, components: tuple[str, ...] = (POKER, CASINO)) -> Opened:
        db = open_database(self.url, self.data_dir / "table.sqlite3", components, pool_size=4)
        self.opened.append(db)
        return db

    def shard(self, shard_id: str, kind: str = "poker", db: Opened | None = None) -> Leases:
        """A shard: its own store instance (unless given one) and its leases of `kind`."""
        leases = Leases(
            db or self.open(),
            kind,
            Shard(shard_id, f"{shard_id}:50054", web_url=f"http://{shard_id}:8084"),
            ttl_ms=TTL_MS,
            clock=self.clock,
        )
        leases.join()
        return leases

    def close_all(self) -> None:
        for db in self.opened:
            db.close()


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Location]:
    if request.param == "postgres":
        pg: PostgresSession = request.getfixturevalue("postgres_session")
        loc = Location("postgres", pg.new_schema(), tmp_path)
    else:
        loc = Location("sqlite", f"sqlite:///{tmp_path / 'table.sqlite3'}", tmp_path)
    try:
        yield loc
    finally:
        loc.close_all()
