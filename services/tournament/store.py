"""The tournament service's store: SQLite under FELT_DATA_DIR (WAL, synchronous=FULL) or PostgreSQL
(`TOURNAMENT_DATABASE_URL=postgresql://...`; its tables prefixed `tn_`, so it may share a database with
the table service), one schema for both, written in one transaction per change.

The shape of the table service's log (services/table/storage), without importing it:

- `tn_tournaments`: one row per tournament (its definition, its service-side data as JSON, its state name);
- `tn_maps`: the parts of that data that grow with the field (entries, tables, watch), a row per key, so a
  change writes what it touched (services/tournament/maps.py);
- `tn_commands`: the append-only log of the director's commands (with the draws they used) — replaying them
  on the last snapshot rebuilds the director exactly; each with the epoch of the lease it was written under;
- `tn_snapshots`: the director's state every SNAPSHOT_EVERY commands (a pickle of the pure core's state);
- `tn_events`: the numbered TournamentEvent messages (WatchTournament reads them);
- `tn_outbox`: the steps the change asked for, to the tables (TableDirectorService) and the wallet, each
  with its deterministic request id, done in order (the table-local steps of different tables
  concurrently) and marked done; a restart does the rest again;
- `tn_intents`: a wallet hold asked before its registration commits (released at restart if it never did);
- `tn_answers`: first answers of mutating RPCs by caller-scoped request key (servicekit.idempotency);
- `tn_leases`, `tn_replicas` (issue 25): which replica owns each tournament (servicekit.leases, the table
  shards' mechanism): every write of a tournament's rows passes its lease's fence in the same transaction
  (`TournamentStore.leases`, set by the service), so a replica that lost a tournament commits nothing for it.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from servicekit.leases import Leases
from servicekit.schema import MIGRATE_AT_START, SchemaPolicy, await_schema, describe
from servicekit.sqlstore import Dialect

from services.tournament.maps import IN_ROWS, MAPS

T = TypeVar("T")
SNAPSHOT_EVERY = 200
SQLITE_FILE = "tournaments.sqlite3"  # in the data directory, unless TOURNAMENT_DATABASE_URL names one

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS tn_tournaments (
        tournament_id TEXT PRIMARY KEY, created_ms BIGINT NOT NULL, format TEXT NOT NULL,
        state TEXT NOT NULL, data TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS tn_commands (
        tournament_id TEXT NOT NULL, n BIGINT NOT NULL, command TEXT NOT NULL,
        PRIMARY KEY (tournament_id, n))""",
    """CREATE TABLE IF NOT EXISTS tn_snapshots (
        tournament_id TEXT PRIMARY KEY, n BIGINT NOT NULL, state BYTEA NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS tn_events (
        tournament_id TEXT NOT NULL, seq BIGINT NOT NULL, event BYTEA NOT NULL,
        PRIMARY KEY (tournament_id, seq))""",
    """CREATE TABLE IF NOT EXISTS tn_outbox (
        tournament_id TEXT NOT NULL, n BIGINT NOT NULL, step TEXT NOT NULL, done INTEGER NOT NULL,
        PRIMARY KEY (tournament_id, n))""",
    """CREATE TABLE IF NOT EXISTS tn_intents (
        tournament_id TEXT NOT NULL, n BIGINT NOT NULL, player TEXT NOT NULL, hold TEXT NOT NULL,
        status TEXT NOT NULL, PRIMARY KEY (tournament_id, n))""",
    """CREATE TABLE IF NOT EXISTS tn_answers (
        request_key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, response BYTEA NOT NULL,
        saved_ms BIGINT NOT NULL)""",
)


