"""Wallet test fixtures: the same tests run against SQLite and PostgreSQL.

PostgreSQL tests use FELT_TEST_POSTGRES_URL (CI sets it to postgresql://postgres@127.0.0.1:5432/postgres):
each test session creates its own database, each test its own schema in it, and the database is dropped
at the end. When the variable is unset those tests are skipped with a loud message.
"""

from __future__ import annotations

import os
import uuid
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from ledger import commands as c
from servicekit.auth import Caller, Role

from services.wallet.callers import scope
from services.wallet.storage import Clock, LedgerStore, Outcome, Result, open_store, wall_clock_ms

PG_ENV = "FELT_TEST_POSTGRES_URL"
SKIP_MESSAGE = (
    f"!!! {PG_ENV} is not set: the PostgreSQL wallet tests are SKIPPED. "
    f"Set {PG_ENV}=postgresql://postgres@127.0.0.1:5432/postgres to run them (CI does). !!!"
)


def _with_database(url: str, dbname: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + dbname, "", ""))


class PostgresSession:
    """One throwaway database for the whole test session."""

    def __init__(self, admin_url: str) -> None:
        import psycopg

        self.admin_url = admin_url
        self.dbname = "felt_test_wallet_" + uuid.uuid4().hex[:12]
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self.dbname}"')
        self.url = _with_database(admin_url, self.dbname)

    def new_schema(self) -> str:
        """A fresh schema; returns a WALLET_DATABASE_URL that uses it."""
        import psycopg

        schema = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        return f"{self.url}?options=-csearch_path%3D{schema}"

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


# The callers of storage tests: request ids are scoped by caller (issue 13.1).
TABLE = scope(Caller("table", Role.SERVICE))
TOURNAMENT = scope(Caller("tournament", Role.SERVICE))


class ScopedStore:
    """A real store whose commands run as one caller (the table service unless told otherwise); every
    other method is the store's own."""

    def __init__(self, store: LedgerStore, caller: str = TABLE) -> None:
        self.store = store
        self.caller = caller

    def execute(self, command: c.Command, caller: str | None = None) -> Result:
        return self.store.execute(command, caller or self.caller)

    def execute_outcome(self, command: c.Command, caller: str | None = None) -> Outcome:
        return self.store.execute_outcome(command, caller or self.caller)

    def as_caller(self, caller: str) -> ScopedStore:
        return ScopedStore(self.store, caller)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


@dataclass
class LedgerLocation:
    """Where one test's ledger lives; `open()` may be called again to simulate a restart."""

    backend: str
    database_url: str
    data_dir: Path
    opened: list[LedgerStore] = field(default_factory=list)

    def open(self, clock: Clock = wall_clock_ms) -> ScopedStore:
        store = open_store(self.database_url, str(self.data_dir), clock=clock)
        self.opened.append(store)
        return ScopedStore(store)

    def close_all(self) -> None:
        for store in self.opened:
            store.close()


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LedgerLocation]:
    if request.param == "postgres":
        pg: PostgresSession = request.getfixturevalue("postgres_session")
        loc = LedgerLocation("postgres", pg.new_schema(), tmp_path)
    else:
        loc = LedgerLocation("sqlite", "", tmp_path)
    try:
        yield loc
    finally:
        loc.close_all()


@pytest.fixture
def store(location: LedgerLocation) -> ScopedStore:
    return location.open()


class FakeClock:
    """Epoch milliseconds that only move when told (hold expiry tests)."""

    def __init__(self, start_ms: int = 1_800_000_000_000) -> None:
        self.now = start_ms

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


@pytest.fixture
def fake_clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def new_id() -> Callable[[str], str]:
    return lambda prefix: f"{prefix}-{uuid.uuid4().hex[:16]}"
