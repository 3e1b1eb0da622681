"""The one interface a service's SQL store writes and reads through, whichever database holds the log
(the table service's stores, the tournament service's; servicekit.leases fences writes through it).

SQL is written once, with `?` placeholders and the syntax SQLite and PostgreSQL share (`INSERT ... ON
CONFLICT`, `COALESCE`, no `rowid`); a PostgreSQL transaction rewrites the placeholders. A `write` is one
transaction: it commits entirely before it returns, or raises and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol, TypeVar

T = TypeVar("T")
Dialect = Literal["sqlite", "postgres"]
Row = tuple[Any, ...]


class StoreUnavailable(Exception):
    """The database cannot be reached. The write may or may not have committed: only a retry that the
    write's own keys make idempotent (or a read) can tell."""


# The SQLSTATE of a lease check that failed inside the database (PostgreSQL's `felt_fence`, where a
# write's statements go with its COMMIT and nobody reads the check's result).
FENCE_SQLSTATE = "FL001"


class FenceBroken(Exception):
    """A write's lease check failed in the database (FENCE_SQLSTATE); nothing of the write committed. The
    message is the reason the check was given."""


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Tx(Protocol):
    """An open transaction (for SQLite's group commit, this write's savepoint inside one). A transaction
    may hold statements back until a result is read or it commits (`holds_back`, PostgreSQL): a statement's
    failure may then be raised by a later call, or by the commit, and fails the whole write all the same."""

    dialect: Dialect

    def execute(self, sql: str, args: Sequence[Any] = ()) -> Cursor: ...

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...


class Database(Protocol):
    dialect: Dialect

    def write(self, work: Callable[[Tx], T]) -> T:
        """Run `work` in one transaction and return its result once committed (durable)."""
        ...

    def read(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        """Rows of one query over the last committed state."""
        ...

    def close(self) -> None: ...


def lock_clause(tx: Tx, mode: Literal["share", "update"]) -> str:
    """Row locks: `FOR SHARE` / `FOR UPDATE` in PostgreSQL; nothing in SQLite, where a write
    transaction (BEGIN IMMEDIATE) already excludes every other writer."""
    if tx.dialect == "sqlite":
        return ""
    return " FOR SHARE" if mode == "share" else " FOR UPDATE"


class ScriptTx(Tx, Protocol):
    """A transaction that also runs a multi-statement script without parameters (migrations)."""

    def script(self, script: str) -> None: ...
