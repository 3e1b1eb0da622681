"""The embedded store: SQLite in WAL mode with synchronous=FULL (a commit is on disk before we answer).

SQLite has one writer at a time, so one writer thread owns the write connection and commits
requests in groups: every request queued while the previous commit was syncing goes into the next
transaction, each under its own savepoint (a refused request rolls back alone). One fsync then
acknowledges the whole group; nothing is acknowledged before its group commits. Reads use their own
connections and see the last committed state (WAL readers never block the writer).

Several wallet processes may share one database (FELT_WALLET_WORKERS): their writers take turns
through a blocking flock on `<db>.writer-lock` around each group, so a waiting writer wakes as soon as
the other commits instead of sleeping in SQLite's busy handler (which made the p99 seconds long)."""

from __future__ import annotations

import fcntl
import os
import queue
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from ledger import commands as c
from ledger.errors import LedgerError
from ledger.invariants import LedgerSummary
from ledger.model import Account, AccountKind, Hold, Transfer
from ledger.validation import validate
from servicekit.schema import MIGRATE_AT_START, SchemaPolicy, await_schema

from services.wallet.storage import migrations, pages
from services.wallet.storage.base import Clock, StoreUnavailable, wall_clock_ms
from services.wallet.storage.engine import Engine, Outcome, Result

Work = Callable[[sqlite3.Connection, int], Any]

MAX_GROUP = 256


