"""The poker tables of one table-service process: loading and creating tables, recovery, the clock threads.

One of several shards (`store.owned.sharded`): the room holds only the tables whose lease this shard
holds. The lease keeper tells it which tables it gained (loaded from the log, recovered by the clock: the
hand in progress resumes with the same shoe or is voided, chips returned) and lost (dropped from memory,
its streams ended with where to resume); a call for a table it does not hold is refused with where the
table is (services/table/routing.py). New tables go to the shard with the fewest.
"""

from __future__ import annotations

import secrets
import threading
import time
import uuid
import zlib
from collections.abc import Iterator
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import contextmanager
from typing import NoReturn

import prometheus_client
from poker.table.v1 import table_service_pb2 as pb
from servicekit import errors
from servicekit.logging import get_logger

from services.table.poker import payouts
from services.table.poker.cards import Dealer
from services.table.poker.clock import TableClock
from services.table.poker.money import Escrow
from services.table.poker.runtime import ClockMs, Options, PokerTable
from services.table.poker.store import REQUEST_RETENTION_MS, DirectorFence, TableStore
from services.table.poker.tables import PublicTable
from services.table.routing import is_mine, moved, place_of
from services.table.schedule import Deadlines
from services.table.storage.seats import QuotaExceeded

RETRY_MS = 1_000
MAX_SEATS_PER_PLAYER = 24  # tables a player sits at at once (multi-tabling), so one cannot fill the lobby
CLOCK_THREADS = 4
# Answers to requests older than a day are dropped every 10 s, in writes of 5,000 rows (up to 4 a round,
# 2,000 a second: more than the answers a busy service stores), so no write holds the others up for long.
PRUNE_EVERY_MS = 10_000
PRUNE_BATCH = 5_000
PRUNE_BATCHES = 4
REMOTE_CACHE_SECONDS = 2.0  # the lobby's view of other shards' tables (from their snapshots) is this fresh
# A table's clock runs when something happened at it or one of its deadlines came: with nobody acting, this
# stays still however many tables are open (issue 24).
TICKS = prometheus_client.Counter(
    "poker_table_clock_ticks_total", "Looks of the clock threads at poker tables (due, or woken by a change)."
)


