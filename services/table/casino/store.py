"""Each casino table's log, in the table service's store (services/table/storage): SQLite by default
(`<data dir>/casino.sqlite3`), PostgreSQL when `TABLE_DATABASE_URL` names one. The round's entries (new
round, seats, engine commands, wallet holds, payment) from which a round is rebuilt after a crash
(`casino_log`), the numbered events that WatchCasinoTable and GetGameHistory serve (`casino_events`),
who bet in which round (`casino_bettors`), the answers to the players' requests (`casino_requests`,
idempotent retries), and who holds how many seats at each table (`table_seat_claims`, kind `casino`,
shared by every shard: the seat cap counts them, services/table/storage/seats.py). Every entry is
committed before its effect is answered, through the table's lease fence: a process that lost the table
commits nothing more for it (FencedOut); a request's record is committed with the step it made, so a
retry after a crash finds it and changes nothing."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servicekit.schema import MIGRATE_AT_START, SchemaPolicy

from services.table.storage import Tx, open_database, seats
from services.table.storage.leases import DEFAULT_TTL_MS, Shard
from services.table.storage.ownership import ShardTables
from services.table.storage.schema import CASINO

KIND = "casino"  # the tables' kind in the shared rows (leases, seat claims)


@dataclass(frozen=True)
class SeatClaim:
    """A join's claim, checked in the transaction of its step: the player's seats at every casino table of
    every shard, this one's after the step included, are at most `limit` (else seats.QuotaExceeded)."""

    player: str
    limit: int


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


_UPSERT_REQUEST = (
    "INSERT INTO casino_requests (key, fingerprint, result, response, time_ms) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT (key) DO UPDATE SET fingerprint = excluded.fingerprint, result = excluded.result,"
    " response = excluded.response, time_ms = excluded.time_ms"
)


