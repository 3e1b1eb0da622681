"""Session settings every Felt store applies to its pooled PostgreSQL connections (psycopg_pool `configure`).

A process that stops in the middle of a transaction (SIGSTOP, a frozen VM, a debugger) keeps its row locks
for as long as its connection lives: a table's lease that no other shard can then take over, a wallet
account no other transfer can then touch. The server ends such a session after IDLE_IN_TRANSACTION_MS
(every transaction of the stores takes milliseconds), the locks go with it, and the stopped process, when it
resumes, finds its connection gone: nothing of its transaction commits. The server arms this timeout only
between statements (never inside a pipeline), so the stores send one statement at a time.
"""

from __future__ import annotations

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