class PokerRoom:
    def __init__(
        self,
        public: list[PublicTable],
        store: TableStore,
        escrow: Escrow,
        dealer: Dealer,
        clock: ClockMs,
        options: Options,
        tick_seconds: float = 0.05,
        closer: Executor | None = None,
        scan_seconds: float | None = None,
    ) -> None:
        """`clock`: the tables' clock (integer ms) for everything timed here, retries included.
        `closer`: where finished hands' shoes are closed (a one-thread pool by default, off every
        command's path; a simulation passes an executor that runs them in turn, deterministically)."""
        self.store = store
        self.sharded = store.owned.sharded
        self.shard = store.owned.leases.shard
        self._scan_seconds = scan_seconds
        self._remote: dict[str, PokerTable] = {}
        self._remote_at = 0.0
        self._remote_lock = threading.Lock()
        self._escrow = escrow
        self._dealer = dealer
        self._clock = clock
        self._options = options
        self._tick_seconds = tick_seconds
        self.lock = threading.RLock()
        self._retry_at: dict[str, int] = {}  # a table whose tick failed waits until then (ms, `clock`)
        # Each clock thread's tables by when they next need their clock: a round looks at the earliest
        # deadlines only, so a table where nothing happens costs nothing between its deadlines.
        self._deadlines = [Deadlines() for _ in range(CLOCK_THREADS)]
        self._next_prune_ms = 0
        self._stop = threading.Event()
        # Several clock threads, each ticking the tables of its share that are due: most of a tick is
        # waiting (SQLite's fsync, the wallet, the dealer), so one thread would make every table wait.
        self._threads = [
            threading.Thread(target=self._run, args=(k,), name=f"poker-clock-{k}", daemon=True)
            for k in range(CLOCK_THREADS)
        ]
        self._log = get_logger(service="table")
        self._closer = closer or ThreadPoolExecutor(max_workers=1, thread_name_prefix="poker-shoe-close")
        known = {row.table_id for row in store.tables()}
        for table in public:
            if table.table_id not in known:
                store.add_table(table.table_id, table.settings.SerializeToString(), "", "", [], clock())
        self.tables: dict[str, PokerTable] = {}
        self._clocks: dict[str, TableClock] = {}
        for row in store.tables():
            if self.sharded and not store.owned.holds(row.table_id):
                continue  # another shard's
            settings = pb.TableSettings.FromString(row.settings)
            self._add(
                self._runtime(
                    row.table_id, settings, row.host, row.invite_code, row.invited, row.tournament_id
                )
            )

    def _runtime(
        self,
        table_id: str,
        settings: pb.TableSettings,
        host: str,
        code: str,
        invited: list[str],
        tournament_id: str = "",
        address: str | None = None,
    ) -> PokerTable:
        table = PokerTable(
            table_id,
            settings,
            host,
            code,
            invited,
            self.store,
            self._escrow,
            self._dealer,
            self._clock,
            self._options,
            self._closer,
            tournament_id=tournament_id,
        )
        table.shard_address = self.shard.address if address is None else address
        return table

    def _add(self, table: PokerTable) -> None:
        table_id = table.table_id
        deadlines = self._deadlines_of(table_id)
        with self.lock:
            self._clocks[table_id] = TableClock(table, self._dealer, self._options)
            self.tables[table_id] = table
            table.wake_clock = lambda: deadlines.wake(table_id)
        deadlines.wake(table_id)  # its first tick recovers it and looks at everything

    def _deadlines_of(self, table_id: str) -> Deadlines:
        return self._deadlines[zlib.crc32(table_id.encode()) % CLOCK_THREADS]

    def start(self) -> None:
        payouts.watch(self.store)
        for thread in self._threads:
            thread.start()
        self.store.owned.run(self._gained, self._lost, self._give_away, interval_s=self._scan_seconds)

    # Shards ----------------------------------------------------------------------------------------------

    def _load(self, table_id: str) -> PokerTable | None:
        """A table this shard just got, from the log (recovered by its clock or its first call)."""
        with self.lock:
            table = self.tables.get(table_id)
            if table is not None:
                return table
            row = self.store.table_row(table_id)
            if row is None:
                return None
            settings = pb.TableSettings.FromString(row.settings)
            table = self._runtime(
                row.table_id, settings, row.host, row.invite_code, row.invited, row.tournament_id
            )
            self._add(table)
        self._log.info("poker_table_gained", table_id=table_id, shard=self.shard.shard_id)
        return table

    def _gained(self, table_ids: list[str]) -> None:
        for table_id in table_ids:
            try:
                self._load(table_id)
            except Exception as exc:  # the store is away: the table stays unserved until it answers
                self._log.warning("poker_table_load_failed", table_id=table_id, error=type(exc).__name__)

    def _lost(self, table_ids: list[str]) -> None:
        """Tables another shard serves now (or will): dropped, their streams told to go elsewhere."""
        for table_id in table_ids:
            with self.lock:
                table = self.tables.pop(table_id, None)
                self._clocks.pop(table_id, None)
            self._deadlines_of(table_id).discard(table_id)
            if table is not None:
                table.moved = True
                table.published.wake_all()
                self._log.info("poker_table_lost", table_id=table_id, shard=self.shard.shard_id)

    def _give_away(self, held: list[str]) -> str | None:
        """A table to hand to another shard (this one holds more than its share): between hands, no
        command running (its lock free), preferring one nobody watches; dropped here at once."""
        candidates = sorted(
            (t for t in (self.tables.get(i) for i in held) if t is not None and t.recovered),
            key=lambda t: (sum(t.watchers.values()), t.table_id),
        )
        for table in candidates:
            if table.state.hand_in_progress or not table.lock.acquire(blocking=False):
                continue
            try:
                if table.state.hand_in_progress:
                    continue
                self._lost([table.table_id])
                return table.table_id
            finally:
                table.lock.release()
        return None

    def drain(self) -> list[str]:
        """SIGTERM: stop the clocks and hand every table over (their leases released at once)."""
        self._stop.set()
        for thread in self._threads:
            if thread.is_alive():
                thread.join()
        released = self.store.owned.drain()
        self._lost(list(self.tables))
        return released

    def locate(self, table_id: str) -> PokerTable:
        """A table this shard does not have in memory: loaded when its lease names this process (placed
        here by another shard's CreateTable, before the keeper reported it), else refused with where it is
        (TABLE_MOVED / TABLE_MOVING) or NOT_FOUND when no such table exists."""
        if not self.sharded:
            raise table_not_found(table_id)
        owner = self.store.owned.leases.owner_of(table_id)
        if owner is None:
            raise table_not_found(table_id)
        if is_mine(owner, self.shard) and self.store.owned.acquire_placed(table_id):
            table = self._load(table_id)
            if table is not None:
                return table
        raise moved(table_id, place_of(owner, self.now_wall()))

    def locate_after_move(self, table_id: str, from_seq: int) -> NoReturn:
        """The end of a stream of a table that moved: where it is now, and the event to resume from."""
        owner = self.store.owned.leases.owner_of(table_id)
        raise moved(table_id, place_of(owner, self.now_wall()), from_seq=from_seq)

    @staticmethod
    def now_wall() -> int:
        return time.time_ns() // 1_000_000

    def remote_tables(self) -> list[PokerTable]:
        """Other shards' tables as their snapshots show them (between hands), with their shard's
        address, refreshed every REMOTE_CACHE_SECONDS: for the lobby (ListTables, GetTable)."""
        if not self.sharded:
            return []
        with self._remote_lock:
            if time.monotonic() - self._remote_at < REMOTE_CACHE_SECONDS:
                return list(self._remote.values())
            owners = self.store.owned.leases.owners()
            now = self.now_wall()
            fresh: dict[str, PokerTable] = {}
            for row in self.store.tables():
                if row.table_id in self.tables:
                    continue
                place = place_of(owners.get(row.table_id), now)
                address = place.address if place is not None and place.live else ""
                settings = pb.TableSettings.FromString(row.settings)
                table = self._runtime(
                    row.table_id, settings, row.host, row.invite_code, row.invited, row.tournament_id, address
                )
                table.load_snapshot()
                fresh[row.table_id] = table
            self._remote, self._remote_at = fresh, time.monotonic()
            return list(fresh.values())

    def remote(self, table_id: str) -> PokerTable | None:
        return next((t for t in self.remote_tables() if t.table_id == table_id), None)

    def stop(self) -> None:
        payouts.unwatch(self.store)
        self._stop.set()
        for thread in self._threads:
            if thread.is_alive():
                thread.join()
        self._closer.shutdown(wait=True)

    def _run(self, share: int) -> None:
        while not self._stop.wait(self._tick_seconds):
            self.tick(share)

    def tick(self, share: int | None = None) -> None:
        """Tick the tables that are due, or those of one clock thread's share (the first share also prunes
        old answers to requests); each is put back with the deadline its tick asked for."""
        if not share:
            self._prune_requests()
        # The tables' own clock, not the machine's: on a virtual clock a failed table waits virtual time.
        now = self.now()
        shares = range(CLOCK_THREADS) if share is None else (share,)
        due = sorted((table_id, k) for k in shares for table_id in self._deadlines[k].due(now))
        for table_id, k in due:
            deadlines = self._deadlines[k]
            retry_at = self._retry_at.get(table_id, 0)
            if retry_at > now:
                deadlines.at(table_id, retry_at)
                continue
            with self.lock:
                clock = self._clocks.get(table_id)
            if clock is None:
                continue  # dropped (another shard's now)
            TICKS.inc()
            try:
                at = clock.tick()
            except Exception as exc:  # the wallet or the dealer is away: retry in a second
                at = self._retry_at[table_id] = now + RETRY_MS
                self._log.warning(
                    "poker_tick_failed",
                    table_id=table_id,
                    error=type(exc).__name__,
                    reason=payouts.reason_of(exc),
                )
            if at is not None:
                deadlines.at(table_id, at)

    @contextmanager
    def seat_reserved(self, player: str, table: PokerTable) -> Iterator[None]:
        """A seat of the player's quota for a join at `table` while it runs: RESOURCE_EXHAUSTED
        TOO_MANY_SEATS when they sit (or are sitting down) at MAX_SEATS_PER_PLAYER other tables already,
        counted over every shard: the claim is a row of the shared store (services/table/storage/seats.py),
        checked and written in one transaction before the join, so a join in flight counts too. A join
        that fails leaves the claim only if the player sits at the table after all. Under the table's lock
        (the join holds it anyway): nothing else at the table commits between the claim and the seat."""
        with table.lock:
            try:
                table.store_claim(player, MAX_SEATS_PER_PLAYER)
            except QuotaExceeded:
                raise errors.resource_exhausted(
                    "TOO_MANY_SEATS",
                    f"a player sits at {MAX_SEATS_PER_PLAYER} tables at most at once; leave one first",
                    limit=MAX_SEATS_PER_PLAYER,
                ) from None
            except BaseException:  # the store away: the claim may have committed; the next commit tells
                table.claims_synced = False
                raise
            try:
                yield
            except BaseException:
                if table.state.find_seat(player) is None:
                    self._unclaim(table)
                raise

    def _unclaim(self, table: PokerTable) -> None:
        """A failed join's claim dropped (the table's claims matched to its seats); if the store is away,
        the table's next commit does it."""
        try:
            table.sync_claims()
        except Exception as exc:
            table.claims_synced = False
            self._log.warning(
                "poker_seat_claim_undo_deferred", table_id=table.table_id, error=type(exc).__name__
            )

    def _prune_requests(self) -> None:
        now = self.now()
        if now < self._next_prune_ms:
            return
        self._next_prune_ms = now + PRUNE_EVERY_MS
        try:
            for _ in range(PRUNE_BATCHES):
                if self.store.prune_requests(now - REQUEST_RETENTION_MS, PRUNE_BATCH) < PRUNE_BATCH:
                    break
        except Exception as exc:  # the next round tries again; old answers only wait longer
            self._log.warning("poker_prune_failed", error=type(exc).__name__)

    def create(self, settings: pb.TableSettings, host: str, invited: list[str]) -> PokerTable:
        table_id = f"t-{uuid.uuid4().hex[:16]}"
        code = invite_code() if settings.private else ""
        shard = self.store.add_table(
            table_id, settings.SerializeToString(), host, code, invited, self._clock()
        )
        return self._created(shard, self._runtime(table_id, settings, host, code, invited))

    def _created(self, shard: str, table: PokerTable) -> PokerTable:
        """A new table: served here, or (placed on another shard) its first view with that shard's address."""
        table.recovered = True  # nothing to recover: a new table
        if shard == self.shard.shard_id:
            self._add(table)
        else:
            place = place_of(self.store.owned.leases.owner_of(table.table_id), self.now_wall())
            table.shard_address = place.address if place is not None else ""
        return table

    def create_tournament_table(
        self, tournament_id: str, settings: pb.TableSettings, director: DirectorFence | None = None
    ) -> PokerTable:
        """A table of a tournament, under the tournament policy: the director seats every player. With
        `director`, created only if no newer director of the tournament has acted (StaleDirector)."""
        table_id = f"tt-{uuid.uuid4().hex[:16]}"
        raw = settings.SerializeToString()
        shard = self.store.add_table(
            table_id, raw, "", "", [], self._clock(), tournament_id=tournament_id, director=director
        )
        return self._created(shard, self._runtime(table_id, settings, "", "", [], tournament_id))

    def now(self) -> int:
        """The tables' clock (integer milliseconds; virtual in tests)."""
        return int(self._clock())

    def table(
        self, table_id: str, player: str | None = None, code: str | None = None, histories: bool = False
    ) -> PokerTable:
        """The table, recovered; for a player (None: a service or an operator), only if they may see it:
        public, or private and hosted by, invited to or seated at, or `code` is its invite code, or (for
        `histories`) they played a hand there. A table the player may not see is answered exactly as one
        that does not exist (issue 13, finding 11)."""
        table = self.tables.get(table_id) or self.locate(table_id)

        def hidden() -> bool:
            if player is None or table.visible_to(player) or table.admits_code(code):
                return False
            return not (histories and self.store.played_at(table_id, player))

        if not table.recovered:
            try:
                table.recover()
            except errors.DomainError:
                if hidden():
                    raise table_not_found(table_id) from None
                raise
            except Exception:
                if hidden():  # its seats are not known yet: only invitations show it
                    raise table_not_found(table_id) from None
                raise errors.unavailable(
                    "TABLE_RECOVERING", "the table is recovering its last hand; retry", table_id=table_id
                ) from None
        if hidden():
            raise table_not_found(table_id)
        return table


# Letters and digits only: a code from token_urlsafe began with "-" one time in 32, and a command line
# then read `--invite -x...` as another option (felt play: "--invite: expected one argument").
INVITE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
INVITE_LENGTH = 13  # 57 symbols: 75 bits


def invite_code() -> str:
    """A private table's invite code: unguessable, and safe to paste after `--invite` on a command line."""
    return "".join(secrets.choice(INVITE_ALPHABET) for _ in range(INVITE_LENGTH))


def table_not_found(table_id: str) -> errors.DomainError:
    """The one answer for a table that does not exist, or that the caller may not see."""
    return errors.not_found("TABLE_NOT_FOUND", f"no table {table_id!r}", table_id=table_id)
