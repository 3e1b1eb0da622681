"""The shared database of table shards: PostgreSQL through psycopg 3 and a connection pool.

Each write is one READ COMMITTED transaction on a pooled connection; PostgreSQL's WAL group commit shares
fsyncs between concurrent commits (synchronous_commit stays on: a returned write is durable). Rows that
decide a write (a table's lease) are locked with `FOR SHARE` / `FOR UPDATE` where the write reads them
(`database.lock_clause`). A deadlock or serialization failure reruns the write from the start; a lost
connection is StoreUnavailable (the write may have committed: the caller's idempotent retry tells).
"""

from __future__ import annotations

import functools
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool, PoolTimeout
from servicekit.postgres import CONNECTION_LOST, configure_session

from services.table.storage.database import Dialect, Row, StoreUnavailable, Tx

T = TypeVar("T")
_RETRYABLE = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)
_MAX_ATTEMPTS = 20
POOL_WAIT_SECONDS = 30.0


@functools.lru_cache(maxsize=512)
def placeholders(sql: str) -> str:
    """`?` outside string literals -> `%s`, and every `%` doubled, for psycopg."""
    out, quoted = [], False
    for char in sql:
        if char == "'":
            quoted = not quoted  # a doubled '' inside a literal toggles twice: still inside
        out.append("%s" if char == "?" and not quoted else "%%" if char == "%" else char)
    return "".join(out)


# An INSERT of one VALUES tuple that may become one statement of many tuples (its ON CONFLICT clause
# kept): a plain one, DO NOTHING, or DO UPDATE when no two rows share the conflict's key (PostgreSQL refuses
# a statement that would update a row twice).
_ROW_INSERT = re.compile(
    r"^(?P<head>INSERT INTO [^()]+\((?P<columns>[^()]*)\) VALUES )(?P<row>\((?:\?, )*\?\))"
    r"(?P<tail>(?: ON CONFLICT(?: \((?P<key>[^()]*)\))? DO (?:NOTHING|UPDATE SET [^()?]*))?)$"
)
ROWS_PER_STATEMENT = 500  # PostgreSQL takes up to 65,535 parameters in a statement


@dataclass(frozen=True)
class _RowInsert:
    head: str
    row: str
    tail: str
    key: tuple[int, ...] | None  # DO UPDATE: the positions of the conflict's key in a row

    def fits(self, rows: Sequence[Sequence[Any]]) -> bool:
        """Whether `rows` may go in one statement."""
        if self.key is None:
            return True
        keys = {tuple(row[i] for i in self.key) for row in rows}
        return len(keys) == len(rows)


@functools.lru_cache(maxsize=256)
def _row_insert(sql: str) -> _RowInsert | None:
    match = _ROW_INSERT.match(sql)
    if match is None:
        return None
    key = None
    if "DO UPDATE" in match["tail"]:
        if match["key"] is None:
            return None
        columns = [c.strip() for c in match["columns"].split(",")]
        key = tuple(columns.index(c.strip()) for c in match["key"].split(","))
    return _RowInsert(match["head"], match["row"], match["tail"], key)


@functools.lru_cache(maxsize=512)
def _rows_statement(insert: _RowInsert, count: int) -> str:
    return placeholders(insert.head + ", ".join([insert.row] * count) + insert.tail)