class CasinoStore:
    def __init__(
        self,
        path: Path,
        *,
        database_url: str = "",
        shard: Shard | None = None,
        lease_ms: int = DEFAULT_TTL_MS,
        pool_size: int = 8,
        sharded: bool = False,
        schema: SchemaPolicy = MIGRATE_AT_START,
        wall_clock_ms: Callable[[], int] | None = None,
    ) -> None:
        """`path`: the SQLite file, unless `database_url` names the database (TABLE_DATABASE_URL).
        `shard`: this process as a shard (one per service, shared with the poker tables' store).
        `wall_clock_ms`: the time events and answers are stamped with (virtual in a simulation)."""
        self.wall_clock_ms = wall_clock_ms or _now_ms
        self._db = open_database(database_url, path, [CASINO], pool_size=pool_size, schema=schema)
        try:
            self.owned = ShardTables(self._db, KIND, shard, ttl_ms=lease_ms, sharded=sharded)
        except BaseException:
            self._db.close()
            raise

    def close(self) -> None:
        self.owned.close()
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
        seated: dict[str, int] | None = None,
        claim: SeatClaim | None = None,
    ) -> None:
        """Log entries, events and bettors of one step, and the request that made it, in one transaction.
        `seated`: who holds how many seats at the table after the step, when that changed (the table's
        seat claims follow); `claim`: the join's seat cap, checked first (seats.QuotaExceeded: nothing
        written)."""

        def work(tx: Tx) -> None:
            if claim is not None:
                held_here = (seated or {}).get(claim.player, 0)
                seats.claim(tx, KIND, claim.player, table_id, held_here, claim.limit)
            if seated is not None:
                seats.reconcile(tx, KIND, table_id, seated)
            row = tx.execute(
                "SELECT COALESCE(MAX(n), 0) FROM casino_log WHERE table_id = ? AND round = ?",
                (table_id, round_number),
            ).fetchone()
            n = int(row[0])
            for op, body in entries:
                n += 1
                tx.execute(
                    "INSERT INTO casino_log (table_id, round, n, op, body) VALUES (?, ?, ?, ?, ?)",
                    (table_id, round_number, n, op, json.dumps(body, sort_keys=True)),
                )
            tx.executemany(
                "INSERT INTO casino_events (table_id, seq, round, kind, seat, player_id, data, time_ms)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (e.table_id, e.seq, e.round, e.kind, e.seat, e.player_id, json.dumps(e.data), e.time_ms)
                    for e in events
                ],
            )
            tx.executemany(
                "INSERT INTO casino_bettors (table_id, round, player_id) VALUES (?, ?, ?)"
                " ON CONFLICT (table_id, round, player_id) DO NOTHING",
                [(table_id, round_number, p) for p in sorted(bettors)],
            )
            if request is not None:
                row = (request.key, request.fingerprint, json.dumps(result or {}), None, self.wall_clock_ms())
                tx.execute(_UPSERT_REQUEST, row)

        self.owned.write(table_id, work)

    def reconcile_seats(self, table_id: str, seated: dict[str, int]) -> None:
        """The table's seat claims become `seated` (player -> seats), through the table's fence."""
        self.owned.write(table_id, lambda tx: seats.reconcile(tx, KIND, table_id, seated))

    def seats_elsewhere(self, player: str, table_id: str) -> int:
        """The seats the player's claims hold at the other casino tables (of every shard), as committed."""
        rows = self._db.read(
            f"SELECT COALESCE(SUM(seats), 0) FROM {seats.CLAIMS} WHERE kind = ? AND player = ?"
            " AND table_id <> ?",
            (KIND, player, table_id),
        )
        return int(rows[0][0])

    def seat_claims(self, table_id: str) -> dict[str, int]:
        rows = self._db.read(
            f"SELECT player, seats FROM {seats.CLAIMS} WHERE kind = ? AND table_id = ?", (KIND, table_id)
        )
        return {str(r[0]): int(r[1]) for r in rows}

    def request(self, key: str) -> StoredRequest | None:
        rows = self._db.read(
            "SELECT fingerprint, result, response FROM casino_requests WHERE key = ?", (key,)
        )
        if not rows:
            return None
        fingerprint, result, response = rows[0]
        return StoredRequest(
            str(fingerprint), json.loads(result), None if response is None else bytes(response)
        )

    def save_answer(self, request: RequestMark, result: dict[str, Any], response: bytes) -> None:
        """The answer to a request (its step, if any, already logged it with no response): not a table's
        log, so not through the fence."""
        row = (request.key, request.fingerprint, json.dumps(result), response, self.wall_clock_ms())
        self._db.write(lambda tx: tx.execute(_UPSERT_REQUEST, row))

    def forget_requests(self, before_ms: int) -> int:
        """Drop the answers recorded before `before_ms` (a retry that late is a new request)."""
        return int(
            self._db.write(
                lambda tx: tx.execute("DELETE FROM casino_requests WHERE time_ms < ?", (before_ms,)).rowcount
            )
        )

    def last_round(self, table_id: str) -> int:
        rows = self._db.read("SELECT MAX(round) FROM casino_log WHERE table_id = ?", (table_id,))
        return int(rows[0][0] or 0)

    def round_log(self, table_id: str, round_number: int) -> list[tuple[str, dict[str, Any]]]:
        rows = self._db.read(
            "SELECT op, body FROM casino_log WHERE table_id = ? AND round = ? ORDER BY n",
            (table_id, round_number),
        )
        return [(str(op), json.loads(body)) for op, body in rows]

    def events(self, table_id: str, from_seq: int = 1, round_number: int | None = None) -> list[StoredEvent]:
        query = (
            "SELECT table_id, seq, round, kind, seat, player_id, data, time_ms FROM casino_events"
            " WHERE table_id = ? AND seq >= ?"
        )
        args: list[Any] = [table_id, from_seq]
        if round_number is not None:
            query += " AND round = ?"
            args.append(round_number)
        rows = self._db.read(query + " ORDER BY seq", args)
        return [StoredEvent(r[1], r[0], r[2], r[3], r[4], r[5], json.loads(r[6]), r[7]) for r in rows]

    def last_seq(self, table_id: str) -> int:
        rows = self._db.read("SELECT MAX(seq) FROM casino_events WHERE table_id = ?", (table_id,))
        return int(rows[0][0] or 0)

    def rounds_of(self, player_id: str, table_id: str, limit: int) -> list[tuple[str, int]]:
        """The player's latest rounds (they bet), newest first."""
        query = "SELECT table_id, round FROM casino_bettors WHERE player_id = ?"
        args: list[Any] = [player_id]
        if table_id:
            query += " AND table_id = ?"
            args.append(table_id)
        rows = self._db.read(
            query
            + " ORDER BY (SELECT MAX(time_ms) FROM casino_events e WHERE e.table_id = casino_bettors.table_id"
            " AND e.round = casino_bettors.round) DESC, round DESC LIMIT ?",
            [*args, limit],
        )
        return [(str(r[0]), int(r[1])) for r in rows]


def _now_ms() -> int:
    return int(time.time() * 1000)