class SqliteStore:
    kind = "sqlite"

    def __init__(
        self, path: str, *, clock: Clock = wall_clock_ms, schema: SchemaPolicy = MIGRATE_AT_START
    ) -> None:
        self.path = path
        parent = os.path.dirname(os.path.abspath(path))
        os.makedirs(parent, exist_ok=True)
        self._clock = clock
        self._engine = Engine(postgres=False)
        self._writer_lock = os.open(path + ".writer-lock", os.O_RDWR | os.O_CREAT, 0o600)
        self._writer = connect(self.path)
        if schema.external:
            await_schema(
                "wallet",
                self.path,
                lambda: migrations.missing(applied(self._writer), migrations.SQLITE),
                schema,
            )
        else:
            migrate(self._writer, self._clock())
        self._engine.check_legacy(self._writer)
        self._queue: queue.SimpleQueue[tuple[Work, Future[Any]] | None] = queue.SimpleQueue()
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._closed = False
        self._broken: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="wallet-sqlite-writer", daemon=True)
        self._thread.start()

    def _missing(self) -> list[str]:
        return migrations.missing(applied(self._writer), migrations.SQLITE)

    # -- writes ---------------------------------------------------------------------------------

    def _submit(self, work: Work) -> Any:
        if self._closed:
            raise StoreUnavailable("the wallet store is closed")
        if self._broken is not None:
            raise StoreUnavailable(f"the wallet store's writer stopped: {self._broken!r}")
        future: Future[Any] = Future()
        self._queue.put((work, future))
        return future.result()

    @property
    def healthy(self) -> bool:
        return not self._closed and self._broken is None and self._thread.is_alive()

    def execute(self, command: c.Command, caller: str) -> Result:
        return self.execute_outcome(command, caller).result

    def execute_outcome(self, command: c.Command, caller: str) -> Outcome:
        validate(command)
        outcome: Outcome = self._submit(lambda db, now: self._engine.apply(db, command, caller, now))
        return outcome

    def expire_holds(self) -> int:
        expired: int = self._submit(lambda db, now: self._engine.expire_due(db, now))
        return expired

    def _run(self) -> None:
        try:
            self._serve_queue()
        except BaseException as fatal:  # never leave callers waiting on a dead writer
            self._broken = fatal
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    item[1].set_exception(StoreUnavailable(f"the wallet store's writer stopped: {fatal!r}"))

    def _serve_queue(self) -> None:
        stopping = False
        while not stopping:
            item = self._queue.get()
            if item is None:
                break
            group = [item]
            while len(group) < MAX_GROUP:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stopping = True
                    break
                group.append(more)
            self._commit_group(group)

    def _commit_group(self, group: list[tuple[Work, Future[Any]]]) -> None:
        # The kernel releases the lock if this process dies mid-group; SQLite rolls the group back.
        fcntl.flock(self._writer_lock, fcntl.LOCK_EX)
        try:
            outcomes = self._commit_group_locked(group)
        finally:
            fcntl.flock(self._writer_lock, fcntl.LOCK_UN)
        # Answered after the lock is free: the other processes' writers need not wait for this.
        for future, result, error in outcomes:
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)

    def _commit_group_locked(
        self, group: list[tuple[Work, Future[Any]]]
    ) -> list[tuple[Future[Any], Any, BaseException | None]]:
        """Commits the group; returns what to answer each request (nothing if the commit failed: then
        every request has already been answered StoreUnavailable)."""
        db = self._writer
        outcomes: list[tuple[Future[Any], Any, BaseException | None]] = []
        try:
            now = self._clock()
            db.execute("BEGIN IMMEDIATE")
            for work, future in group:
                db.execute("SAVEPOINT op")
                try:
                    result = work(db, now)
                except (LedgerError, sqlite3.IntegrityError) as refused:
                    db.execute("ROLLBACK TO op")
                    db.execute("RELEASE op")
                    outcomes.append((future, None, refused))
                else:
                    db.execute("RELEASE op")
                    outcomes.append((future, result, None))
            db.execute("COMMIT")
        except Exception as failure:
            # Nothing of this group is acknowledged: the caller may retry with the same ids.
            for _, future in group:
                future.set_exception(StoreUnavailable(f"SQLite commit failed: {failure!r}"))
            if db.in_transaction:
                db.execute("ROLLBACK")
            return []
        return outcomes

    # -- reads ----------------------------------------------------------------------------------

    def _reader(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = connect(self.path)
            self._local.db = db
            with self._readers_lock:
                self._readers.append(db)
        return db

    def _read(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        db = self._reader()
        # One read transaction: every query of a multi-query read sees the same snapshot.
        db.execute("BEGIN")
        try:
            return fn(db)
        finally:
            db.execute("COMMIT")

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
        transfer: Transfer | None = self._read(lambda db: self._engine.get_transfer(db, transfer_id))
        return transfer

    def list_transfers(
        self, account_id: str, *, page_size: int, page_token: str
    ) -> tuple[list[Transfer], str]:
        page: tuple[list[Transfer], str] = self._read(
            lambda db: pages.list_transfers(self._engine, db, account_id, page_size, page_token)
        )
        return page

    def get_hold(self, hold_id: str) -> Hold | None:
        hold: Hold | None = self._read(lambda db: self._engine.get_hold(db, hold_id))
        return hold

    def hold_by_request(self, caller: str, request_id: str) -> Hold | None:
        hold: Hold | None = self._read(lambda db: self._engine.hold_by_request(db, caller, request_id))
        return hold

    def transfer_by_request(self, caller: str, request_id: str) -> Transfer | None:
        transfer: Transfer | None = self._read(
            lambda db: self._engine.transfer_by_request(db, caller, request_id)
        )
        return transfer

    def summary(self) -> LedgerSummary:
        summary: LedgerSummary = self._read(self._engine.summary)
        return summary

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        self._thread.join()
        self._writer.close()
        os.close(self._writer_lock)
        with self._readers_lock:
            for db in self._readers:
                db.close()
            self._readers.clear()


def connect(path: str) -> sqlite3.Connection:
    # isolation_level=None: we issue BEGIN/COMMIT ourselves.
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30.0)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("PRAGMA foreign_keys=ON")
    db.execute("PRAGMA busy_timeout=30000")
    return db


def applied(db: sqlite3.Connection) -> set[int]:
    """The versions recorded in the database (none before the first migration)."""
    found = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (migrations.VERSION_TABLE,)
    )
    if found.fetchone() is None:
        return set()
    return {r[0] for r in db.execute(f"SELECT version FROM {migrations.VERSION_TABLE}")}


def migrate(db: sqlite3.Connection, now_ms: int) -> list[int]:
    """Apply what is pending in one transaction under SQLite's write lock (BEGIN IMMEDIATE): processes
    that start together (and `felt migrate`) take turns, and each finds what the one before applied."""
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(
            f"CREATE TABLE IF NOT EXISTS {migrations.VERSION_TABLE}"
            " (version INTEGER PRIMARY KEY, applied_at_ms INTEGER NOT NULL)"
        )
        done = migrations.apply_all(lambda sql: _run_script(db, sql), applied(db), migrations.SQLITE, now_ms)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return done


def migrate_database(path: str, now_ms: int) -> list[int]:
    """`felt migrate` for an SQLite ledger."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    db = connect(path)
    try:
        return migrate(db, now_ms)
    finally:
        db.close()


def _run_script(db: sqlite3.Connection, script: str) -> None:
    # executescript() would commit the open transaction; run statement by statement instead.
    statement = ""
    for line in script.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            db.execute(statement)
            statement = ""
    if statement.strip():
        db.execute(statement)
