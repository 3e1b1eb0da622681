"""Migrations run once (issue 22), not raced by every replica: `felt migrate` processes started together,
and services opening their stores together, apply each migration exactly once, on SQLite and on
PostgreSQL; a service with FELT_MIGRATE=external changes no schema and waits (bounded, saying so) for it.

PostgreSQL from FELT_TEST_POSTGRES_URL (CI sets it): a throwaway database per test session, a schema per
test (the URLs' search_path).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import pytest
from servicekit.schema import SchemaNotReady, SchemaPolicy
from servicekit.testing import config_for_tests, running

from services.table.storage import SQLITE_FILES, migrate_database, open_database
from services.table.storage.schema import MIGRATIONS as TABLE_MIGRATIONS
from services.table.storage.schema import POKER
from services.tournament import store as tournament_store
from services.wallet import server as wallet_server
from services.wallet.storage import migrations as wallet_migrations
from services.wallet.storage import open_store

ROOT = Path(__file__).resolve().parents[2]
PG_ENV = "FELT_TEST_POSTGRES_URL"
PROCESSES = 4

# Every migration of this release, as `felt migrate` names them.
WALLET = [f"wallet {v}" for v, _ in wallet_migrations.SQLITE]
TOURNAMENT = [f"tournament {v}" for v, _ in tournament_store.MIGRATIONS]


def _table(components: list[str], suffix: str = "") -> list[str]:
    return [f"table {c} {m.version}{suffix}" for c in components for m in TABLE_MIGRATIONS[c]]


def _felt_migrate(env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "felt", "migrate"],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _applied_by(outputs: list[str]) -> Counter[str]:
    """How many processes said they applied each migration."""
    counts: Counter[str] = Counter()
    for out in outputs:
        for line in out.splitlines():
            _, _, rest = line.partition(": applied ")
            if rest:
                names = rest.rsplit(" (", 1)[0]  # drop the "(0.1 s)"
                counts.update(_split(names))
    return counts


def _split(names: str) -> list[str]:
    """`table leases 1 (tables.sqlite3), table poker 1 (tables.sqlite3)` -> the names."""
    return [name.strip() for name in names.split(", ") if name.strip()]


def _race(env: dict[str, str]) -> list[str]:
    procs = [_felt_migrate(env) for _ in range(PROCESSES)]
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        outputs.append(out)
    return outputs


def test_felt_migrate_processes_racing_on_sqlite_apply_each_migration_once(tmp_path: Path) -> None:
    outputs = _race({"FELT_DATA_DIR": str(tmp_path)})
    expected = (
        WALLET
        + _table(["leases", "poker"], f" ({SQLITE_FILES['poker']})")
        + _table(["leases", "casino"], f" ({SQLITE_FILES['casino']})")
        + TOURNAMENT
    )
    assert _applied_by(outputs) == Counter(expected)  # every one applied, by one process only
    for file, table in [
        ("wallet.sqlite3", "schema_migrations"),
        ("tables.sqlite3", "table_schema_migrations"),
        ("tournaments.sqlite3", "tn_schema_migrations"),
    ]:
        with sqlite3.connect(tmp_path / file) as db:
            assert db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] > 0
    again = _race({"FELT_DATA_DIR": str(tmp_path)})
    assert _applied_by(again) == Counter()
    assert all("wallet: up to date" in out and "tournament: up to date" in out for out in again)


# --- PostgreSQL ---------------------------------------------------------------------------------------


class PostgresSession:
    def __init__(self, admin_url: str) -> None:
        import psycopg

        self.admin_url = admin_url
        self.dbname = "felt_test_migrate_" + uuid.uuid4().hex[:12]
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self.dbname}"')
        parts = urlsplit(admin_url)
        self.url = urlunsplit((parts.scheme, parts.netloc, "/" + self.dbname, "", ""))

    def new_schema(self) -> str:
        import psycopg

        schema = "m_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        return f"{self.url}?options={quote(f'-csearch_path={schema}')}"

    def rows(self, url: str, sql: str) -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            return list(conn.execute(sql).fetchall())

    def drop(self) -> None:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.dbname}" WITH (FORCE)')


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresSession]:
    url = os.environ.get(PG_ENV)
    if not url:
        message = f"!!! {PG_ENV} is not set: the PostgreSQL migration tests are SKIPPED (CI sets it) !!!"
        warnings.warn(message, stacklevel=1)
        pytest.skip(message)
    session = PostgresSession(url)
    try:
        yield session
    finally:
        session.drop()


def test_felt_migrate_processes_racing_on_postgres_apply_each_migration_once(
    postgres: PostgresSession,
) -> None:
    url = postgres.new_schema()  # the three services in one database, as the deploy has them
    env = {"WALLET_DATABASE_URL": url, "TABLE_DATABASE_URL": url, "TOURNAMENT_DATABASE_URL": url}
    outputs = _race(env)
    expected = WALLET + _table(["leases", "poker", "casino"]) + TOURNAMENT
    assert _applied_by(outputs) == Counter(expected)
    assert len(postgres.rows(url, "SELECT version FROM schema_migrations")) == len(WALLET)
    assert len(postgres.rows(url, "SELECT version FROM tn_schema_migrations")) == len(TOURNAMENT)
    table_rows = postgres.rows(url, "SELECT component, version FROM table_schema_migrations")
    assert len(table_rows) == len(set(table_rows)) == len(_table(["leases", "poker", "casino"]))


def _together(work: Callable[[], Any], count: int) -> list[Any]:
    """`work` on `count` threads released at once; their results (a raised error fails the test)."""
    start = threading.Barrier(count)
    results: list[Any] = [None] * count
    failures: list[BaseException] = []

    def run(i: int) -> None:
        start.wait()
        try:
            results[i] = work()
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not failures, failures
    return results


@pytest.mark.parametrize("dialect", ["sqlite", "postgres"])
def test_replicas_opening_their_stores_together_migrate_once(
    dialect: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The embedded default: every replica migrates as it opens its store, under the lock. A migration
    applied twice would fail (its CREATE TABLE, or its version row's key): none fails, none repeats."""
    if dialect == "postgres":
        postgres: PostgresSession = request.getfixturevalue("postgres")
        url = postgres.new_schema()
        where = {"wallet": url, "table": url, "tournament": url}
    else:  # one SQLite file per service, shared by its replicas (a machine's worker processes)
        where = {name: f"sqlite:///{tmp_path / name}.sqlite3" for name in ("wallet", "table", "tournament")}
    opens: list[Callable[[], Any]] = [
        lambda: open_store(where["wallet"], str(tmp_path), pg_pool_size=2).close(),
        lambda: open_database(where["table"], Path(), [POKER], pool_size=1).close(),
        lambda: open_database(where["table"], Path(), ["casino"], pool_size=1).close(),
        lambda: tournament_store.TournamentStore(Path(), where["tournament"], pool_size=1).close(),
    ]
    turn = iter(range(100))
    lock = threading.Lock()

    def open_one() -> None:
        with lock:
            kind = next(turn) % len(opens)
        opens[kind]()

    _together(open_one, 3 * len(opens))  # three replicas of each store, all at once
    assert migrate_database(where["table"], Path()) == []  # the Job after them: nothing left to do
    assert (
        wallet_server.migrate_schema(config_for_tests("wallet", tmp_path, database_url=where["wallet"])) == []
    )
    rows = _rows(dialect, where)
    assert sorted(rows["wallet"]) == sorted(WALLET)
    assert sorted(rows["tournament"]) == sorted(TOURNAMENT)
    assert sorted(rows["table"]) == sorted(_table(["leases", "poker", "casino"]))


