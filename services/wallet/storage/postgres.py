"""The production store: PostgreSQL through psycopg 3 and a connection pool.

Each command is one READ COMMITTED transaction that locks the accounts it touches with
`SELECT ... FOR UPDATE` in id order before reading their balances: concurrent transfers on the same
accounts queue on those row locks and give the serial result. PostgreSQL's own WAL group commit
shares fsyncs between concurrent commits (synchronous_commit stays on: an answered transfer is
durable). A deadlock, serialization failure or a lost race on a unique key is retried from the start;
the request id claim makes the retry see the first outcome."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import psycopg
from ledger import commands as c
from ledger.invariants import LedgerSummary
from ledger.model import Account, AccountKind, Hold, Transfer
from ledger.validation import validate
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool
from servicekit.postgres import CONNECTION_LOST, configure_session
from servicekit.schema import MIGRATE_AT_START, SchemaPolicy, await_schema, describe

from services.wallet.storage import migrations, pages
from services.wallet.storage.base import Clock, StoreUnavailable, wall_clock_ms
from services.wallet.storage.engine import Engine, Outcome, Result

_RETRYABLE = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected, pg_errors.UniqueViolation)
_MAX_ATTEMPTS = 30


class PostgresStore:
    kind = "postgres"

    def __init__(
        self,
        conninfo: str,
        *,
        clock: Clock = wall_clock_ms,
        min_size: int = 2,
        max_size: int = 16,
        schema: SchemaPolicy = MIGRATE_AT_START,
    ) -> None:
        self._clock = clock
        self._engine = Engine(postgres=True)
        self._pool = ConnectionPool(
            conninfo,
            min_size=min_size,
            max_size=max_size,
            kwargs={"autocommit": True},
            configure=configure_session,  # a stopped process never keeps its accounts locked
            open=True,
            name="wallet",
        )
        self._pool.wait(timeout=30.0)
        if schema.external:
            await_schema("wallet", describe(conninfo), self._missing, schema)
        else:
            with self._pool.connection() as conn:
                migrate(conn, self._clock())
        with self._pool.connection() as conn:
            self._engine.check_legacy(conn)

    def _missing(self) -> list[str]:
        with self._pool.connection() as conn:
            return migrations.missing(applied(conn), migrations.POSTGRES)

    def _write(self, work: Callable[[psycopg.Connection[Any], int], Any]) -> Any:
        for attempt in range(_MAX_ATTEMPTS):
            try:
                with self._pool.connection() as conn, conn.transaction():
                    return work(conn, self._clock())
            except _RETRYABLE:
                if attempt == _MAX_ATTEMPTS - 1:
                    raise
                time.sleep(random.uniform(0, 0.002 * (attempt + 1)))
            except CONNECTION_LOST as lost:
                # Connection lost (perhaps after COMMIT was sent): only the caller's retry with the same
                # request id can tell, and it is safe.
                raise StoreUnavailable(f"PostgreSQL unavailable: {type(lost).__name__}") from lost
        raise AssertionError("unreachable")

    def execute(self, command: c.Command, caller: str) -> Result:
        return self.execute_outcome(command, caller).result

    def execute_outcome(self, command: c.Command, caller: str) -> Outcome:
        validate(command)
        outcome: Outcome = self._write(lambda db, now: self._engine.apply(db, command, caller, now))
        return outcome

    def expire_holds(self) -> int:
        expired: int = self._write(lambda db, now: self._engine.expire_due(db, now))
        return expired

    def _read(self, fn: Callable[[psycopg.Connection[Any]], Any], *, snapshot: bool = False) -> Any:
        try:
            with self._pool.connection() as conn:
                if not snapshot:
                    return fn(conn)
                with conn.transaction():
                    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                    return fn(conn)
        except CONNECTION_LOST as lost:
            raise StoreUnavailable(f"PostgreSQL unavailable: {type(lost).__name__}") from lost

    def get_account(self, account_id: str) -> Account | None:
        account: Account | None = self._read(lambda db: self._engine.get_account(db, account_id))
        return account

    def list_accounts(
        self, *, kind: AccountKind | None, owner: str | None, page_size: int, page_token: str
    ) -> tuple[list[Account], str]:
        page: tuple[list[Account], str] = self._read(
            lambda db: pages.list_accounts(self._engine, db, kind, owner, page_size, page_token)
        )
        return page

    def get_transfer(self, transfer_id: str) -> Transfer | None:
        transfer: Transfer | None = self._read(
            lambda db: self._engine.get_transfer(db, transfer_id), snapshot=True
        )
        return transfer

    def list_transfers(
        self, account_id: str, *, page_size: int, page_token: str
    ) -> tuple[list[Transfer], str]:
        page: tuple[list[Transfer], str] = self._read(
            lambda db: pages.list_transfers(self._engine, db, account_id, page_size, page_token),
            snapshot=True,
        )
        return page

    def get_hold(self, hold_id: str) -> Hold | None:
        hold: Hold | None = self._read(lambda db: self._engine.get_hold(db, hold_id))
        return hold

    def hold_by_request(self, caller: str, request_id: str) -> Hold | None:
        hold: Hold | None = self._read(
            lambda db: self._engine.hold_by_request(db, caller, request_id), snapshot=True
        )
        return hold

    def transfer_by_request(self, caller: str, request_id: str) -> Transfer | None:
        transfer: Transfer | None = self._read(
            lambda db: self._engine.transfer_by_request(db, caller, request_id), snapshot=True
        )
        return transfer

    def summary(self) -> LedgerSummary:
        summary: LedgerSummary = self._read(self._engine.summary, snapshot=True)
        return summary

    def close(self) -> None:
        self._pool.close()


def applied(conn: psycopg.Connection[Any]) -> set[int]:
    """The versions recorded in the database (none before the first migration)."""
    if conn.execute("SELECT to_regclass(%s)", (migrations.VERSION_TABLE,)).fetchone() in (None, (None,)):
        return set()
    return {r[0] for r in conn.execute(f"SELECT version FROM {migrations.VERSION_TABLE}").fetchall()}


def migrate(conn: psycopg.Connection[Any], now_ms: int) -> list[int]:
    """Apply what is pending in one transaction, under the wallet's advisory lock: processes that start
    together (and `felt migrate`) take turns, and each finds what the one before it applied."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (migrations.ADVISORY_LOCK,))
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {migrations.VERSION_TABLE}"
            " (version INTEGER PRIMARY KEY, applied_at_ms BIGINT NOT NULL)"
        )
        return migrations.apply_all(
            lambda sql: conn.execute(sql.encode()), applied(conn), migrations.POSTGRES, now_ms
        )


def migrate_database(conninfo: str, now_ms: int) -> list[int]:
    """`felt migrate` for a PostgreSQL ledger: one connection, the same lock as the wallet's own."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        return migrate(conn, now_ms)
