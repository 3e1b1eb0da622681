"""What every Felt store on PostgreSQL shares: the session settings of its pooled connections (psycopg_pool
`configure`), and its statements, written with `?` placeholders, made whole statements for psycopg.

A process that stops in the middle of a transaction (SIGSTOP, a frozen VM, a debugger) keeps its row locks
for as long as its connection lives: a table's lease that no other shard can then take over, a wallet
account no other transfer can then touch. The server ends such a session after IDLE_IN_TRANSACTION_MS
(every transaction of the stores takes milliseconds), the locks go with it, and the stopped process, when it
resumes, finds its connection gone: nothing of its transaction commits. The server arms this timeout only
between statements (never inside a pipeline), so the stores send one statement at a time.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import PoolTimeout

from servicekit import tracing

IDLE_IN_TRANSACTION_MS = 5_000
# The connection is gone: the server ended it (a process that stopped mid-transaction, resumed), or it broke.
# The stores answer these StoreUnavailable: whether the transaction committed, only a retry can tell.
CONNECTION_LOST = (psycopg.OperationalError, pg_errors.IdleInTransactionSessionTimeout, PoolTimeout)


def configure_session(conn: Any) -> None:
    """For an autocommit connection (`kwargs={"autocommit": True}`): the SET opens no transaction."""
    conn.execute(f"SET idle_in_transaction_session_timeout = {IDLE_IN_TRANSACTION_MS}")
    tracing.trace_connection(conn)  # a span per statement, when traces are configured


# Statements with `?` placeholders (servicekit.sqlstore), for psycopg --------------------------------------


@functools.lru_cache(maxsize=512)
def literal_parts(sql: str) -> tuple[bytes, ...]:
    """`sql` cut at its `?` placeholders outside string literals: the text around the values of a
    statement (quoted here by `PostgresTx._quoted`, or given to psycopg by `placeholders`)."""
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    for char in sql:
        if char == "'":
            quoted = not quoted  # a doubled '' inside a literal toggles twice: still inside
        if char == "?" and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return tuple(part.encode() for part in parts)


@functools.lru_cache(maxsize=512)
def placeholders(sql: str) -> str:
    """`?` outside string literals -> `%s`, and every `%` doubled, for psycopg."""
    return "%s".join(part.decode().replace("%", "%%") for part in literal_parts(sql))


# An INSERT of one VALUES tuple that may become one statement of many tuples (its ON CONFLICT clause
# kept): a plain one, DO NOTHING, or DO UPDATE when no two rows share the conflict's key (PostgreSQL refuses
# a statement that would update a row twice).
ROW_INSERT = re.compile(
    r"^(?P<head>INSERT INTO [^()]+\((?P<columns>[^()]*)\) VALUES )(?P<row>\((?:\?, )*\?\))"
    r"(?P<tail>(?: ON CONFLICT(?: \((?P<key>[^()]*)\))? DO (?:NOTHING|UPDATE SET [^()?]*))?)$"
)
ROWS_PER_STATEMENT = 500  # PostgreSQL takes up to 65,535 parameters in a statement


@dataclass(frozen=True)
class RowInsert:
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
def row_insert(sql: str) -> RowInsert | None:
    match = ROW_INSERT.match(sql)
    if match is None:
        return None
    key = None
    if "DO UPDATE" in match["tail"]:
        if match["key"] is None:
            return None
        columns = [c.strip() for c in match["columns"].split(",")]
        key = tuple(columns.index(c.strip()) for c in match["key"].split(","))
    return RowInsert(match["head"], match["row"], match["tail"], key)


@functools.lru_cache(maxsize=512)
def rows_statement(insert: RowInsert, count: int) -> str:
    return placeholders(insert.head + ", ".join([insert.row] * count) + insert.tail)


def whole_statements(sql: str, rows: Sequence[Sequence[Any]]) -> Iterator[tuple[str, tuple[Any, ...]]]:
    """`sql` run for each of `rows`, as whole statements for psycopg: a row INSERT as statements of up to
    ROWS_PER_STATEMENT rows, anything else one statement per row. Never psycopg's `executemany`: it
    pipelines the rows with a single Sync at the end, and a process stopped before that Sync (SIGSTOP, a
    frozen VM) leaves its session "active", waiting for the rest; the idle-in-transaction timeout never
    ends it, and its row locks (a lease: no takeover) stay held until it resumes."""
    insert = row_insert(sql)
    if insert is not None and len(rows) > 1 and insert.fits(rows):
        for start in range(0, len(rows), ROWS_PER_STATEMENT):
            chunk = rows[start : start + ROWS_PER_STATEMENT]
            yield rows_statement(insert, len(chunk)), tuple(value for row in chunk for value in row)
        return
    statement = placeholders(sql)
    for row in rows:
        yield statement, tuple(row)
