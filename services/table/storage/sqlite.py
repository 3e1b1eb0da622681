"""The embedded database: SQLite in WAL mode with synchronous=FULL (a commit is on disk before it returns).

Writes are group-committed: writes that arrive while a transaction is being made durable go into the next
one, each in its own savepoint (a write that fails rolls back alone), so many tables share one fsync. The
caller that finds nobody writing leads the group on its own thread. Several processes may share the file
(shards of one machine): BEGIN IMMEDIATE takes SQLite's write lock, and a busy timeout waits for it.
Reads use a connection per thread (WAL readers run beside the writer and each other). A thread copies the
WAL into the database every second, so no commit pays for a checkpoint.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

import prometheus_client

from services.table.storage.database import Dialect, Row, StoreUnavailable, Tx

T = TypeVar("T")
CHECKPOINT_SECONDS = 1.0
BUSY_TIMEOUT_MS = 30_000
# What the shard's durable writes cost: each group is one fsync'd transaction (most of a commit's CPU), so
# writes per group is the group commit's saving (bench/table_service reports both per hand).
GROUP_COMMITS = prometheus_client.Counter(
    "table_store_group_commits_total", "Durable SQLite transactions of the table store (one fsync each)."
)
GROUPED_WRITES = prometheus_client.Counter(
    "table_store_grouped_writes_total", "Writes the table store's SQLite group commits carried."
)


def connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(
        str(path), check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000
    )
    db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    _use_wal(db)
    db.execute("PRAGMA synchronous=FULL")
    return db


def _use_wal(db: sqlite3.Connection) -> None:
    """WAL is a property of the file, set once. Switching a new file to it needs the file to itself, and
    SQLite answers "database is locked" at once (no busy wait) when shards open it together: retry."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            if str(db.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.005)


class SqliteTx:
    dialect: Dialect = "sqlite"

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def execute(self, sql: str, args: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self._db.execute(sql, args)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self._db.executemany(sql, rows)

    def script(self, script: str) -> None:
        """Statement by statement: executescript() would commit the open transaction."""
        statement = ""
        for line in script.splitlines(keepends=True):
            statement += line
            if sqlite3.complete_statement(statement):
                self._db.execute(statement)
                statement = ""
        if statement.strip():
            self._db.execute(statement)


class _Write(Generic[T]):
    """One caller's write, waiting for the group commit that carries it."""

    def __init__(self, work: Callable[[Tx], T]) -> None:
        self.work = work
        self.result: T | None = None
        self.error: BaseException | None = None
        self.done = False


class _Checkpointer:
    """Copies the WAL into the database on its own thread and connection, every second. SQLite would
    otherwise run each checkpoint inside the commit that crosses 1,000 WAL pages: a copy and two fsyncs
    on a player's command, every few hundred commits. PASSIVE never blocks the writer or the readers."""

    def __init__(self, path: Path, writer: sqlite3.Connection) -> None:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        self._db = connect(path)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="table-checkpoint", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(CHECKPOINT_SECONDS):
            self.checkpoint()

    def checkpoint(self) -> tuple[int, int]:
        """(WAL frames, frames copied into the database): SQLite's own answer."""
        try:
            row = self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error:  # the next round tries again; the WAL only grows meanwhile
            return (-1, -1)
        return int(row[1]), int(row[2])

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._db.close()


class SqliteDatabase:
    dialect: Dialect = "sqlite"

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = connect(path)
        self.checkpointer = _Checkpointer(path, self._db)
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._writes = threading.Condition()
        self._queue: list[_Write[Any]] = []
        self._writing = False
        self._closed = False

    def close(self) -> None:
        self.checkpointer.close()
        with self._writes:
            while self._writing:
                self._writes.wait()
            self._closed = True
            self._db.close()
        with self._readers_lock:
            for reader in self._readers:
                reader.close()
            self._readers.clear()

    def read(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        reader: sqlite3.Connection | None = getattr(self._local, "reader", None)
        if reader is None:
            reader = self._local.reader = connect(self.path)
            with self._readers_lock:
                self._readers.append(reader)
        return reader.execute(sql, args).fetchall()

    def write(self, work: Callable[[Tx], T]) -> T:
        """Run `work` in the next group commit and return once it is durable (or raise its error)."""
        mine: _Write[T] = _Write(work)
        with self._writes:
            if self._closed:
                raise StoreUnavailable("the table store is closed")
            self._queue.append(mine)
            while not mine.done and self._writing:
                self._writes.wait()
            if not mine.done:  # nobody is writing: lead a group with everything queued
                self._writing = True
                batch, self._queue = self._queue, []
        if not mine.done:
            try:
                self._commit_group(batch)
            finally:
                with self._writes:
                    self._writing = False
                    self._writes.notify_all()
        if mine.error is not None:
            raise mine.error
        return mine.result  # type: ignore[return-value]

    def _commit_group(self, batch: list[_Write[Any]]) -> None:
        db, tx = self._db, SqliteTx(self._db)
        try:
            db.execute("BEGIN IMMEDIATE")
            for item in batch:
                db.execute("SAVEPOINT one")
                try:
                    item.result = item.work(tx)
                    db.execute("RELEASE one")
                except Exception as error:  # this write fails alone; the others go on
                    db.execute("ROLLBACK TO one")
                    db.execute("RELEASE one")
                    item.error = error
            db.execute("COMMIT")
            GROUP_COMMITS.inc()
            GROUPED_WRITES.inc(len(batch))
        except BaseException as error:
            if db.in_transaction:
                db.execute("ROLLBACK")
            for item in batch:
                item.error = item.error or _unavailable(error)
        finally:
            for item in batch:
                item.done = True

    def run_alone(self, work: Callable[[SqliteTx], T]) -> T:
        """One transaction outside the group commit (migrations, before any write is queued)."""
        with self._writes:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                result = work(SqliteTx(self._db))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return result


def _unavailable(error: BaseException) -> BaseException:
    if isinstance(error, sqlite3.OperationalError):  # the disk, the lock, the file: not the write's fault
        unavailable = StoreUnavailable(f"SQLite: {error}")
        unavailable.__cause__ = error
        return unavailable
    return error
