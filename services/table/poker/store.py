"""The poker tables' log in SQLite (`<data dir>/tables.sqlite3`, WAL, synchronous=FULL).

- `tables`: each table's settings, host, invite code and the players invited when it was created.
- `invitations`: players the host invited afterwards, one row each (InvitePlayers writes only its new rows,
  never the snapshot).
- `snapshots` + `hand_log`: the table between hands, and the commands since (the hand in progress): a
  restarted service loads the snapshot and replays the commands (the core is deterministic given the cards).
- `events`: the numbered TableEvents (serialized protos; `private_player` set on hole cards), served by
  WatchTable from any `from_seq`.
- `hands` + `hand_players`: finished hands (who sat where, each player's net) for the histories.
- `money_ops` / `payouts`: wallet calls asked (buy-ins) or owed (stacks leaving), so a crash in between is
  cleaned up or completed on restart; an open payout carries its failed attempts, when it is tried next,
  its last error and whether the wallet refused it (`payouts.py`).
- `requests`: the first answer to each mutating request, under its caller-scoped key with the request's
  fingerprint (`servicekit.idempotency`), kept `REQUEST_RETENTION_MS` (a day) for retries.

The file's schema version is SQLite's `user_version`: a new file gets the whole schema, an older one the
migrations since its version, once, in one transaction.

One `commit` per command writes all of its rows atomically, before the command is answered. Writes are
group-committed: commands of several tables that arrive while a transaction is being made durable go into
the next one (each in its own savepoint), so many tables share one fsync. Reads use their own connection
(one per thread; WAL lets them run beside the writer and each other).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from servicekit.idempotency import Saved

T = TypeVar("T")

SCHEMA = """
CREATE TABLE IF NOT EXISTS tables (
    table_id TEXT PRIMARY KEY, settings BLOB NOT NULL, host TEXT NOT NULL, invite_code TEXT NOT NULL,
    invited TEXT NOT NULL, created_ms INTEGER NOT NULL, tournament_id TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS snapshots (table_id TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS invitations (
    table_id TEXT NOT NULL, player TEXT NOT NULL, PRIMARY KEY (table_id, player));
CREATE TABLE IF NOT EXISTS hand_log (
    table_id TEXT NOT NULL, n INTEGER NOT NULL, op TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (table_id, n));
CREATE TABLE IF NOT EXISTS events (
    table_id TEXT NOT NULL, seq INTEGER NOT NULL, hand INTEGER NOT NULL, private_player TEXT,
    body BLOB NOT NULL, time_ms INTEGER NOT NULL, PRIMARY KEY (table_id, seq));
CREATE TABLE IF NOT EXISTS hands (
    table_id TEXT NOT NULL, hand INTEGER NOT NULL, started_ms INTEGER NOT NULL, voided INTEGER NOT NULL,
    players TEXT NOT NULL, PRIMARY KEY (table_id, hand));
CREATE TABLE IF NOT EXISTS hand_players (
    table_id TEXT NOT NULL, hand INTEGER NOT NULL, player TEXT NOT NULL, seat INTEGER NOT NULL,
    net INTEGER NOT NULL, PRIMARY KEY (table_id, hand, player));
CREATE INDEX IF NOT EXISTS hand_players_by_player ON hand_players (player, table_id, hand);
CREATE TABLE IF NOT EXISTS money_ops (
    table_id TEXT NOT NULL, n INTEGER NOT NULL, hold_id TEXT NOT NULL, player TEXT NOT NULL,
    amount INTEGER NOT NULL, done INTEGER NOT NULL, PRIMARY KEY (table_id, n));
CREATE TABLE IF NOT EXISTS payouts (
    transfer_id TEXT PRIMARY KEY, table_id TEXT NOT NULL, player TEXT NOT NULL, amount INTEGER NOT NULL,
    done INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_at_ms INTEGER NOT NULL DEFAULT 0,
    last_error TEXT NOT NULL DEFAULT '', refused INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS payouts_open ON payouts (table_id) WHERE done = 0;
CREATE TABLE IF NOT EXISTS requests (
    key TEXT PRIMARY KEY, response BLOB NOT NULL, fingerprint TEXT NOT NULL DEFAULT '',
    created_ms INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS requests_by_age ON requests (created_ms);
"""
# A retry comes within seconds; a day covers any client's. Older answers are dropped (the clock prunes).
REQUEST_RETENTION_MS = 24 * 3600 * 1000


def _migrate_1(db: sqlite3.Connection) -> None:
    """Version 1: answers carry the request's fingerprint and their age. Keys of older answers were not
    scoped by the caller's role; they never match a new key (a JSON list) and age out."""
    db.execute("ALTER TABLE requests ADD COLUMN fingerprint TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE requests ADD COLUMN created_ms INTEGER NOT NULL DEFAULT 0")
    db.execute("CREATE INDEX IF NOT EXISTS requests_by_age ON requests (created_ms)")


def _migrate_2(db: sqlite3.Connection) -> None:
    """Version 2: invitations are rows of their own, out of the snapshots (and of hand logs, where an
    invitation made during a hand waited for the next snapshot)."""
    db.execute(
        "CREATE TABLE invitations"
        " (table_id TEXT NOT NULL, player TEXT NOT NULL, PRIMARY KEY (table_id, player))"
    )
    for table_id, raw in db.execute("SELECT table_id, body FROM snapshots").fetchall():
        body = json.loads(raw)
        invited = body.pop("invited", [])
        db.executemany("INSERT OR IGNORE INTO invitations VALUES (?, ?)", [(table_id, p) for p in invited])
        db.execute("UPDATE snapshots SET body = ? WHERE table_id = ?", (json.dumps(body), table_id))
    for table_id, raw in db.execute("SELECT table_id, body FROM hand_log WHERE op = 'invite'").fetchall():
        db.execute("INSERT OR IGNORE INTO invitations VALUES (?, ?)", (table_id, json.loads(raw)["player"]))


def _migrate_3(db: sqlite3.Connection) -> None:
    """Version 3: an open payout carries its failed attempts, its next try, its last error and whether the
    wallet refused it, so each backs off on its own; open payouts are indexed."""
    for column in (
        "attempts INTEGER NOT NULL DEFAULT 0",
        "next_at_ms INTEGER NOT NULL DEFAULT 0",
        "last_error TEXT NOT NULL DEFAULT ''",
        "refused INTEGER NOT NULL DEFAULT 0",
    ):
        db.execute(f"ALTER TABLE payouts ADD COLUMN {column}")


def _migrate_4(db: sqlite3.Connection) -> None:
    """Version 4: a table may belong to a tournament (played under the tournament policy)."""
    db.execute("ALTER TABLE tables ADD COLUMN tournament_id TEXT NOT NULL DEFAULT ''")


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_migrate_1, _migrate_2, _migrate_3, _migrate_4]
SCHEMA_VERSION = len(MIGRATIONS)


def _open_schema(db: sqlite3.Connection) -> None:
    """The whole schema for a new file; the migrations since its version for an older one."""
    db.execute("BEGIN IMMEDIATE")
    try:
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        existing = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tables'")
        if existing.fetchone() is not None:
            for migrate in MIGRATIONS[version:]:
                migrate(db)
        for statement in filter(str.strip, SCHEMA.split(";")):
            db.execute(statement)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


@dataclass(frozen=True)
class TableRow:
    """A table as created: its settings (a serialized TableSettings), host, invite code, the players
    invited at creation, and the tournament it belongs to ("" for a cash or private table)."""

    table_id: str
    settings: bytes
    host: str
    invite_code: str
    invited: list[str]
    tournament_id: str = ""


@dataclass(frozen=True)
class StoredEvent:
    seq: int
    hand: int
    private_player: str | None  # None: every viewer may see it
    body: bytes  # a serialized TableEvent
    time_ms: int


@dataclass(frozen=True)
class HandRow:
    table_id: str
    hand: int
    started_ms: int
    voided: bool
    players: dict[int, str]  # seat -> player


@dataclass(frozen=True)
class Payout:
    """A stack owed to a player's wallet under its transfer id, and its failed attempts so far."""

    transfer_id: str
    player: str
    amount: int
    attempts: int = 0
    next_at_ms: int = 0  # not tried again before this (the table's clock)
    last_error: str = ""
    refused: bool = False  # the last attempt was refused by the wallet (not an outage)


@dataclass(frozen=True)
class Answer:
    """The first answer to a request: its caller-scoped key, the request's fingerprint and the response."""

    key: str
    saved: Saved
    at_ms: int


@dataclass
class Commit:
    """Everything one command writes, in one transaction."""

    log: tuple[str, dict[str, Any]] | None = None  # a command of the hand in progress
    snapshot: dict[str, Any] | None = None  # the table between hands (clears the hand log)
    events: list[StoredEvent] = field(default_factory=list)
    hand: HandRow | None = None
    nets: dict[str, tuple[int, int]] = field(default_factory=dict)  # player -> (seat, net) of `hand`
    payouts: list[Payout] = field(default_factory=list)
    money_done: int | None = None  # a money_ops row now reflected in the table
    request: Answer | None = None  # the command's answer, for repeats of its request
    invited: list[str] = field(default_factory=list)  # players invited by the host (rows of their own)


class _Write(Generic[T]):
    """One caller's writes, waiting for the group commit that carries them."""

    def __init__(self, work: Callable[[sqlite3.Connection], T]) -> None:
        self.work = work
        self.result: T | None = None
        self.error: BaseException | None = None
        self.done = False


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    return db


CHECKPOINT_SECONDS = 1.0


class _Checkpointer:
    """Copies the WAL into the database on its own thread and connection, every second. SQLite would
    otherwise run each checkpoint inside the commit that crosses 1,000 WAL pages: a copy and two fsyncs
    on a player's Act, every few hundred commits. PASSIVE never blocks the writer or the readers."""

    def __init__(self, path: Path, writer: sqlite3.Connection) -> None:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        self._db = _connect(path)
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


class TableStore:
    def __init__(self, path: Path) -> None:
        self._db = _connect(path)
        _open_schema(self._db)
        self.checkpointer = _Checkpointer(path, self._db)
        self._path = path
        self._local = threading.local()  # one reader connection per thread: WAL readers run side by side
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._writes = threading.Condition()
        self._queue: list[_Write[Any]] = []
        self._writing = False

    def close(self) -> None:
        self.checkpointer.close()
        with self._writes:
            while self._writing:
                self._writes.wait()
            self._db.close()
        with self._readers_lock:
            for reader in self._readers:
                reader.close()
            self._readers.clear()

    def _rows(self, query: str, args: tuple[Any, ...] | list[Any] = ()) -> list[Any]:
        reader: sqlite3.Connection | None = getattr(self._local, "reader", None)
        if reader is None:
            reader = self._local.reader = _connect(self._path)
            with self._readers_lock:
                self._readers.append(reader)
        return reader.execute(query, args).fetchall()

    def _write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run `work` in the next group commit and return once it is durable (or raise its error)."""
        mine: _Write[T] = _Write(work)
        with self._writes:
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
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            for item in batch:
                db.execute("SAVEPOINT one")
                try:
                    item.result = item.work(db)
                    db.execute("RELEASE one")
                except Exception as error:  # this write fails alone; the others go on
                    db.execute("ROLLBACK TO one")
                    db.execute("RELEASE one")
                    item.error = error
            db.execute("COMMIT")
        except BaseException as error:
            if db.in_transaction:
                db.execute("ROLLBACK")
            for item in batch:
                item.error = item.error or error
        finally:
            for item in batch:
                item.done = True

    # Tables ------------------------------------------------------------------------------------------

    def add_table(
        self,
        table_id: str,
        settings: bytes,
        host: str,
        code: str,
        invited: list[str],
        now_ms: int,
        tournament_id: str = "",
    ) -> None:
        row = (table_id, settings, host, code, json.dumps(sorted(invited)), now_ms, tournament_id)
        self._write(lambda db: db.execute("INSERT INTO tables VALUES (?, ?, ?, ?, ?, ?, ?)", row))

    def tables(self) -> list[TableRow]:
        rows = self._rows(
            "SELECT table_id, settings, host, invite_code, invited, tournament_id FROM tables"
            " ORDER BY table_id"
        )
        return [
            TableRow(str(r[0]), bytes(r[1]), str(r[2]), str(r[3]), list(json.loads(r[4])), str(r[5]))
            for r in rows
        ]

    def invitations(self, table_id: str) -> list[str]:
        rows = self._rows("SELECT player FROM invitations WHERE table_id = ? ORDER BY player", (table_id,))
        return [str(r[0]) for r in rows]

    def snapshot(self, table_id: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT body FROM snapshots WHERE table_id = ?", (table_id,))
        return dict(json.loads(rows[0][0])) if rows else None

    def hand_log(self, table_id: str) -> list[tuple[str, dict[str, Any]]]:
        rows = self._rows("SELECT op, body FROM hand_log WHERE table_id = ? ORDER BY n", (table_id,))
        return [(str(r[0]), dict(json.loads(r[1]))) for r in rows]

    # The one write path --------------------------------------------------------------------------------

    def commit(self, table_id: str, c: Commit) -> None:
        self._write(lambda db: self._apply(db, table_id, c))

    @staticmethod
    def _apply(db: sqlite3.Connection, table_id: str, c: Commit) -> None:
        if c.log is not None:
            row = db.execute(
                "SELECT COALESCE(MAX(n), 0) FROM hand_log WHERE table_id = ?", (table_id,)
            ).fetchone()
            db.execute(
                "INSERT INTO hand_log VALUES (?, ?, ?, ?)",
                (table_id, int(row[0]) + 1, c.log[0], json.dumps(c.log[1], sort_keys=True)),
            )
        if c.snapshot is not None:
            db.execute("INSERT OR REPLACE INTO snapshots VALUES (?, ?)", (table_id, json.dumps(c.snapshot)))
            db.execute("DELETE FROM hand_log WHERE table_id = ?", (table_id,))
        db.executemany(
            "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)",
            [(table_id, e.seq, e.hand, e.private_player, e.body, e.time_ms) for e in c.events],
        )
        if c.hand is not None:
            h = c.hand
            db.execute(
                "INSERT OR REPLACE INTO hands VALUES (?, ?, ?, ?, ?)",
                (table_id, h.hand, h.started_ms, int(h.voided), json.dumps(h.players)),
            )
            db.executemany(
                "INSERT OR REPLACE INTO hand_players VALUES (?, ?, ?, ?, ?)",
                [(table_id, h.hand, p, seat, net) for p, (seat, net) in c.nets.items()],
            )
        db.executemany(
            "INSERT OR IGNORE INTO payouts (transfer_id, table_id, player, amount, done)"
            " VALUES (?, ?, ?, ?, 0)",
            [(p.transfer_id, table_id, p.player, p.amount) for p in c.payouts],
        )
        if c.money_done is not None:
            db.execute("UPDATE money_ops SET done = 1 WHERE table_id = ? AND n = ?", (table_id, c.money_done))
        if c.invited:
            db.executemany(
                "INSERT OR IGNORE INTO invitations VALUES (?, ?)", [(table_id, p) for p in c.invited]
            )
        if c.request is not None:
            TableStore._save_answer(db, c.request)

    # Money ---------------------------------------------------------------------------------------------

    def begin_money(self, table_id: str, player: str, amount: int, hold_id_of: Any) -> tuple[int, str]:
        """Log a buy-in about to be asked of the wallet; returns its number and hold id."""

        def work(db: sqlite3.Connection) -> tuple[int, str]:
            row = db.execute(
                "SELECT COALESCE(MAX(n), 0) FROM money_ops WHERE table_id = ?", (table_id,)
            ).fetchone()
            n = int(row[0]) + 1
            hold_id = str(hold_id_of(n))
            db.execute(
                "INSERT INTO money_ops VALUES (?, ?, ?, ?, ?, 0)", (table_id, n, hold_id, player, amount)
            )
            return n, hold_id

        return self._write(work)

    def end_money(self, table_id: str, n: int) -> None:
        self._write(
            lambda db: db.execute("UPDATE money_ops SET done = 1 WHERE table_id = ? AND n = ?", (table_id, n))
        )

    def open_money(self, table_id: str) -> list[tuple[int, str, str]]:
        rows = self._rows(
            "SELECT n, hold_id, player FROM money_ops WHERE table_id = ? AND done = 0 ORDER BY n", (table_id,)
        )
        return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]

    def open_payouts(self, table_id: str) -> list[Payout]:
        rows = self._rows(
            "SELECT transfer_id, player, amount, attempts, next_at_ms, last_error, refused FROM payouts"
            " WHERE table_id = ? AND done = 0 ORDER BY rowid",
            (table_id,),
        )
        return [
            Payout(str(r[0]), str(r[1]), int(r[2]), int(r[3]), int(r[4]), str(r[5]), bool(r[6])) for r in rows
        ]

    def payout_done(self, transfer_id: str) -> None:
        self._write(
            lambda db: db.execute("UPDATE payouts SET done = 1 WHERE transfer_id = ?", (transfer_id,))
        )

    def payout_failed(
        self, transfer_id: str, attempts: int, next_at_ms: int, error: str, refused: bool
    ) -> None:
        self._write(
            lambda db: db.execute(
                "UPDATE payouts SET attempts = ?, next_at_ms = ?, last_error = ?, refused = ?"
                " WHERE transfer_id = ?",
                (attempts, next_at_ms, error[:200], int(refused), transfer_id),
            )
        )

    def paid(self, transfer_ids: list[str]) -> set[str]:
        """Those of the transfer ids whose payout the wallet has taken."""
        marks = ", ".join("?" * len(transfer_ids))
        rows = self._rows(
            f"SELECT transfer_id FROM payouts WHERE done = 1 AND transfer_id IN ({marks})", transfer_ids
        )
        return {str(r[0]) for r in rows}

    def pending_payouts(self) -> tuple[int, int, int]:
        """(open payouts, their chips, those the wallet refused at their last attempt), every table."""
        rows = self._rows(
            "SELECT COUNT(*), COALESCE(SUM(amount), 0), COALESCE(SUM(refused), 0) FROM payouts WHERE done = 0"
        )
        return int(rows[0][0]), int(rows[0][1]), int(rows[0][2])

    # Events and histories --------------------------------------------------------------------------------

    def last_seq(self, table_id: str) -> int:
        rows = self._rows("SELECT MAX(seq) FROM events WHERE table_id = ?", (table_id,))
        return int(rows[0][0] or 0)

    def events(
        self, table_id: str, from_seq: int, to_seq: int | None = None, hand: int | None = None
    ) -> list[StoredEvent]:
        query = "SELECT seq, hand, private_player, body, time_ms FROM events WHERE table_id = ? AND seq >= ?"
        args: list[Any] = [table_id, from_seq]
        if to_seq is not None:
            query += " AND seq <= ?"
            args.append(to_seq)
        if hand is not None:
            query += " AND hand = ?"
            args.append(hand)
        rows = self._rows(query + " ORDER BY seq", args)
        return [StoredEvent(int(r[0]), int(r[1]), r[2], bytes(r[3]), int(r[4])) for r in rows]

    def hand(self, table_id: str, hand: int) -> HandRow | None:
        rows = self._rows(
            "SELECT started_ms, voided, players FROM hands WHERE table_id = ? AND hand = ?", (table_id, hand)
        )
        if not rows:
            return None
        players = {int(k): str(v) for k, v in json.loads(rows[0][2]).items()}
        return HandRow(table_id, hand, int(rows[0][0]), bool(rows[0][1]), players)

    def net_of(self, table_id: str, hand: int, player: str) -> int | None:
        rows = self._rows(
            "SELECT net FROM hand_players WHERE table_id = ? AND hand = ? AND player = ?",
            (table_id, hand, player),
        )
        return int(rows[0][0]) if rows else None

    def played_at(self, table_id: str, player: str) -> bool:
        """Whether the player was dealt a finished hand at the table."""
        rows = self._rows(
            "SELECT 1 FROM hand_players WHERE player = ? AND table_id = ? LIMIT 1", (player, table_id)
        )
        return bool(rows)

    def hands_of(self, table_id: str, player: str | None, before: int, limit: int) -> list[HandRow]:
        """Finished hands, newest first, below hand number `before`: the player's (None: all)."""
        if player is None:
            rows = self._rows(
                "SELECT hand FROM hands WHERE table_id = ? AND hand < ? ORDER BY hand DESC LIMIT ?",
                (table_id, before, limit),
            )
        else:
            rows = self._rows(
                "SELECT hand FROM hand_players WHERE table_id = ? AND player = ? AND hand < ?"
                " ORDER BY hand DESC LIMIT ?",
                (table_id, player, before, limit),
            )
        found = [self.hand(table_id, int(r[0])) for r in rows]
        return [h for h in found if h is not None]

    # Idempotent requests ---------------------------------------------------------------------------------

    def response(self, key: str) -> Saved | None:
        rows = self._rows("SELECT fingerprint, response FROM requests WHERE key = ?", (key,))
        return Saved(str(rows[0][0]), bytes(rows[0][1])) if rows else None

    def save_response(self, answer: Answer) -> None:
        self._write(lambda db: self._save_answer(db, answer))

    @staticmethod
    def _save_answer(db: sqlite3.Connection, a: Answer) -> None:
        db.execute(
            "INSERT OR REPLACE INTO requests (key, response, fingerprint, created_ms) VALUES (?, ?, ?, ?)",
            (a.key, a.saved.response, a.saved.fingerprint, a.at_ms),
        )

    def prune_requests(self, before_ms: int, limit: int = 10_000) -> int:
        """Drop up to `limit` answers older than `before_ms`; returns how many went."""

        def work(db: sqlite3.Connection) -> int:
            cursor = db.execute(
                "DELETE FROM requests WHERE key IN"
                " (SELECT key FROM requests WHERE created_ms < ? ORDER BY created_ms LIMIT ?)",
                (before_ms, limit),
            )
            return int(cursor.rowcount)

        return self._write(work)