# Version 1: the tables as the service created them before it kept versions (IF NOT EXISTS: a store of
# that time is brought to version 1 by recording it). A migration is never edited once released.
LEASES = (
    """CREATE TABLE IF NOT EXISTS tn_leases (
        kind TEXT NOT NULL, tournament_id TEXT NOT NULL, owner TEXT, incarnation TEXT,
        epoch BIGINT NOT NULL, expires_ms BIGINT NOT NULL, PRIMARY KEY (kind, tournament_id))""",
    """CREATE TABLE IF NOT EXISTS tn_replicas (
        replica_id TEXT PRIMARY KEY, incarnation TEXT NOT NULL, address TEXT NOT NULL,
        internal_address TEXT NOT NULL DEFAULT '', heartbeat_ms BIGINT NOT NULL,
        draining INTEGER NOT NULL DEFAULT 0, web_url TEXT NOT NULL DEFAULT '')""",
    "CREATE INDEX IF NOT EXISTS tn_leases_owner ON tn_leases (owner, expires_ms)",
)
# Version 3: each command row carries the fencing epoch of the lease it was written under (0: written
# unfenced or before the epoch), so the log itself shows one director at a time: epochs never go down.
COMMAND_EPOCHS = ("ALTER TABLE tn_commands ADD COLUMN epoch BIGINT NOT NULL DEFAULT 0",)
# Version 4: the data's maps that grow with the field, a row per key (services/tournament/maps.py); a
# tournament written before keeps them in its JSON until its next change writes them here.
MAP_ROWS = (
    """CREATE TABLE IF NOT EXISTS tn_maps (
        tournament_id TEXT NOT NULL, map TEXT NOT NULL, k TEXT NOT NULL, v TEXT NOT NULL,
        PRIMARY KEY (tournament_id, map, k))""",
)
MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (1, SCHEMA),
    (2, LEASES),
    (3, COMMAND_EPOCHS),
    (4, MAP_ROWS),
)
VERSION_TABLE = "tn_schema_migrations"
# Any constant: serialises the migrations of replicas starting together and `felt migrate` (the wallet's
# and the table service's locks are other numbers).
ADVISORY_LOCK = 7_426_030


class Tx(Protocol):
    dialect: Dialect

    def execute(self, sql: str, args: Sequence[Any] = ()) -> Any: ...

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...


class _SqliteTx:
    dialect: Dialect = "sqlite"

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def execute(self, sql: str, args: Sequence[Any] = ()) -> Any:
        return self._db.execute(sql, tuple(args))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self._db.executemany(sql, rows)


