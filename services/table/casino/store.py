"""Each casino table's log in SQLite (`<data dir>/casino.sqlite3`): the round's entries (new round, seats,
engine commands, wallet holds, payment) from which a round is rebuilt after a crash, the numbered events
that WatchCasinoTable and GetGameHistory serve, and the answers to the players' requests (idempotent
retries). Every entry is committed before its effect is answered; a request's record is committed with the
step it made, so a retry after a crash finds it and changes nothing."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS log (
    table_id TEXT NOT NULL, round INTEGER NOT NULL, n INTEGER NOT NULL, op TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (table_id, round, n));
CREATE TABLE IF NOT EXISTS events (
    table_id TEXT NOT NULL, seq INTEGER NOT NULL, round INTEGER NOT NULL, kind TEXT NOT NULL,
    seat INTEGER, player_id TEXT, data TEXT NOT NULL, time_ms INTEGER NOT NULL,
    PRIMARY KEY (table_id, seq));
CREATE TABLE IF NOT EXISTS bettors (
    table_id TEXT NOT NULL, round INTEGER NOT NULL, player_id TEXT NOT NULL,
    PRIMARY KEY (table_id, round, player_id));
CREATE INDEX IF NOT EXISTS bettors_by_player ON bettors (player_id, round);
CREATE TABLE IF NOT EXISTS requests (
    key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, result TEXT NOT NULL, response BLOB,
    time_ms INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS requests_by_time ON requests (time_ms);
"""


@dataclass(frozen=True)
class StoredEvent:
    seq: int
    table_id: str
    round: int
    kind: str
    seat: int | None  # None: public
    player_id: str | None  # the private event's player
    data: dict[str, Any]
    time_ms: int


@dataclass(frozen=True)
class RequestMark:
    """A player's request as it is recorded with the step it makes: its key (caller, rpc, table, request
    id: `servicekit.idempotency.request_key`) and fingerprint (the request without its id)."""

    key: str
    fingerprint: str


@dataclass(frozen=True)
class StoredRequest:
    fingerprint: str
    result: dict[str, Any]  # what the step decided (the seat taken, the seats left), to answer a retry
    response: bytes | None  # the answer sent; None when a crash came between the step and the answer


class CasinoStore:
    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(SCHEMA)
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def append(
        self,
        table_id: str,
        round_number: int,
        entries: list[tuple[str, dict[str, Any]]],
        events: list[StoredEvent],
        bettors: set[str] = frozenset(),  # type: ignore[assignment]
        request: RequestMark | None = None,
        result: dict[str, Any] | None = None,
    ) -> None:
        """Log entries, events and bettors of one step, and the request that made it, in one transaction."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute(
                    "SELECT COALESCE(MAX(n), 0) FROM log WHERE table_id = ? AND round = ?",
                    (table_id, round_number),
                ).fetchone()
                n = int(row[0])
                for op, body in entries:
                    n += 1
                    self._db.execute(
                        "INSERT INTO log VALUES (?, ?, ?, ?, ?)",
                        (table_id, round_number, n, op, json.dumps(body, sort_keys=True)),
                    )
                self._db.executemany(
                    "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            e.table_id,
                            e.seq,
                            e.round,
                            e.kind,
                            e.seat,
                            e.player_id,
                            json.dumps(e.data),
                            e.time_ms,
                        )
                        for e in events
                    ],
                )
                self._db.executemany(
                    "INSERT OR IGNORE INTO bettors VALUES (?, ?, ?)",
                    [(table_id, round_number, p) for p in bettors],
                )
                if request is not None:
                    self._db.execute(
                        "INSERT OR REPLACE INTO requests VALUES (?, ?, ?, NULL, ?)",
                        (request.key, request.fingerprint, json.dumps(result or {}), _now_ms()),
                    )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def request(self, key: str) -> StoredRequest | None:
        with self._lock:
            row = self._db.execute(
                "SELECT fingerprint, result, response FROM requests WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        return StoredRequest(str(row[0]), json.loads(row[1]), None if row[2] is None else bytes(row[2]))

    def save_answer(self, request: RequestMark, result: dict[str, Any], response: bytes) -> None:
        """The answer to a request (its step, if any, already logged it with a NULL response)."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO requests VALUES (?, ?, ?, ?, ?)",
                (request.key, request.fingerprint, json.dumps(result), response, _now_ms()),
            )

    def forget_requests(self, before_ms: int) -> int:
        """Drop the answers recorded before `before_ms` (a retry that late is a new request)."""
        with self._lock:
            return int(self._db.execute("DELETE FROM requests WHERE time_ms < ?", (before_ms,)).rowcount)

    def last_round(self, table_id: str) -> int:
        with self._lock:
            row = self._db.execute("SELECT MAX(round) FROM log WHERE table_id = ?", (table_id,)).fetchone()
        return int(row[0] or 0)

    def round_log(self, table_id: str, round_number: int) -> list[tuple[str, dict[str, Any]]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT op, body FROM log WHERE table_id = ? AND round = ? ORDER BY n",
                (table_id, round_number),
            ).fetchall()
        return [(op, json.loads(body)) for op, body in rows]

    def events(self, table_id: str, from_seq: int = 1, round_number: int | None = None) -> list[StoredEvent]:
        query = "SELECT * FROM events WHERE table_id = ? AND seq >= ?"
        args: list[Any] = [table_id, from_seq]
        if round_number is not None:
            query += " AND round = ?"
            args.append(round_number)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY seq", args).fetchall()
        return [StoredEvent(r[1], r[0], r[2], r[3], r[4], r[5], json.loads(r[6]), r[7]) for r in rows]

    def last_seq(self, table_id: str) -> int:
        with self._lock:
            row = self._db.execute("SELECT MAX(seq) FROM events WHERE table_id = ?", (table_id,)).fetchone()
        return int(row[0] or 0)

    def rounds_of(self, player_id: str, table_id: str, limit: int) -> list[tuple[str, int]]:
        """The player's latest rounds (they bet), newest first."""
        query = "SELECT table_id, round FROM bettors WHERE player_id = ?"
        args: list[Any] = [player_id]
        if table_id:
            query += " AND table_id = ?"
            args.append(table_id)
        with self._lock:
            rows = self._db.execute(
                query + " ORDER BY (SELECT MAX(time_ms) FROM events e WHERE e.table_id = bettors.table_id"
                " AND e.round = bettors.round) DESC, round DESC LIMIT ?",
                [*args, limit],
            ).fetchall()
        return [(str(r[0]), int(r[1])) for r in rows]


def _now_ms() -> int:
    return int(time.time() * 1000)
