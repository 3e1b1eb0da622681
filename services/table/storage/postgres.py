"""The shared database of table shards: PostgreSQL through psycopg 3 and a connection pool.

Each write is one READ COMMITTED transaction on a pooled connection; PostgreSQL's WAL group commit shares
fsyncs between concurrent commits (synchronous_commit stays on: a returned write is durable). Rows that
decide a write (a table's lease) are locked with `FOR SHARE` / `FOR UPDATE` where the write reads them
(`database.lock_clause`). A deadlock or serialization failure reruns the write from the start; a lost
connection is StoreUnavailable (the write may have committed: the caller's idempotent retry tells).
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg.adapt import Transformer
from psycopg_pool import ConnectionPool, PoolTimeout
from servicekit.postgres import (
    CONNECTION_LOST,
    ROWS_PER_STATEMENT,
    configure_session,
    literal_parts,
    placeholders,
    row_insert,
    rows_statement,
)
from servicekit.sqlstore import FENCE_SQLSTATE, FenceBroken

from services.table.storage.database import Dialect, Row, StoreUnavailable, Tx

T = TypeVar("T")
_RETRYABLE = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)
_MAX_ATTEMPTS = 20
POOL_WAIT_SECONDS = 30.0


# Values psycopg's client-side quoting turns into literals (ClientCursor.mogrify): a statement of only
# these may wait to go with the next one in one message.
_LITERAL_TYPES = (str, int, bytes, bool, float, type(None))
PENDING_BYTES = 1 << 20  # statements held back at most: past it they go at once, in one message


class _Later:
    """The result of a statement sent later than `execute` returned: with the next statement whose result
    is read, or with COMMIT. Reading it sends what waits (`PostgresTx.flush`)."""

    def __init__(self, tx: PostgresTx) -> None:
        self._tx = tx
        self._rows: list[Any] = []
        self._next = 0
        self._rowcount = -1

    def settle(self, cursor: psycopg.Cursor[Any]) -> None:
        self._rowcount = cursor.rowcount
        if cursor.description is not None:
            self._rows = cursor.fetchall()

    @property
    def rowcount(self) -> int:
        self._tx.flush()
        return self._rowcount

    def fetchone(self) -> Any:
        self._tx.flush()
        if self._next >= len(self._rows):
            return None
        self._next += 1
        return self._rows[self._next - 1]

    def fetchall(self) -> list[Any]:
        self._tx.flush()
        rows, self._next = self._rows[self._next :], len(self._rows)
        return rows


class PostgresTx:
    dialect: Dialect = "postgres"

    def __init__(self, conn: psycopg.Connection[Any], *, begin: bool = False) -> None:
        self._conn = conn
        self.begun = not begin  # `begin`: BEGIN goes in the message of the first statements
        # `begin` also holds statements back: each goes in one simple-protocol message with the next one
        # whose result is read, or with COMMIT (issue 24: a fenced write is two round trips, its lease
        # check and then the rest with COMMIT). A message is always whole: nothing is left half-sent for a
        # stopped process to hold open.
        self._later = begin
        self.holds_back = begin  # servicekit.leases sends its lease check so (`felt_fence`)
        self._pending: list[tuple[bytes, _Later]] = []
        self._pending_bytes = 0
        # psycopg's quoting of one value, as ClientCursor.mogrify does it, without mogrify's parse of the
        # whole statement per call (a tenth of a shard's CPU at 1,000 tables, issue 24).
        self._literal = Transformer.from_context(conn).as_literal

    def execute(self, sql: str, args: Sequence[Any] = ()) -> Any:
        args = tuple(args)
        if self._later and all(type(a) in _LITERAL_TYPES for a in args):
            return self._hold(self._quoted(sql, args))
        self.flush()
        return self._conn.execute(placeholders(sql), args)

    def _quoted(self, sql: str, args: tuple[Any, ...]) -> bytes:
        """`sql` (`?` placeholders) with `args` in it as literals."""
        parts = literal_parts(sql)
        if len(parts) != len(args) + 1:
            raise psycopg.ProgrammingError(f"the statement takes {len(parts) - 1} values, {len(args)} given")
        out = [parts[0]]
        for arg, part in zip(args, parts[1:], strict=True):
            out += (b"NULL" if arg is None else self._literal(arg), part)
        return b"".join(out)

    def _hold(self, statement: bytes) -> _Later:
        later = _Later(self)
        self._pending.append((statement, later))
        self._pending_bytes += len(statement)
        if self._pending_bytes > PENDING_BYTES:
            self.flush()
        return later

    def flush(self, last: bytes | None = None) -> None:
        """Send what waits, BEGIN first if not yet sent and `last` after, in one message; each held
        statement's result to its `_Later`."""
        if not self._pending and last is None and self.begun:
            return
        pending, self._pending, self._pending_bytes = self._pending, [], 0
        parts = [statement for statement, _ in pending] + ([last] if last is not None else [])
        if not self.begun:
            self.begun = True
            parts.insert(0, b"BEGIN")
            pending.insert(0, (b"BEGIN", _Later(self)))
        if not parts:
            return
        cursor = self._conn.execute(b"; ".join(parts))
        for index, (_, later) in enumerate(pending):
            if index:
                cursor.nextset()
            later.settle(cursor)

    def commit(self) -> None:
        """Whatever waits, then COMMIT, in one message (nothing when nothing was sent or held)."""
        if self.begun or self._pending:
            self.flush(b"COMMIT")

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        # One statement at a time, each whole. psycopg's own executemany pipelines them with a single Sync
        # at the end: a process stopped in between (SIGSTOP, a frozen VM) leaves its session "active",
        # waiting for the rest, so the idle-in-transaction timeout (servicekit.postgres) never ends it and
        # its row locks (a table's lease: no takeover) stay held.
        # A plain INSERT goes as one statement of many rows: a round trip per commit instead of one per
        # row (a table's events: most of the statements of a hand, bench/RESULTS.md, issue 24).
        insert = row_insert(sql)
        if insert is not None and isinstance(rows, list | tuple) and len(rows) > 1 and insert.fits(rows):
            for start in range(0, len(rows), ROWS_PER_STATEMENT):
                chunk = rows[start : start + ROWS_PER_STATEMENT]
                if self._later and all(type(a) in _LITERAL_TYPES for row in chunk for a in row):
                    values = b", ".join(self._quoted(insert.row, tuple(row)) for row in chunk)
                    self._hold(insert.head.encode() + values + insert.tail.encode())
                    continue
                self.flush()
                args = tuple(value for row in chunk for value in row)
                self._conn.execute(rows_statement(insert, len(chunk)), args)
            return
        for row in rows:
            self.execute(sql, row)

    def script(self, script: str) -> None:
        self.flush(script.encode())  # no parameters: several statements in one message


def _in_transaction(conn: psycopg.Connection[Any], work: Callable[[Tx], T]) -> T:
    """`work` in one transaction: its statements go in at most as many messages as it reads results
    (PostgresTx), the last with COMMIT; on any failure ROLLBACK (unless the connection is gone), the
    failure raised."""
    tx = PostgresTx(conn, begin=True)
    try:
        result = work(tx)
        if conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR:
            # a statement failed and `work` went on: COMMIT would roll back quietly
            raise psycopg.errors.InFailedSqlTransaction("the write's transaction failed and was rolled back")
        tx.commit()
    except BaseException:
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE and not conn.closed:
            # if the connection is broken, the pool discards it and the server rolls back
            with contextlib.suppress(psycopg.Error):
                conn.execute(b"ROLLBACK")
        raise
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
                try:
                    with self._pool.connection() as conn:
                        return _in_transaction(conn, work)
                except psycopg.Error as failed:
                    if failed.sqlstate == FENCE_SQLSTATE:  # a lease check (servicekit.leases), raised in SQL
                        raise FenceBroken(failed.diag.message_primary or "fenced out") from None
                    raise
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