class _Sqlite:
    dialect: Dialect = "sqlite"

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = self._path = path
        self._lock = threading.Lock()
        self._db = self._connect()
        self._local = threading.local()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(str(self._path), check_same_thread=False, isolation_level=None, timeout=30)
        db.execute("PRAGMA busy_timeout=30000")
        if str(db.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
            db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        return db

    def write(self, work: Callable[[Tx], T]) -> T:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                result = work(_SqliteTx(self._db))
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            return result

    def read(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = self._connect()
        return list(db.execute(sql, tuple(args)).fetchall())

    def close(self) -> None:
        with self._lock:
            self._db.close()


class _Postgres:
    dialect: Dialect = "postgres"

    def __init__(self, url: str, pool_size: int = 4) -> None:
        from psycopg_pool import ConnectionPool
        from servicekit.postgres import configure_session

        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True},  # reads are single statements; writes are `conn.transaction()`
            configure=configure_session,  # a stopped process never keeps its rows locked
            open=True,
        )

    def write(self, work: Callable[[Tx], T]) -> T:
        from servicekit.postgres import placeholders, whole_statements

        with self._pool.connection() as conn, conn.transaction():

            class _Tx:
                dialect: Dialect = "postgres"

                def execute(self, sql: str, args: Sequence[Any] = ()) -> Any:
                    return conn.execute(placeholders(sql), tuple(args))

                def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
                    for statement, args in whole_statements(sql, rows):  # never a pipeline: see there
                        conn.execute(statement, args)

            return work(_Tx())

    def read(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        import psycopg
        from servicekit.postgres import placeholders

        try:
            with self._pool.connection() as conn:
                return list(conn.execute(placeholders(sql), tuple(args)).fetchall())
        except psycopg.OperationalError:
            # A pooled connection the server closed meanwhile (this process was stopped past the
            # session's idle-in-transaction timeout): the pool drops it; a read is safe to ask again.
            with self._pool.connection() as conn:
                return list(conn.execute(placeholders(sql), tuple(args)).fetchall())

    def close(self) -> None:
        self._pool.close()


@dataclass
class Change:
    """What one director step writes, all or nothing."""

    tournament_id: str
    state: str  # the phase after the change
    data: dict[str, Any]  # the tournament row's service-side data after the change
    command: tuple[int, str] | None = None  # (n, encoded command with its draws)
    events: Sequence[tuple[int, bytes]] = ()  # (seq, serialized TournamentEvent)
    outbox: Sequence[tuple[int, str]] = ()  # (n, encoded step)
    snapshot: tuple[int, bytes] | None = None  # (commands applied, pickled state)
    intent_done: tuple[int, str] | None = None  # (intent number, status)
    answer: tuple[str, str, bytes, int] | None = None  # (request key, fingerprint, response, ms)
    # The keys of each map the change touched (maps.changed_keys); None: write every key.
    touched: dict[str, set[str]] | None = None


class TournamentStore:
    def __init__(
        self,
        path: Path,
        database_url: str = "",
        pool_size: int = 4,
        schema: SchemaPolicy = MIGRATE_AT_START,
    ) -> None:
        self._db = _open(path, database_url, pool_size)
        # The fence of every write of a tournament's rows (the service sets it; None: unfenced, tests of
        # the store alone).
        self.leases: Leases | None = None
        try:
            if schema.external:
                where = describe(database_url) if isinstance(self._db, _Postgres) else str(self._db.path)
                await_schema("tournament", where, lambda: _missing(self._db), schema)
            else:
                _migrate(self._db, _now_ms())
        except BaseException:
            self._db.close()
            raise

    def close(self) -> None:
        self._db.close()

    @property
    def database(self) -> _Sqlite | _Postgres:
        """The store's database (servicekit.sqlstore.Database): the leases live in it too."""
        return self._db

    def _write(self, tournament_id: str, work: Callable[[Tx], T]) -> T:
        """One transaction of a tournament's rows, through its lease's fence when the service set one."""
        if self.leases is None:
            return self._db.write(work)
        return self.leases.write(tournament_id, work)

    # ---------------------------------------------------------------- writes

    def create(
        self,
        tournament_id: str,
        created_ms: int,
        fmt: str,
        state: str,
        data: dict[str, Any],
        answer: tuple[str, str, bytes, int] | None,
        events: Sequence[tuple[int, bytes]] = (),
        here: bool = True,
    ) -> str:
        """A new tournament's row, with the events of its creation (a scheduled one created with its
        registration already open: RegistrationOpened) and the RPC's answer; with leases, its lease too,
        given to this replica (`here`) or to the live replica with the fewest: that replica's id."""

        def work(tx: Tx) -> None:
            tx.execute(
                "INSERT INTO tn_tournaments (tournament_id, created_ms, format, state, data)"
                " VALUES (?, ?, ?, ?, ?)",
                (tournament_id, created_ms, fmt, state, _small_json(data)),
            )
            _write_maps(tx, tournament_id, data, None)
            for seq, event in events:
                tx.execute(
                    "INSERT INTO tn_events (tournament_id, seq, event) VALUES (?, ?, ?)",
                    (tournament_id, seq, event),
                )
            if answer is not None:
                _save_answer(tx, answer)

        if self.leases is None:
            self._db.write(work)
            return ""
        # Its lease in the same transaction: a tournament never exists without an owner.
        return self.leases.place(tournament_id, work, here=here)

    def commit(self, change: Change) -> None:
        def work(tx: Tx) -> None:
            tx.execute(
                "UPDATE tn_tournaments SET state = ?, data = ? WHERE tournament_id = ?",
                (change.state, _small_json(change.data), change.tournament_id),
            )
            tid = change.tournament_id
            _write_maps(tx, tid, change.data, change.touched)
            if change.command is not None:
                # The lease's epoch, read in the transaction the fence checked it in: the writer's own.
                tx.execute(
                    "INSERT INTO tn_commands (tournament_id, n, command, epoch) VALUES (?, ?, ?, COALESCE("
                    "(SELECT epoch FROM tn_leases WHERE kind = 'tournament' AND tournament_id = ?), 0))",
                    (tid, *change.command, tid),
                )
            # A statement of many rows (servicekit.postgres.whole_statements), not one per row: a big
            # field's start writes ~10,000 events and seating steps, and a statement per row kept the
            # transaction, and the lease row it share-locks, open for tens of seconds under load.
            if change.events:
                tx.executemany(
                    "INSERT INTO tn_events (tournament_id, seq, event) VALUES (?, ?, ?)",
                    [(tid, seq, event) for seq, event in change.events],
                )
            if change.outbox:
                tx.executemany(
                    "INSERT INTO tn_outbox (tournament_id, n, step, done) VALUES (?, ?, ?, ?)",
                    [(tid, n, step, 0) for n, step in change.outbox],
                )
            if change.snapshot is not None:
                tx.execute(
                    "INSERT INTO tn_snapshots (tournament_id, n, state) VALUES (?, ?, ?)"
                    " ON CONFLICT (tournament_id) DO UPDATE SET n = excluded.n, state = excluded.state",
                    (tid, *change.snapshot),
                )
            if change.intent_done is not None:
                tx.execute(
                    "UPDATE tn_intents SET status = ? WHERE tournament_id = ? AND n = ?",
                    (change.intent_done[1], tid, change.intent_done[0]),
                )
            if change.answer is not None:
                _save_answer(tx, change.answer)

        self._write(change.tournament_id, work)

    def save_data(self, tournament_id: str, state: str, data: dict[str, Any]) -> None:
        """The service-side data without its maps (a reservation made before the commands it prepares):
        data whose maps are still in its JSON is written whole, as it was."""
        text = _small_json(data) if data.get(IN_ROWS) else json.dumps(data)
        self._write(
            tournament_id,
            lambda tx: tx.execute(
                "UPDATE tn_tournaments SET state = ?, data = ? WHERE tournament_id = ?",
                (state, text, tournament_id),
            ),
        )

    def add_intent(self, tournament_id: str, n: int, player: str, hold: str) -> None:
        self._write(
            tournament_id,
            lambda tx: tx.execute(
                "INSERT INTO tn_intents (tournament_id, n, player, hold, status)"
                " VALUES (?, ?, ?, ?, 'PENDING')",
                (tournament_id, n, player, hold),
            ),
        )

    def set_intent(self, tournament_id: str, n: int, status: str) -> None:
        self._write(
            tournament_id,
            lambda tx: tx.execute(
                "UPDATE tn_intents SET status = ? WHERE tournament_id = ? AND n = ?",
                (status, tournament_id, n),
            ),
        )

    def mark_done(self, tournament_id: str, n: int) -> None:
        self._write(
            tournament_id,
            lambda tx: tx.execute(
                "UPDATE tn_outbox SET done = 1 WHERE tournament_id = ? AND n = ?", (tournament_id, n)
            ),
        )

    def mark_done_many(self, tournament_id: str, ns: Sequence[int]) -> None:
        """The done marks of several steps (one wave of the pump) in one transaction."""

        def work(tx: Tx) -> None:
            for n in ns:
                tx.execute(
                    "UPDATE tn_outbox SET done = 1 WHERE tournament_id = ? AND n = ?", (tournament_id, n)
                )

        if ns:
            self._write(tournament_id, work)

    def save_answer(self, tournament_id: str, answer: tuple[str, str, bytes, int]) -> None:
        self._write(tournament_id, lambda tx: _save_answer(tx, answer))

    # ---------------------------------------------------------------- reads

    def answer(self, key: str) -> tuple[str, bytes] | None:
        rows = self._db.read("SELECT fingerprint, response FROM tn_answers WHERE request_key = ?", (key,))
        return (str(rows[0][0]), bytes(rows[0][1])) if rows else None

    def tournament_ids(self) -> list[str]:
        return [str(r[0]) for r in self._db.read("SELECT tournament_id FROM tn_tournaments")]

    def tournament(self, tournament_id: str) -> tuple[int, str, dict[str, Any]] | None:
        """(created_ms, state, data) of one tournament, as last committed: its row and its maps' rows
        read in one statement, so from one commit."""
        rows = self._db.read(
            "SELECT 0, created_ms, state, data, '' FROM tn_tournaments WHERE tournament_id = ?"
            " UNION ALL SELECT 1, 0, map, k, v FROM tn_maps WHERE tournament_id = ?",
            (tournament_id, tournament_id),
        )
        head = next((r for r in rows if int(r[0]) == 0), None)
        if head is None:
            return None
        data: dict[str, Any] = json.loads(head[3])
        if data.get(IN_ROWS):
            maps: dict[str, dict[str, Any]] = {name: {} for name in MAPS}
            for _, _, name, key, value in rows:
                if name in maps:
                    maps[str(name)][str(key)] = json.loads(value)
            data.update(maps)
        return int(head[1]), str(head[2]), data

    def snapshot(self, tournament_id: str) -> tuple[int, bytes] | None:
        rows = self._db.read("SELECT n, state FROM tn_snapshots WHERE tournament_id = ?", (tournament_id,))
        return (int(rows[0][0]), bytes(rows[0][1])) if rows else None

    def commands(self, tournament_id: str, after: int) -> list[tuple[int, str]]:
        rows = self._db.read(
            "SELECT n, command FROM tn_commands WHERE tournament_id = ? AND n > ? ORDER BY n",
            (tournament_id, after),
        )
        return [(int(r[0]), str(r[1])) for r in rows]

    def events(self, tournament_id: str, from_seq: int, limit: int = 256) -> list[tuple[int, bytes]]:
        rows = self._db.read(
            "SELECT seq, event FROM tn_events WHERE tournament_id = ? AND seq >= ? ORDER BY seq LIMIT ?",
            (tournament_id, from_seq, limit),
        )
        return [(int(r[0]), bytes(r[1])) for r in rows]

    def pending_steps(self, tournament_id: str) -> list[tuple[int, str]]:
        rows = self._db.read(
            "SELECT n, step FROM tn_outbox WHERE tournament_id = ? AND done = 0 ORDER BY n", (tournament_id,)
        )
        return [(int(r[0]), str(r[1])) for r in rows]

    def pending_intents(self, tournament_id: str) -> list[tuple[int, str]]:
        rows = self._db.read(
            "SELECT n, hold FROM tn_intents WHERE tournament_id = ? AND status = 'PENDING' ORDER BY n",
            (tournament_id,),
        )
        return [(int(r[0]), str(r[1])) for r in rows]


def _small_json(data: dict[str, Any]) -> str:
    """The tournament row's JSON: the data without its maps (their rows hold them)."""
    return json.dumps({**{k: v for k, v in data.items() if k not in MAPS}, IN_ROWS: True})


def _write_maps(
    tx: Tx, tournament_id: str, data: dict[str, Any], touched: dict[str, set[str]] | None
) -> None:
    """The rows of the maps' keys a change touched (every key when `touched` is None)."""
    for name in MAPS:
        values: dict[str, Any] = data.get(name) or {}
        if touched is None:
            tx.execute("DELETE FROM tn_maps WHERE tournament_id = ? AND map = ?", (tournament_id, name))
            keys: set[str] | list[str] = list(values)
        else:
            keys = touched.get(name, set())
        gone = [(tournament_id, name, k) for k in keys if k not in values]
        kept = [(tournament_id, name, k, json.dumps(values[k])) for k in keys if k in values]
        if gone:
            tx.executemany("DELETE FROM tn_maps WHERE tournament_id = ? AND map = ? AND k = ?", gone)
        if kept:
            tx.executemany(
                "INSERT INTO tn_maps (tournament_id, map, k, v) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (tournament_id, map, k) DO UPDATE SET v = excluded.v",
                kept,
            )


def _save_answer(tx: Tx, answer: tuple[str, str, bytes, int]) -> None:
    tx.execute(
        "INSERT INTO tn_answers (request_key, fingerprint, response, saved_ms) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (request_key) DO NOTHING",
        answer,
    )


def _open(path: Path, database_url: str, pool_size: int) -> _Sqlite | _Postgres:
    if database_url.startswith(("postgresql://", "postgres://")):
        return _Postgres(database_url, pool_size)
    if database_url.startswith("sqlite:///"):
        return _Sqlite(Path(database_url.removeprefix("sqlite:///")))
    if database_url:
        raise ValueError("TOURNAMENT_DATABASE_URL: use postgresql://... or sqlite:///path")
    return _Sqlite(path)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _applied(db: _Sqlite | _Postgres, tx: Tx | None = None) -> set[int]:
    if isinstance(db, _Postgres):
        probe = f"SELECT to_regclass('{VERSION_TABLE}') IS NOT NULL"
    else:
        probe = (
            f"SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '{VERSION_TABLE}')"
        )
    if tx is not None:
        present = bool(tx.execute(probe).fetchone()[0])
        rows = tx.execute(f"SELECT version FROM {VERSION_TABLE}").fetchall() if present else []
    else:
        present = bool(db.read(probe)[0][0])
        rows = db.read(f"SELECT version FROM {VERSION_TABLE}") if present else []
    return {int(r[0]) for r in rows}


def _missing(db: _Sqlite | _Postgres) -> list[str]:
    done = _applied(db)
    return [f"tournament {version}" for version, _ in MIGRATIONS if version not in done]


def _migrate(db: _Sqlite | _Postgres, now_ms: int) -> list[int]:
    """Apply what is pending in one transaction under a lock (PostgreSQL: an advisory lock; SQLite: its
    write lock, BEGIN IMMEDIATE), recorded in tn_schema_migrations: replicas that start together take turns
    and each finds what the one before applied."""
    blob = "BLOB" if isinstance(db, _Sqlite) else "BYTEA"

    def work(tx: Tx) -> list[int]:
        if isinstance(db, _Postgres):
            tx.execute("SELECT pg_advisory_xact_lock(?)", (ADVISORY_LOCK,))
        tx.execute(
            f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE}"
            " (version INTEGER PRIMARY KEY, applied_ms BIGINT NOT NULL)"
        )
        done = _applied(db, tx)
        applied = []
        for version, statements in MIGRATIONS:
            if version in done:
                continue
            for statement in statements:
                tx.execute(statement.replace("BYTEA", blob))
            tx.execute(f"INSERT INTO {VERSION_TABLE} (version, applied_ms) VALUES (?, ?)", (version, now_ms))
            applied.append(version)
        return applied

    return db.write(work)


def migrate_database(path: Path, database_url: str = "") -> list[str]:
    """`felt migrate`: the tournament store at this release's schema; the migrations it applied."""
    db = _open(path, database_url, pool_size=1)
    try:
        return [f"tournament {version}" for version in _migrate(db, _now_ms())]
    finally:
        db.close()