def _rows(dialect: str, where: dict[str, str]) -> dict[str, list[str]]:
    """The version tables' rows, named as `felt migrate` names them."""
    queries = {
        "wallet": "SELECT 'wallet ' || version FROM schema_migrations",
        "table": "SELECT 'table ' || component || ' ' || version FROM table_schema_migrations",
        "tournament": "SELECT 'tournament ' || version FROM tn_schema_migrations",
    }
    found = {}
    for service, sql in queries.items():
        if dialect == "postgres":
            import psycopg

            with psycopg.connect(where[service], autocommit=True) as conn:
                found[service] = [str(r[0]) for r in conn.execute(sql).fetchall()]
        else:
            with sqlite3.connect(where[service].removeprefix("sqlite:///")) as db:
                found[service] = [str(r[0]) for r in db.execute(sql).fetchall()]
    return found


def test_a_service_in_external_mode_waits_for_felt_migrate_then_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = SchemaPolicy(external=True, wait_seconds=30, poll_seconds=0.05)
    config = config_for_tests("wallet", tmp_path, schema=policy)
    started = threading.Event()
    errors: list[BaseException] = []

    def start() -> None:
        try:
            with running(wallet_server.service_spec, config) as svc:
                started.set()
                assert svc.service.spec.ready()
        except BaseException as exc:
            errors.append(exc)
            started.set()

    thread = threading.Thread(target=start)
    thread.start()
    deadline = time.monotonic() + 10
    while '"schema_waiting"' not in (out := capsys.readouterr().out) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert '"wallet 1"' in out and "felt migrate" in out  # what it lacks, and what to run
    assert not started.is_set() and not _has_ledger(tmp_path)  # it changed nothing while it waited
    assert wallet_server.migrate_schema(config) == WALLET  # the Job runs
    assert started.wait(30)
    thread.join(30)
    assert errors == []
    assert '"schema_ready"' in capsys.readouterr().out


def _has_ledger(data_dir: Path) -> bool:
    with sqlite3.connect(data_dir / "wallet.sqlite3") as db:
        return bool(db.execute("SELECT 1 FROM sqlite_master WHERE name = 'accounts'").fetchone())


def test_external_mode_gives_up_in_time_and_says_what_to_run(postgres: PostgresSession) -> None:
    url = postgres.new_schema()
    policy = SchemaPolicy(external=True, wait_seconds=0.3, poll_seconds=0.05)
    with pytest.raises(SchemaNotReady, match=r"table leases 1.*felt migrate"):
        open_database(url, Path("/nonexistent"), [POKER], schema=policy)
    with pytest.raises(SchemaNotReady, match=r"wallet 1, wallet 2.*felt migrate"):
        open_store(url, "/nonexistent", pg_pool_size=2, schema=policy)
    assert postgres.rows(url, "SELECT to_regclass('schema_migrations')") == [(None,)]  # nothing changed


def test_a_tournament_store_from_before_versions_is_at_version_1(tmp_path: Path) -> None:
    path = tmp_path / tournament_store.SQLITE_FILE
    with sqlite3.connect(path) as db:  # the store as the service created it before it kept versions
        for statement in tournament_store.SCHEMA:
            db.execute(statement.replace("BYTEA", "BLOB"))
        db.execute("INSERT INTO tn_tournaments VALUES ('t1', 0, 'SNG', 'RUNNING', '{}')")
    assert tournament_store.migrate_database(path) == TOURNAMENT
    store = tournament_store.TournamentStore(path, schema=SchemaPolicy(external=True, wait_seconds=1))
    store.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT tournament_id FROM tn_tournaments").fetchall() == [("t1",)]
