"""The casino tables of one table-service process: recovery at start, the clock thread, lookups, history.

The clock thread looks at a table only when something changed at it or the deadline its last look asked
for came (services/table/schedule.py, as the poker tables' clocks): an idle table costs nothing between
its deadlines (issue 24).

One of several shards (`store.owned.sharded`): every configured table has a lease, placed at start on the
shard with the fewest tables; this process serves (ticks, answers) only those it holds. A table it gains
is rebuilt from the log (a round still betting resumes, a dealt one is voided with its bets returned); a
table it loses is dropped (a fresh, unrecovered copy stands in) and its streams told where to resume.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import prometheus_client
from servicekit import errors
from servicekit.logging import get_logger

from services.table.casino.book import RoundBook
from services.table.casino.money import Wallet
from services.table.casino.shoe import Shoes
from services.table.casino.store import CasinoStore, RequestMark, StoredEvent
from services.table.casino.table import CasinoTable, SeatPolicy
from services.table.casino.tables import TableSpec
from services.table.routing import is_mine, moved, place_of
from services.table.schedule import NOW, Deadlines
from services.table.storage.seats import QuotaExceeded

RETRY_SECONDS = 1.0
# A request's answer is kept a day (AIP-155 lets ids expire): a retry later than that is a new request.
REQUEST_RETENTION_SECONDS = 24 * 3600
FORGET_EVERY_SECONDS = 60.0
TICKS = prometheus_client.Counter(
    "poker_casino_clock_ticks_total", "Looks of the clock thread at casino tables (due, or woken by a change)"
)


class Casino:
    def __init__(
        self,
        specs: list[TableSpec],
        store: CasinoStore,
        wallet: Wallet,
        shoes: Shoes,
        clock: Callable[[], float],
        betting_seconds: float,
        decision_seconds: float,
        tick_seconds: float = 0.05,
        policy: SeatPolicy | None = None,
        retry_clock: Callable[[], float] | None = None,
    ) -> None:
        self.store = store
        self._clock = clock
        # When a failed table is tried again, and the old answers forgotten: the machine's clock unless a
        # simulation passes its own (tests that freeze the tables' clock still see retries happen).
        self._retry_clock = retry_clock or time.monotonic
        self.policy = policy or SeatPolicy()
        self._wallet = wallet
        self.sharded = store.owned.sharded
        self._specs = {s.table_id: s for s in specs}
        self._new: Callable[[TableSpec], CasinoTable] = lambda s: CasinoTable(
            s, s.config(), store, wallet, shoes, clock, betting_seconds, decision_seconds, self.policy
        )
        # When each table next needs a look, on the tables' clock; and when a failed one is tried again,
        # on the retry clock. Due tables are looked at in the configured order (simulations replay it).
        self._deadlines = Deadlines()
        self._retries = Deadlines()
        self._order = {s.table_id: k for k, s in enumerate(specs)}
        self.tables = {s.table_id: self._make(s) for s in specs}
        self.moved: set[str] = set()  # tables whose copies were dropped (streams of the old copy end)
        if self.sharded:
            for spec in specs:  # a lease for every configured table: the first shard to see it places it
                store.owned.place(spec.table_id)
        self._retry_at: dict[str, float] = {}  # a table whose tick failed waits before the next try
        self._forget_at = 0.0
        self._tick_seconds = tick_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="casino-clock", daemon=True)
        self._log = get_logger(service="table")

    def _make(self, spec: TableSpec) -> CasinoTable:
        """A copy of the table, its clock woken by every change and due at the next round (its first look
        recovers it)."""
        table = self._new(spec)
        table_id = spec.table_id
        table.wake_clock = lambda: self._deadlines.wake(table_id)
        self._deadlines.wake(table_id)
        return table

    def start(self, scan_seconds: float | None = None) -> None:
        self._thread.start()
        self.store.owned.run(self._gained, self._lost, self._give_away, interval_s=scan_seconds)

    # Shards ----------------------------------------------------------------------------------------------

    def serves(self, table_id: str) -> bool:
        return not self.sharded or self.store.owned.holds(table_id)

    def _fresh(self, table_id: str) -> CasinoTable | None:
        """A new copy of the table, to be recovered from the log; the old copy's streams are woken."""
        spec = self._specs.get(table_id)
        if spec is None:
            return None
        old = self.tables.get(table_id)
        table = self._make(spec)
        self.tables[table_id] = table
        self._retry_at.pop(table_id, None)
        if old is not None:
            with old.lock:
                old.moved = True
                old.changed.notify_all()
        return table

    def _gained(self, table_ids: list[str]) -> None:
        for table_id in table_ids:
            if self._fresh(table_id) is not None:
                self._log.info("casino_table_gained", table_id=table_id)

    def _lost(self, table_ids: list[str]) -> None:
        for table_id in table_ids:
            if self._fresh(table_id) is not None:
                self._log.info("casino_table_lost", table_id=table_id)

    def _give_away(self, held: list[str]) -> str | None:
        """A table between rounds (betting, nothing bet, nothing being paid), dropped here at once."""
        for table_id in held:
            table = self.tables.get(table_id)
            if table is None or not table.recovered or not table.lock.acquire(blocking=False):
                continue
            try:
                state = table.book.state
                idle = str(state.phase) == "BETTING" and not any(s.bets for s in state.seats)
                if not idle or table.book.releasing:
                    continue
            finally:
                table.lock.release()
            self._lost([table_id])
            return table_id
        return None

    def drain(self) -> list[str]:
        """SIGTERM: stop the clock and hand every table over (their leases released at once)."""
        self.stop()
        released = self.store.owned.drain()
        self._lost(released)
        return released

    def locate(self, table_id: str, **more: object) -> None:
        """A table this shard does not serve: taken when its lease names this process, else refused with
        where it is (TABLE_MOVED / TABLE_MOVING)."""
        if self.serves(table_id):
            return
        owner = self.store.owned.leases.owner_of(table_id)
        if is_mine(owner, self.store.owned.leases.shard) and self.store.owned.acquire_placed(table_id):
            self._fresh(table_id)
            return
        raise moved(table_id, place_of(owner, time.time_ns() // 1_000_000), **more)

    def address_of(self, table_id: str) -> str:
        if self.serves(table_id):
            return self.store.owned.leases.shard.address
        place = place_of(self.store.owned.leases.owner_of(table_id), time.time_ns() // 1_000_000)
        return place.address if place is not None and place.live else ""

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self._tick_seconds):
            self.tick()

    def tick(self) -> None:
        """Recover each due table once its dependencies answer, then run its clocks; each is put back with
        the deadline its look asked for. A table this shard does not serve is not put back: gaining it
        makes a fresh copy, woken (`_fresh`)."""
        now = self._retry_clock()
        if now >= self._forget_at:
            self._forget_at = now + FORGET_EVERY_SECONDS
            self.store.forget_requests(self.store.wall_clock_ms() - REQUEST_RETENTION_SECONDS * 1000)
        due = {*self._deadlines.due(self._clock()), *self._retries.due(now)}
        for table_id in sorted(due, key=self._order.__getitem__):
            retry_at = self._retry_at.get(table_id, 0.0)
            if retry_at > now:  # woken while it waits for its retry
                self._retries.at(table_id, retry_at)
                continue
            table = self.tables[table_id]
            if not self.serves(table_id):
                continue
            TICKS.inc()
            try:
                if not table.recovered:
                    table.recover()
                    at: float | None = NOW  # its clocks run at the next round
                else:
                    at = table.tick()
            except Exception as exc:  # the wallet or dealer is away: retry in a second
                self._retry_at[table_id] = now + RETRY_SECONDS
                self._retries.at(table_id, now + RETRY_SECONDS)
                self._log.warning("casino_tick_failed", table_id=table_id, error=type(exc).__name__)
                continue
            if at is not None:
                self._deadlines.at(table_id, at)

    def table(self, table_id: str) -> CasinoTable:
        if table_id not in self.tables:
            raise errors.not_found("TABLE_NOT_FOUND", f"no casino table {table_id!r}", table_id=table_id)
        if not self.serves(table_id):
            self.locate(table_id)
        table = self.tables[table_id]
        if not table.recovered:
            try:
                table.recover()  # idempotent, under the table's lock
            except errors.DomainError:
                raise
            except Exception:
                raise errors.unavailable(
                    "TABLE_RECOVERING", "the table is recovering its last round; retry", table_id=table_id
                ) from None
        return table

    def join(
        self, table: CasinoTable, player: str, seat: int, request: RequestMark | None = None
    ) -> tuple[int, bool]:
        """A seat for `player` (see CasinoTable.join), refused beyond the player's seat cap across all casino
        tables of every shard (issue 13 finding 5): their seat claims in the shared store, checked and
        written in the join's own transaction (services/table/storage/seats.py), so joins at different
        tables never wait for each other here. The caller checked the player's wallet account
        (`require_account`)."""
        try:
            return table.join(player, seat, request, self.policy.max_seats)
        except QuotaExceeded:
            raise errors.resource_exhausted(
                "SEAT_LIMIT",
                f"a player holds at most {self.policy.max_seats} casino seats; leave one first",
                limit=self.policy.max_seats,
            ) from None

    def require_account(self, player: str) -> None:
        """FAILED_PRECONDITION NO_PLAYER_ACCOUNT: no seat without a chips account (issue 13 finding 5). A
        cached wallet lookup, made before any table lock so a slow wallet holds up no other call."""
        self._wallet.player(player)

    def replay(self, table_id: str, round_number: int) -> RoundBook:
        table = self.tables[table_id]
        book = RoundBook.empty(table.spec, table.config)
        for op, body in self.store.round_log(table_id, round_number):
            book.apply_entry(op, body)
        return book

    def round_events(self, table_id: str, round_number: int) -> list[StoredEvent]:
        return self.store.events(table_id, 1, round_number)