class PostgresTx:
    dialect: Dialect = "postgres"

    def __init__(self, conn: psycopg.Connection[Any], *, begin: bool = False) -> None:
        self._conn = conn
        self.begun = not begin  # `begin`: BEGIN goes with the first statement (`_begin_with`)

    def execute(self, sql: str, args: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        if not self.begun:
            return self._begin_with(sql, tuple(args))
        return self._conn.execute(placeholders(sql), tuple(args))

    def _begin_with(self, sql: str, args: tuple[Any, ...]) -> psycopg.Cursor[Any]:
        """BEGIN and the transaction's first statement in one round trip (one simple-protocol message:
        nothing is left half-sent for a stopped process to hold open), its values bound by psycopg's
        client-side quoting; a fenced write's first statement is the lease check (issue 24: a round trip
        fewer per commit). Values other than text and integers go the usual way, after a BEGIN alone."""
        self.begun = True
        if not all(type(a) in (str, int) for a in args):
            self._conn.execute(b"BEGIN")
            return self._conn.execute(placeholders(sql), args)
        statement = psycopg.ClientCursor(self._conn).mogrify(placeholders(sql), args)
        cursor = self._conn.execute(("BEGIN; " + statement).encode())
        cursor.nextset()  # past BEGIN's result, to the statement's
        return cursor

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        # One statement at a time, each answered before the next goes out. psycopg's own executemany
        # pipelines them with a single Sync at the end: a process stopped in between (SIGSTOP, a frozen VM)
        # leaves its session "active", waiting for the rest, so the idle-in-transaction timeout
        # (servicekit.postgres) never ends it and its row locks (a table's lease: no takeover) stay held.
        # A plain INSERT goes as one statement of many rows: a round trip per commit instead of one per
        # row (a table's events: most of the statements of a hand, bench/RESULTS.md, issue 24).
        if not self.begun:
            self.begun = True
            self._conn.execute(b"BEGIN")
        insert = _row_insert(sql)
        if insert is not None and isinstance(rows, list | tuple) and len(rows) > 1 and insert.fits(rows):
            for start in range(0, len(rows), ROWS_PER_STATEMENT):
                chunk = rows[start : start + ROWS_PER_STATEMENT]
                args = tuple(value for row in chunk for value in row)
                self._conn.execute(_rows_statement(insert, len(chunk)), args)
            return
        query = placeholders(sql)
        execute = self._conn.execute
        for row in rows:
            execute(query, tuple(row))

    def script(self, script: str) -> None:
        if not self.begun:
            self.begun = True
            script = "BEGIN;\n" + script
        self._conn.execute(script.encode())  # no parameters: several statements in one call


def _in_transaction(conn: psycopg.Connection[Any], work: Callable[[Tx], T]) -> T:
    """`work` in one transaction, its BEGIN sent with its first statement (PostgresTx), then COMMIT; on
    any failure ROLLBACK (unless the connection is gone), the failure raised."""
    tx = PostgresTx(conn, begin=True)
    try:
        result = work(tx)
    except BaseException:
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE and not conn.closed:
            try:
                conn.execute(b"ROLLBACK")
            except psycopg.Error:
                pass  # the connection is broken: the pool discards it, the server rolls back
        raise
    if conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR:
        conn.execute(b"ROLLBACK")  # a statement failed and `work` went on: COMMIT would roll back quietly
        raise psycopg.errors.InFailedSqlTransaction("the write's transaction failed and was rolled back")
    if tx.begun:
        conn.execute(b"COMMIT")
    return result


class PostgresDatabase:
    dialect: Dialect = "postgres"

    def __init__(self, conninfo: str, *, pool_size: int = 8, name: str = "table") -> None:
        self._pool = ConnectionPool(
            conninfo,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True},
            configure=configure_session,  # a stopped process never keeps its locks
            open=True,
            name=name,
        )
        try:
            self._pool.wait(timeout=POOL_WAIT_SECONDS)
        except PoolTimeout as lost:
            self._pool.close()
            raise StoreUnavailable(f"PostgreSQL unavailable: {lost}") from lost

    def write(self, work: Callable[[Tx], T]) -> T:
        for attempt in range(_MAX_ATTEMPTS):
            try:
                with self._pool.connection() as conn:
                    return _in_transaction(conn, work)
            except _RETRYABLE:
                if attempt == _MAX_ATTEMPTS - 1:
                    raise
                time.sleep(random.uniform(0, 0.002 * (attempt + 1)))
            except CONNECTION_LOST as lost:
                raise StoreUnavailable(f"PostgreSQL unavailable: {type(lost).__name__}: {lost}") from lost
        raise AssertionError("unreachable")

    def run_alone(self, work: Callable[[PostgresTx], T]) -> T:
        """One transaction (migrations); they serialise on an advisory lock of their own."""
        with self._pool.connection() as conn, conn.transaction():
            return work(PostgresTx(conn))

    def read(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        try:
            with self._pool.connection() as conn:
                return [tuple(r) for r in conn.execute(placeholders(sql), tuple(args)).fetchall()]
        except CONNECTION_LOST as lost:
            raise StoreUnavailable(f"PostgreSQL unavailable: {type(lost).__name__}: {lost}") from lost

    def close(self) -> None:
        self._pool.close()
