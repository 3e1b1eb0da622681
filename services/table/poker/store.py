"""The poker tables' log, in the table service's store (services/table/storage): SQLite by default
(`<data dir>/tables.sqlite3`, WAL, synchronous=FULL), PostgreSQL when `TABLE_DATABASE_URL` names one; one
schema for both, migrated at open (a file of the store before it moved onto the layer is migrated in place,
its rows kept).

- `poker_tables`: each table's settings, host, invite code and the players invited when it was created.
- `poker_invitations`: players the host invited afterwards, one row each (InvitePlayers writes only its new
  rows, never the snapshot).
- `poker_snapshots` + `poker_hand_log`: the table between hands, and the commands since (the hand in
  progress): a restarted service loads the snapshot and replays the commands (the core is deterministic
  given the cards).
- `poker_events`: the numbered TableEvents (serialized protos; `private_player` set on hole cards), served
  by WatchTable from any `from_seq`.
- `poker_hands` + `poker_hand_players`: finished hands (who sat where, each player's net) for the histories.
- `poker_money_ops` / `poker_payouts`: wallet calls asked (buy-ins) or owed (stacks leaving, in the order
  owed: `n`), so a crash in between is cleaned up or completed on restart; an open payout carries its
  failed attempts, when it is tried next, its last error and whether the wallet refused it (`payouts.py`).
- `table_seat_claims` (kind `poker`, shared with the casino and every shard): the players seated at each
  table, claimed on JoinTable before the seat is taken and written with every commit that changes who
  sits there, which MAX_SEATS_PER_PLAYER counts (services/table/storage/seats.py).
- `poker_requests`: the first answer to each mutating request, under its caller-scoped key with the
  request's fingerprint (`servicekit.idempotency`), kept `REQUEST_RETENTION_MS` (a day) for retries.
- `poker_director_epochs`: the highest tournament-director epoch seen per tournament, by every shard
  (issue 25: the STALE_DIRECTOR floor survives a shard's restart and a takeover of the table).

One `commit` per command writes all of its rows atomically, before the command is answered, through the
table's lease fence (services/table/storage/leases.py): a process that lost the table commits nothing
more for it (FencedOut). In SQLite, writes of several tables are group-committed (one fsync for many);
PostgreSQL commits concurrent transactions together by itself. Reads see the last committed state.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from refusal import Kind, Refusal
from servicekit.idempotency import Saved
from servicekit.schema import MIGRATE_AT_START, SchemaPolicy

from services.table.storage import Tx, open_database, seats
from services.table.storage.database import lock_clause
from services.table.storage.leases import DEFAULT_TTL_MS, Shard
from services.table.storage.ownership import ShardTables
from services.table.storage.schema import POKER

# A retry comes within seconds; a day covers any client's. Older answers are dropped (the clock prunes).
REQUEST_RETENTION_MS = 24 * 3600 * 1000
KIND = "poker"  # the tables' kind in the shared rows (leases, seat claims)


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


@dataclass(frozen=True)
class DirectorFence:
    """A tournament director's instruction (issue 25): its tournament and the epoch of the director's lease
    on it. Checked against `poker_director_epochs` in the transaction that writes what the instruction did.
    """

    tournament_id: str
    epoch: int


class StaleDirector(Refusal):
    """A newer director of the tournament has acted (at this table, another, or another shard): the
    instruction is refused and its transaction rolled back."""

    def __init__(self, tournament_id: str, epoch: int, seen_epoch: int) -> None:
        super().__init__(
            Kind.FAILED_PRECONDITION,
            "STALE_DIRECTOR",
            f"tournament {tournament_id!r} has a newer director (epoch {seen_epoch}) than this ({epoch})",
            details={"tournament_id": tournament_id, "seen_epoch": seen_epoch, "epoch": epoch},
        )
        self.tournament_id, self.epoch, self.seen_epoch = tournament_id, epoch, seen_epoch


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
    seated: dict[str, int] | None = None  # who sits at the table now (its seat claims follow), if it changed
    director: DirectorFence | None = None  # a director's instruction: refused unless its epoch is the newest


def _row(r: Any) -> tuple[str, bytes, str, str, list[str], str]:
    return str(r[0]), bytes(r[1]), str(r[2]), str(r[3]), list(json.loads(r[4])), str(r[5])


class TableStore:
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
    ) -> None:
        """`path`: the SQLite file, unless `database_url` names the database (TABLE_DATABASE_URL).
        `shard`: this process as a shard (one per service, shared with the casino's store); `sharded`:
        one of several shards on the store (services/table/storage/ownership.py)."""
        self._db = open_database(database_url, path, [POKER], pool_size=pool_size, schema=schema)
        self.checkpointer = getattr(self._db, "checkpointer", None)  # SQLite's background WAL copier
        try:
            self.owned = ShardTables(self._db, KIND, shard, ttl_ms=lease_ms, sharded=sharded)
        except BaseException:
            self._db.close()
            raise

    def close(self) -> None:
        self.owned.close()
        self._db.close()

    def _rows(self, query: str, args: tuple[Any, ...] | list[Any] = ()) -> list[Any]:
        return self._db.read(query, args)

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
        director: DirectorFence | None = None,
    ) -> str:
        """A new table with its lease, placed on the shard with the fewest tables (this one unless
        sharded); that shard's id. A table that exists already (a configured public table another shard
        created at the same moment) is left as it is. `director`: created for a tournament director,
        refused (StaleDirector, nothing written) if a newer one has acted."""
        row = (table_id, settings, host, code, json.dumps(sorted(invited)), now_ms, tournament_id)

        def rows(tx: Tx) -> None:
            if director is not None:
                TableStore._fence_director(tx, director)
            tx.execute(
                "INSERT INTO poker_tables (table_id, settings, host, invite_code, invited, created_ms,"
                " tournament_id) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (table_id) DO NOTHING",
                row,
            )

        return self.owned.place(table_id, rows)

    def table_row(self, table_id: str) -> TableRow | None:
        rows = self._rows(
            "SELECT table_id, settings, host, invite_code, invited, tournament_id FROM poker_tables"
            " WHERE table_id = ?",
            (table_id,),
        )
        return TableRow(*_row(rows[0])) if rows else None

    def tables(self) -> list[TableRow]:
        rows = self._rows(
            "SELECT table_id, settings, host, invite_code, invited, tournament_id FROM poker_tables"
            " ORDER BY table_id"
        )
        return [TableRow(*_row(r)) for r in rows]

    def invitations(self, table_id: str) -> list[str]:
        rows = self._rows(
            "SELECT player FROM poker_invitations WHERE table_id = ? ORDER BY player", (table_id,)
        )
        return [str(r[0]) for r in rows]

    def snapshot(self, table_id: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT body FROM poker_snapshots WHERE table_id = ?", (table_id,))
        return dict(json.loads(rows[0][0])) if rows else None

    def hand_log(self, table_id: str) -> list[tuple[str, dict[str, Any]]]:
        rows = self._rows("SELECT op, body FROM poker_hand_log WHERE table_id = ? ORDER BY n", (table_id,))
        return [(str(r[0]), dict(json.loads(r[1]))) for r in rows]

    # The one write path --------------------------------------------------------------------------------

    def commit(self, table_id: str, c: Commit) -> None:
        self.owned.write(table_id, lambda tx: self._apply(tx, table_id, c))

    @staticmethod
    def _apply(tx: Tx, table_id: str, c: Commit) -> None:
        if c.director is not None:
            TableStore._fence_director(tx, c.director)
        if c.log is not None:  # numbered after the table's last entry, in the same statement
            tx.execute(
                "INSERT INTO poker_hand_log (table_id, n, op, body)"
                " SELECT ?, COALESCE(MAX(n), 0) + 1, ?, ? FROM poker_hand_log WHERE table_id = ?",
                (table_id, c.log[0], json.dumps(c.log[1], sort_keys=True), table_id),
            )
        if c.snapshot is not None:
            tx.execute(
                "INSERT INTO poker_snapshots (table_id, body) VALUES (?, ?)"
                " ON CONFLICT (table_id) DO UPDATE SET body = excluded.body",
                (table_id, json.dumps(c.snapshot)),
            )
            tx.execute("DELETE FROM poker_hand_log WHERE table_id = ?", (table_id,))
        tx.executemany(
            "INSERT INTO poker_events (table_id, seq, hand, private_player, body, time_ms)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [(table_id, e.seq, e.hand, e.private_player, e.body, e.time_ms) for e in c.events],
        )
        if c.hand is not None:
            h = c.hand
            tx.execute(
                "INSERT INTO poker_hands (table_id, hand, started_ms, voided, players) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (table_id, hand) DO UPDATE SET started_ms = excluded.started_ms,"
                " voided = excluded.voided, players = excluded.players",
                (table_id, h.hand, h.started_ms, int(h.voided), json.dumps(h.players)),
            )
            tx.executemany(
                "INSERT INTO poker_hand_players (table_id, hand, player, seat, net) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (table_id, hand, player)"
                " DO UPDATE SET seat = excluded.seat, net = excluded.net",
                [(table_id, h.hand, p, seat, net) for p, (seat, net) in c.nets.items()],
            )
        for p in c.payouts:  # in the order they are owed (n), each once (its transfer id)
            tx.execute(
                "INSERT INTO poker_payouts (transfer_id, table_id, player, amount, done, n)"
                " SELECT ?, ?, ?, ?, 0, COALESCE(MAX(n), 0) + 1 FROM poker_payouts WHERE table_id = ?"
                " ON CONFLICT (transfer_id) DO NOTHING",
                (p.transfer_id, table_id, p.player, p.amount, table_id),
            )
        if c.money_done is not None:
            tx.execute(
                "UPDATE poker_money_ops SET done = 1 WHERE table_id = ? AND n = ?", (table_id, c.money_done)
            )
        if c.invited:
            tx.executemany(
                "INSERT INTO poker_invitations (table_id, player) VALUES (?, ?) ON CONFLICT DO NOTHING",
                [(table_id, p) for p in c.invited],
            )
        if c.seated is not None:
            seats.reconcile(tx, KIND, table_id, c.seated)
        if c.request is not None:
            TableStore._save_answer(tx, c.request)

    # Seat claims (services/table/storage/seats.py) ------------------------------------------------------

    def claim_seat(self, table_id: str, player: str, limit: int) -> None:
        """The player's seat at `table_id` claimed, unless they sit at `limit` other tables of any shard
        already (seats.QuotaExceeded): one transaction, through the table's fence."""
        self.owned.write(table_id, lambda tx: seats.claim(tx, KIND, player, table_id, 1, limit))

    def reconcile_seats(self, table_id: str, seated: dict[str, int]) -> None:
        """The table's seat claims become `seated` (its players now), through the table's fence."""
        self.owned.write(table_id, lambda tx: seats.reconcile(tx, KIND, table_id, seated))

    def seat_claims(self, table_id: str) -> dict[str, int]:
        rows = self._rows(
            f"SELECT player, seats FROM {seats.CLAIMS} WHERE kind = ? AND table_id = ?", (KIND, table_id)
        )
        return {str(r[0]): int(r[1]) for r in rows}

    # Money ---------------------------------------------------------------------------------------------

    def begin_money(self, table_id: str, player: str, amount: int, hold_id_of: Any) -> tuple[int, str]:
        """Log a buy-in about to be asked of the wallet; returns its number and hold id."""

        def work(tx: Tx) -> tuple[int, str]:
            row = tx.execute(
                "SELECT COALESCE(MAX(n), 0) FROM poker_money_ops WHERE table_id = ?", (table_id,)
            ).fetchone()
            n = int(row[0]) + 1
            hold_id = str(hold_id_of(n))
            tx.execute(
                "INSERT INTO poker_money_ops (table_id, n, hold_id, player, amount, done)"
                " VALUES (?, ?, ?, ?, ?, 0)",
                (table_id, n, hold_id, player, amount),
            )
            return n, hold_id

        return self.owned.write(table_id, work)

    def end_money(self, table_id: str, n: int) -> None:
        self.owned.write(
            table_id,
            lambda tx: tx.execute(
                "UPDATE poker_money_ops SET done = 1 WHERE table_id = ? AND n = ?", (table_id, n)
            ),
        )

    def open_money(self, table_id: str) -> list[tuple[int, str, str]]:
        rows = self._rows(
            "SELECT n, hold_id, player FROM poker_money_ops WHERE table_id = ? AND done = 0 ORDER BY n",
            (table_id,),
        )
        return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]

    def open_payouts(self, table_id: str) -> list[Payout]:
        rows = self._rows(
            "SELECT transfer_id, player, amount, attempts, next_at_ms, last_error, refused FROM poker_payouts"
            " WHERE table_id = ? AND done = 0 ORDER BY n",
            (table_id,),
        )
        return [
            Payout(str(r[0]), str(r[1]), int(r[2]), int(r[3]), int(r[4]), str(r[5]), bool(r[6])) for r in rows
        ]

    # Not fenced: these record what the wallet did with a transfer, true whoever records it.

    def payout_done(self, transfer_id: str) -> None:
        self._db.write(
            lambda tx: tx.execute("UPDATE poker_payouts SET done = 1 WHERE transfer_id = ?", (transfer_id,))
        )

    def payout_failed(
        self, transfer_id: str, attempts: int, next_at_ms: int, error: str, refused: bool
    ) -> None:
        self._db.write(
            lambda tx: tx.execute(
                "UPDATE poker_payouts SET attempts = ?, next_at_ms = ?, last_error = ?, refused = ?"
                " WHERE transfer_id = ?",
                (attempts, next_at_ms, error[:200], int(refused), transfer_id),
            )
        )

    def paid(self, transfer_ids: list[str]) -> set[str]:
        """Those of the transfer ids whose payout the wallet has taken."""
        marks = ", ".join("?" * len(transfer_ids))
        rows = self._rows(
            f"SELECT transfer_id FROM poker_payouts WHERE done = 1 AND transfer_id IN ({marks})", transfer_ids
        )
        return {str(r[0]) for r in rows}

    def pending_payouts(self) -> tuple[int, int, int]:
        """(open payouts, their chips, those the wallet refused at their last attempt), every table."""
        rows = self._rows(
            "SELECT COUNT(*), COALESCE(SUM(amount), 0), COALESCE(SUM(refused), 0) FROM poker_payouts"
            " WHERE done = 0"
        )
        return int(rows[0][0]), int(rows[0][1]), int(rows[0][2])

    # Events and histories --------------------------------------------------------------------------------

    def last_seq(self, table_id: str) -> int:
        rows = self._rows("SELECT MAX(seq) FROM poker_events WHERE table_id = ?", (table_id,))
        return int(rows[0][0] or 0)

    def events(
        self, table_id: str, from_seq: int, to_seq: int | None = None, hand: int | None = None
    ) -> list[StoredEvent]:
        query = (
            "SELECT seq, hand, private_player, body, time_ms FROM poker_events"
            " WHERE table_id = ? AND seq >= ?"
        )
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
            "SELECT started_ms, voided, players FROM poker_hands WHERE table_id = ? AND hand = ?",
            (table_id, hand),
        )
        if not rows:
            return None
        players = {int(k): str(v) for k, v in json.loads(rows[0][2]).items()}
        return HandRow(table_id, hand, int(rows[0][0]), bool(rows[0][1]), players)

    def net_of(self, table_id: str, hand: int, player: str) -> int | None:
        rows = self._rows(
            "SELECT net FROM poker_hand_players WHERE table_id = ? AND hand = ? AND player = ?",
            (table_id, hand, player),
        )
        return int(rows[0][0]) if rows else None

    def played_at(self, table_id: str, player: str) -> bool:
        """Whether the player was dealt a finished hand at the table."""
        rows = self._rows(
            "SELECT 1 FROM poker_hand_players WHERE player = ? AND table_id = ? LIMIT 1", (player, table_id)
        )
        return bool(rows)

    def hands_of(self, table_id: str, player: str | None, before: int, limit: int) -> list[HandRow]:
        """Finished hands, newest first, below hand number `before`: the player's (None: all)."""
        if player is None:
            rows = self._rows(
                "SELECT hand FROM poker_hands WHERE table_id = ? AND hand < ? ORDER BY hand DESC LIMIT ?",
                (table_id, before, limit),
            )
        else:
            rows = self._rows(
                "SELECT hand FROM poker_hand_players WHERE table_id = ? AND player = ? AND hand < ?"
                " ORDER BY hand DESC LIMIT ?",
                (table_id, player, before, limit),
            )
        found = [self.hand(table_id, int(r[0])) for r in rows]
        return [h for h in found if h is not None]

    def hands_played(
        self, player: str, table_id: str | None, after: tuple[int, str, int] | None, limit: int
    ) -> list[tuple[HandRow, int]]:
        """The player's finished hands that were not voided, with their net, newest first by (start,
        table, hand): every table's, or `table_id`'s; those after `after` (a page's last, in that order)."""
        query = (
            "SELECT h.table_id, h.hand, h.started_ms, h.voided, h.players, p.net"
            " FROM poker_hand_players p JOIN poker_hands h ON h.table_id = p.table_id AND h.hand = p.hand"
            " WHERE p.player = ? AND h.voided = 0"
        )
        args: list[Any] = [player]
        if table_id is not None:
            query += " AND p.table_id = ?"
            args.append(table_id)
        if after is not None:
            started, table, hand = after
            query += (
                " AND (h.started_ms < ? OR (h.started_ms = ? AND"
                " (h.table_id < ? OR (h.table_id = ? AND h.hand < ?))))"
            )
            args += [started, started, table, table, hand]
        query += " ORDER BY h.started_ms DESC, h.table_id DESC, h.hand DESC LIMIT ?"
        rows = self._rows(query, [*args, limit])
        return [
            (
                HandRow(
                    str(r[0]),
                    int(r[1]),
                    int(r[2]),
                    bool(r[3]),
                    {int(k): str(v) for k, v in json.loads(r[4]).items()},
                ),
                int(r[5]),
            )
            for r in rows
        ]

    # Tournament directors' epochs (issue 25) --------------------------------------------------------------

    def director_epoch(self, tournament_id: str) -> int:
        """The highest director epoch any shard has seen for the tournament (0: none yet)."""
        rows = self._rows("SELECT epoch FROM poker_director_epochs WHERE tournament_id = ?", (tournament_id,))
        return int(rows[0][0]) if rows else 0

    def raise_director_epoch(self, tournament_id: str, epoch: int) -> int:
        """Remember `epoch` for the tournament unless a higher one is there; the floor after (> `epoch`:
        a newer director has acted, at this shard or another)."""

        def work(tx: Tx) -> int:
            row = tx.execute(
                "INSERT INTO poker_director_epochs (tournament_id, epoch) VALUES (?, ?)"
                " ON CONFLICT (tournament_id) DO UPDATE SET epoch = CASE"
                " WHEN excluded.epoch > poker_director_epochs.epoch THEN excluded.epoch"
                " ELSE poker_director_epochs.epoch END RETURNING epoch",
                (tournament_id, epoch),
            ).fetchone()
            return int(row[0])

        return self._db.write(work)

    @staticmethod
    def _fence_director(tx: Tx, fence: DirectorFence) -> None:
        """The STALE_DIRECTOR check inside the transaction of the instruction's own write (issue 25).

        The floor row is read share-locked (PostgreSQL; SQLite has one writer at a time), so a newer
        director's raise of it (`raise_director_epoch`, an UPDATE) waits until this transaction has
        committed, and a raise committed before it is seen here: an instruction is written before the floor
        passes its epoch, or not at all. Checking outside the transaction left a window: a raise committed
        between the check and the write let a stale director's instruction land after the new director's.
        Share locks do not block each other, so the tournament's tables still commit side by side."""
        row = tx.execute(
            "SELECT epoch FROM poker_director_epochs WHERE tournament_id = ?" + lock_clause(tx, "share"),
            (fence.tournament_id,),
        ).fetchone()
        floor = int(row[0]) if row is not None else 0
        if fence.epoch < floor:
            raise StaleDirector(fence.tournament_id, fence.epoch, floor)
        if fence.epoch > floor:  # not raised before the write (the servicer raises it first): here, then
            row = tx.execute(
                "INSERT INTO poker_director_epochs (tournament_id, epoch) VALUES (?, ?)"
                " ON CONFLICT (tournament_id) DO UPDATE SET epoch = CASE"
                " WHEN excluded.epoch > poker_director_epochs.epoch THEN excluded.epoch"
                " ELSE poker_director_epochs.epoch END RETURNING epoch",
                (fence.tournament_id, fence.epoch),
            ).fetchone()
            if int(row[0]) > fence.epoch:
                raise StaleDirector(fence.tournament_id, fence.epoch, int(row[0]))

    # Idempotent requests ---------------------------------------------------------------------------------

    def response(self, key: str) -> Saved | None:
        rows = self._rows("SELECT fingerprint, response FROM poker_requests WHERE key = ?", (key,))
        return Saved(str(rows[0][0]), bytes(rows[0][1])) if rows else None

    def save_response(self, answer: Answer) -> None:
        """The answer of a request that wrote nothing of its own (a refusal, a read): not a table's log."""
        self._db.write(lambda tx: self._save_answer(tx, answer))

    @staticmethod
    def _save_answer(tx: Tx, a: Answer) -> None:
        tx.execute(
            "INSERT INTO poker_requests (key, response, fingerprint, created_ms) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (key) DO UPDATE SET response = excluded.response,"
            " fingerprint = excluded.fingerprint, created_ms = excluded.created_ms",
            (a.key, a.saved.response, a.saved.fingerprint, a.at_ms),
        )

    def prune_requests(self, before_ms: int, limit: int = 10_000) -> int:
        """Drop up to `limit` answers older than `before_ms`; returns how many went."""

        def work(tx: Tx) -> int:
            cursor = tx.execute(
                "DELETE FROM poker_requests WHERE key IN"
                " (SELECT key FROM poker_requests WHERE created_ms < ? ORDER BY created_ms LIMIT ?)",
                (before_ms, limit),
            )
            return int(cursor.rowcount)

        return self._db.write(work)
