"""Leases with a fencing epoch in a shared SQL store: each item (a table, a tournament) is owned by exactly
one process through a row of its scheme's leases table, renewed on a schedule, with a fencing token
(`epoch`) that grows on every change of owner. First written for the table shards (issue 15), shared since
issue 25 with the tournament replicas; `LeaseScheme` names the tables, columns, metrics and refusal.

- An owner is a `shard_id` (the pod's name) and an `incarnation` (one per process): a restarted owner is a
  new one, so whatever its previous process still does is fenced like any other lost owner's writes.
- `acquire` takes an item that nobody holds, whose lease expired, or that the same owner's previous
  incarnation held (no wait after a restart), raising the epoch; a live lease of another owner is refused.
- `renew` (LeaseKeeper, every third of the lease) pushes the expiry of every lease this incarnation holds
  in one transaction, heartbeats the owner, and reports leases lost to another owner and leases granted
  to it by `place` on another.
- `place` gives a new item to the live owner holding the fewest leases.
- Every write of an item's log runs through `write(item_id, work)` / `fenced`: the same transaction first
  reads the item's lease row (locked `FOR SHARE` in PostgreSQL) and refuses (FencedOut) unless this
  incarnation owns it at the epoch it acquired. A takeover changes that row, so once another owner took
  the item over, nothing of the old owner commits for it again — however long it was paused; and a
  takeover waits for writes in flight (the row lock), so the new owner loads the item after the old
  owner's last commit. An expired lease nobody took yet still passes the fence: nobody else has written.

Clocks only decide when a lease is considered expired (liveness): owners' clocks may disagree by far less
than a lease (10 s by default). Safety never depends on them, only on the epoch in the database.

The store is anything with `write(work)` (one transaction), `read(sql, args)` and a `dialect`
(servicekit.sqlstore): the table service's and the tournament service's stores both are.
"""

from __future__ import annotations

import math
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import prometheus_client
from refusal import Kind, Refusal

from servicekit.logging import get_logger
from servicekit.sqlstore import Database, FenceBroken, StoreUnavailable, Tx, lock_clause

T = TypeVar("T")
Clock = Callable[[], int]  # milliseconds
DEFAULT_TTL_MS = 10_000
LOSS_HOW = ("renewal", "fenced_write")


class LeaseMetrics:
    """One scheme's lease metrics, defined by the service under names of its own (`poker_table_leases_held`,
    ...: the deploy checks find each series' definition in the source), every kind's series created here:
    `held` and `renewal_age` gauges computed at scrape time, the counters and gauges the leases set."""

    def __init__(
        self,
        kinds: tuple[str, ...],
        *,
        held: prometheus_client.Gauge,  # [kind]
        takeovers: prometheus_client.Counter,  # [kind]
        losses: prometheus_client.Counter,  # [kind, how]
        fenced_writes: prometheus_client.Counter,  # [kind]
        unowned: prometheus_client.Gauge,  # [kind]
        live_owners: prometheus_client.Gauge,  # no labels
        renewal_failures: prometheus_client.Counter,  # [kind]
        renewal_age: prometheus_client.Gauge,  # [kind]
    ) -> None:
        self.held, self.takeovers, self.losses, self.fenced_writes = held, takeovers, losses, fenced_writes
        self.unowned, self.live_owners = unowned, live_owners
        self.renewal_failures, self.renewal_age = renewal_failures, renewal_age
        self.live: weakref.WeakSet[Leases] = weakref.WeakSet()  # every open Leases of this scheme
        self.keepers: weakref.WeakSet[LeaseKeeper] = weakref.WeakSet()  # every running keeper
        for kind in kinds:
            self.held.labels(kind).set_function(self._held_count(kind))
            self.renewal_age.labels(kind).set_function(self._renewal_age(kind))
            self.takeovers.labels(kind)
            self.fenced_writes.labels(kind)
            self.unowned.labels(kind)
            self.renewal_failures.labels(kind)
            for how in LOSS_HOW:
                self.losses.labels(kind, how)

    def _held_count(self, kind: str) -> Callable[[], float]:
        return lambda: float(sum(len(leases.held()) for leases in list(self.live) if leases.kind == kind))

    def _renewal_age(self, kind: str) -> Callable[[], float]:
        def age() -> float:
            done = [k.last_round for k in list(self.keepers) if k.leases.kind == kind]
            return max(0.0, time.monotonic() - min(done)) if done else 0.0

        return age


@dataclass(frozen=True)
class LeaseScheme:
    """Where one service keeps its leases and how it speaks of them."""

    service: str  # the logs' service
    noun: str  # "table", "tournament": log events (`<noun>_lease_lost`, ...) and thread names
    kinds: tuple[str, ...]
    leases: str  # the leases table: (kind, <item_id>, owner, incarnation, epoch, expires_ms)
    owners: str  # the owners table: (<owner_id>, incarnation, address, internal_address, heartbeat_ms,
    # draining, web_url)
    item_id: str  # the leases table's item column
    owner_id: str  # the owners table's key column
    metrics: LeaseMetrics
    fenced_out: Callable[[str, str, str], FencedOut]  # (kind, item id, why): the refusal a fenced write gets


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class Shard:
    shard_id: str
    address: str = ""  # the public port: players' calls
    incarnation: str = field(default_factory=lambda: uuid.uuid4().hex[:16])
    web_url: str = ""  # its browser door (Connect, gRPC-Web); '' without one
    internal_address: str = ""  # the internal port (mutual TLS): the other services' calls


@dataclass(frozen=True)
class Owner:
    """A table's lease row as the database has it."""

    shard_id: str | None
    incarnation: str | None
    epoch: int
    expires_ms: int
    address: str | None = None
    web_url: str | None = None
    internal_address: str | None = None

    def live(self, now_ms: int) -> bool:
        return self.shard_id is not None and self.expires_ms > now_ms


class FencedOut(Refusal):
    """This owner does not hold the item's lease (any more): the write was refused and changed nothing.
    The refusal a caller gets is the scheme's (UNAVAILABLE `<NOUN>_MOVING` with a RetryInfo: asking again
    finds where the item went); services subclass it with their own words."""

    def __init__(self, kind: str, item_id: str, reason: str, *, noun: str = "item") -> None:
        super().__init__(
            Kind.UNAVAILABLE,
            f"{noun.upper()}_MOVING",
            f"{kind} {noun} {item_id!r}: {reason}; it is moving to another owner, retry",
            details={f"{noun}_id": item_id},
            retry_after_seconds=1.0,
        )
        self.item_kind = kind
        self.item_id = item_id


@dataclass(frozen=True)
class Renewal:
    renewed: list[str]  # held before and still held
    lost: list[str]  # held before, now another owner's
    granted: list[str]  # placed on this shard by another
    unowned: int  # tables nobody holds
    live_shards: int
    superseded: bool  # another process of this shard id replaced this one


class Leases:
    """The leases of one kind of item (a scheme's kind: "poker", "casino", "tournament") for one owner
    incarnation (a shard, a replica)."""

    def __init__(
        self,
        scheme: LeaseScheme,
        db: Database,
        kind: str,
        shard: Shard,
        *,
        ttl_ms: int = DEFAULT_TTL_MS,
        clock: Clock = wall_clock_ms,
    ) -> None:
        if kind not in scheme.kinds:
            raise ValueError(f"unknown kind of {scheme.noun} {kind!r}")
        self.scheme, self.metrics = scheme, scheme.metrics
        self._db, self.kind, self.shard, self.ttl_ms, self._clock = db, kind, shard, ttl_ms, clock
        self._held: dict[str, int] = {}  # item id -> epoch this incarnation holds it at
        self._draining = 0
        self._lock = threading.Lock()  # orders acquire/renew/release bookkeeping (never the writes)
        self._log = get_logger(service=scheme.service, shard=shard.shard_id, kind=kind)
        self.metrics.live.add(self)

    # Shards ----------------------------------------------------------------------------------------

    def join(self) -> None:
        """Register (or replace) this shard's row: its address and a fresh heartbeat."""
        now = self._clock()
        self._db.write(lambda tx: self._upsert_shard(tx, now, draining=0))

    def _upsert_shard(self, tx: Tx, now: int, draining: int) -> None:
        names = self.scheme
        tx.execute(
            f"INSERT INTO {names.owners}"
            f" ({names.owner_id}, incarnation, address, internal_address, heartbeat_ms, draining, web_url)"
            f" VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT ({names.owner_id}) DO UPDATE"
            " SET incarnation = excluded.incarnation,"
            " address = excluded.address, internal_address = excluded.internal_address,"
            " heartbeat_ms = excluded.heartbeat_ms, draining = excluded.draining, web_url = excluded.web_url",
            (
                self.shard.shard_id,
                self.shard.incarnation,
                self.shard.address,
                self.shard.internal_address,
                now,
                draining,
                self.shard.web_url,
            ),
        )

    # What this shard holds -------------------------------------------------------------------------------

    def held(self) -> dict[str, int]:
        return dict(self._held)

    def holds(self, table_id: str) -> bool:
        return table_id in self._held

    def epoch(self, item_id: str) -> int | None:
        """The epoch this incarnation holds the item's lease at (None: not held)."""
        return self._held.get(item_id)

    def _forget(self, table_id: str, how: str) -> None:
        with self._lock:
            if self._held.pop(table_id, None) is not None:
                self.metrics.losses.labels(self.kind, how).inc()
                self._log.warning(f"{self.scheme.noun}_lease_lost", table_id=table_id, how=how)

    # Acquire, renew, release -----------------------------------------------------------------------------

    def acquire(self, table_id: str) -> int | None:
        """Take the table's lease; its epoch, or None while another shard holds a live lease on it."""
        with self._lock:
            got = self._db.write(lambda tx: self._acquire(tx, table_id, self._clock()))
            if got is None:
                return None
            epoch, takeover = got
            self._held[table_id] = epoch
        if takeover:
            self.metrics.takeovers.labels(self.kind).inc()
            self._log.info(f"{self.scheme.noun}_lease_taken_over", table_id=table_id, epoch=epoch)
        return epoch

    def _acquire(self, tx: Tx, table_id: str, now: int) -> tuple[int, bool] | None:
        names = self.scheme
        me, mine = self.shard.shard_id, self.shard.incarnation
        for _ in range(2):  # a row inserted by a concurrent acquire is read again
            row = tx.execute(
                f"SELECT owner, incarnation, epoch, expires_ms FROM {names.leases}"
                f" WHERE kind = ? AND {names.item_id} = ?" + lock_clause(tx, "update"),
                (self.kind, table_id),
            ).fetchone()
            if row is None:
                inserted = tx.execute(
                    f"INSERT INTO {names.leases}"
                    f" (kind, {names.item_id}, owner, incarnation, epoch, expires_ms)"
                    f" VALUES (?, ?, ?, ?, 1, ?) ON CONFLICT (kind, {names.item_id}) DO NOTHING",
                    (self.kind, table_id, me, mine, now + self.ttl_ms),
                )
                if inserted.rowcount == 1:
                    return 1, False
                continue
            owner, incarnation, epoch, expires_ms = str(row[0] or ""), row[1], int(row[2]), int(row[3])
            if owner == me and incarnation == mine:
                self._extend(tx, table_id, now)
                return epoch, False
            if not row[0] or expires_ms <= now or owner == me:
                tx.execute(
                    f"UPDATE {names.leases} SET owner = ?, incarnation = ?, epoch = ?, expires_ms = ?"
                    f" WHERE kind = ? AND {names.item_id} = ?",
                    (me, mine, epoch + 1, now + self.ttl_ms, self.kind, table_id),
                )
                return epoch + 1, epoch > 0
            return None
        return None

    def _extend(self, tx: Tx, table_id: str, now: int) -> None:
        names = self.scheme
        tx.execute(
            f"UPDATE {names.leases} SET expires_ms = ? WHERE kind = ? AND {names.item_id} = ?",
            (now + self.ttl_ms, self.kind, table_id),
        )

    def renew(self) -> Renewal:
        """Extend every lease this incarnation holds and heartbeat the shard, in one transaction."""
        with self._lock:
            now = self._clock()
            owned, unowned, live, superseded = self._db.write(lambda tx: self._renew(tx, now))
            before = self._held
            lost = sorted(t for t, epoch in before.items() if owned.get(t) != epoch)
            granted = sorted(t for t in owned if t not in before)
            self._held = owned
        for table_id in lost:
            self.metrics.losses.labels(self.kind, "renewal").inc()
            self._log.warning(f"{self.scheme.noun}_lease_lost", table_id=table_id, how="renewal")
        self.metrics.unowned.labels(self.kind).set(unowned)
        self.metrics.live_owners.set(live)
        renewed = sorted(t for t in owned if t in before and t not in lost)
        return Renewal(renewed, lost, granted, unowned, live, superseded)

    def _renew(self, tx: Tx, now: int) -> tuple[dict[str, int], int, int, bool]:
        names = self.scheme
        me, mine = self.shard.shard_id, self.shard.incarnation
        row = tx.execute(
            f"SELECT incarnation FROM {names.owners} WHERE {names.owner_id} = ?", (me,)
        ).fetchone()
        superseded = row is not None and row[0] != mine
        owned: dict[str, int] = {}
        unowned = tx.execute(
            f"SELECT COUNT(*) FROM {names.leases} WHERE kind = ? AND (owner IS NULL OR expires_ms <= ?)",
            (self.kind, now),
        ).fetchone()[0]
        live = tx.execute(
            f"SELECT COUNT(*) FROM {names.owners} WHERE heartbeat_ms > ? AND draining = 0",
            (now - self.ttl_ms,),
        ).fetchone()[0]
        if not superseded:
            self._upsert_shard(tx, now, draining=self._draining)
            # The leases' rows last, with nothing after: the row locks this takes (which a fenced write of
            # the same table waits for) are held only until the commit that follows.
            rows = tx.execute(
                f"UPDATE {names.leases} SET expires_ms = ? WHERE kind = ? AND owner = ? AND incarnation = ?"
                f" RETURNING {names.item_id}, epoch",
                (now + self.ttl_ms, self.kind, me, mine),
            ).fetchall()
            owned = {str(r[0]): int(r[1]) for r in rows}
        return owned, int(unowned), int(live), superseded

    def release(self, table_id: str) -> None:
        """Give the lease up at once (a drained shard): the next acquirer need not wait for it to expire."""
        with self._lock:
            epoch = self._held.pop(table_id, None)
            if epoch is None:
                return
            self._db.write(lambda tx: self._release(tx, table_id, epoch))

    def _release(self, tx: Tx, table_id: str, epoch: int) -> None:
        names = self.scheme
        tx.execute(
            f"UPDATE {names.leases} SET owner = NULL, incarnation = NULL, expires_ms = 0"
            f" WHERE kind = ? AND {names.item_id} = ? AND owner = ? AND incarnation = ? AND epoch = ?",
            (self.kind, table_id, self.shard.shard_id, self.shard.incarnation, epoch),
        )

    def retire(self, item_id: str) -> bool:
        """Delete the lease of an item whose work is over (nothing writes its log again): nobody renews,
        counts or takes over a finished item, and the fence refuses any late write of it. Only this
        incarnation's lease at its epoch goes; False when it held none."""
        with self._lock:
            epoch = self._held.pop(item_id, None)
            if epoch is None:
                return False
            names, me = self.scheme, (self.shard.shard_id, self.shard.incarnation)
            deleted = self._db.write(
                lambda tx: (
                    tx.execute(
                        f"DELETE FROM {names.leases} WHERE kind = ? AND {names.item_id} = ?"
                        " AND owner = ? AND incarnation = ? AND epoch = ?",
                        (self.kind, item_id, *me, epoch),
                    ).rowcount
                )
            )
        return bool(deleted)

    def drain(self) -> list[str]:
        """Stop taking tables (placement skips a draining shard) and release every lease held."""
        now = self._clock()
        self._draining = 1
        self._db.write(lambda tx: self._upsert_shard(tx, now, draining=1))
        released = sorted(self._held)
        for table_id in released:
            self.release(table_id)
        return released

    # Finding owners, placing tables, taking over -----------------------------------------------------

    def owner_of(self, table_id: str) -> Owner | None:
        names = self.scheme
        rows = self._db.read(
            "SELECT l.owner, l.incarnation, l.epoch, l.expires_ms, s.address, s.web_url, s.internal_address"
            f" FROM {names.leases} l LEFT JOIN {names.owners} s ON s.{names.owner_id} = l.owner"
            f" WHERE l.kind = ? AND l.{names.item_id} = ?",
            (self.kind, table_id),
        )
        if not rows:
            return None
        owner, incarnation, epoch, expires_ms, address, web_url, internal = rows[0]
        return Owner(owner, incarnation, int(epoch), int(expires_ms), address, web_url, internal)

    def owners(self) -> dict[str, Owner]:
        """Every table's lease row of this kind, with its owner's address."""
        names = self.scheme
        rows = self._db.read(
            f"SELECT l.{names.item_id}, l.owner, l.incarnation, l.epoch, l.expires_ms, s.address, s.web_url,"
            " s.internal_address"
            f" FROM {names.leases} l LEFT JOIN {names.owners} s ON s.{names.owner_id} = l.owner"
            " WHERE l.kind = ?",
            (self.kind,),
        )
        return {str(r[0]): Owner(r[1], r[2], int(r[3]), int(r[4]), r[5], r[6], r[7]) for r in rows}

    def unowned(self) -> list[str]:
        names = self.scheme
        rows = self._db.read(
            f"SELECT {names.item_id} FROM {names.leases}"
            " WHERE kind = ? AND (owner IS NULL OR expires_ms <= ?)"
            f" ORDER BY {names.item_id}",
            (self.kind, self._clock()),
        )
        return [str(r[0]) for r in rows]

    def place(self, table_id: str, rows: Callable[[Tx], object] | None = None, *, here: bool = False) -> str:
        """Give a new table to the live, not draining shard with the fewest live leases (of every kind;
        ties to the lowest shard id), or to this one (`here`: a shard that cannot hand calls to another
        yet); returns that shard's id. `rows` writes the table's own rows in the same transaction, so a
        table never exists without its lease. Placing a placed table changes nothing."""
        with self._lock:
            now = self._clock()

            def work(tx: Tx) -> tuple[tuple[str, str], int]:
                placed = self._place(tx, table_id, now, here)
                if rows is not None:
                    rows(tx)
                return placed

            chosen, epoch = self._db.write(work)
            if chosen == (self.shard.shard_id, self.shard.incarnation):
                self._held[table_id] = epoch
        return chosen[0]

    def _place(self, tx: Tx, table_id: str, now: int, here: bool) -> tuple[tuple[str, str], int]:
        names = self.scheme
        while True:
            row = tx.execute(
                f"SELECT owner, incarnation, epoch FROM {names.leases} WHERE kind = ? AND {names.item_id} = ?"
                + lock_clause(tx, "update"),
                (self.kind, table_id),
            ).fetchone()
            if row is not None:
                return (str(row[0] or ""), str(row[1] or "")), int(row[2])
            shard = (self.shard.shard_id, self.shard.incarnation) if here else self._fewest(tx, now)
            # Shards starting together place the configured tables at once: the one that loses the race
            # finds the winner's lease (the row its INSERT waited for) instead of a unique violation.
            inserted = tx.execute(
                f"INSERT INTO {names.leases} (kind, {names.item_id}, owner, incarnation, epoch, expires_ms)"
                f" VALUES (?, ?, ?, ?, 1, ?) ON CONFLICT (kind, {names.item_id}) DO NOTHING",
                (self.kind, table_id, *shard, now + self.ttl_ms),
            )
            if inserted.rowcount == 1:
                return shard, 1

    def _fewest(self, tx: Tx, now: int) -> tuple[str, str]:
        """The live, not draining shard with the fewest live leases (ties to the lowest shard id)."""
        names = self.scheme
        shards = {
            str(r[0]): str(r[1])
            for r in tx.execute(
                f"SELECT {names.owner_id}, incarnation FROM {names.owners}"
                " WHERE heartbeat_ms > ? AND draining = 0",
                (now - self.ttl_ms,),
            ).fetchall()
        }
        shards.setdefault(self.shard.shard_id, self.shard.incarnation)  # this one is alive: it is asking
        counts = {
            str(r[0]): int(r[1])
            for r in tx.execute(
                f"SELECT owner, COUNT(*) FROM {names.leases} WHERE owner IS NOT NULL AND expires_ms > ?"
                " GROUP BY owner",
                (now,),
            ).fetchall()
        }
        shard_id = min(shards, key=lambda s: (counts.get(s, 0), s))
        return shard_id, shards[shard_id]

    def fair_share(self, renewal: Renewal) -> int:
        """How many tables this shard should hold: every table with a lease row, over the live shards."""
        total = self._db.read(f"SELECT COUNT(*) FROM {self.scheme.leases} WHERE kind = ?", (self.kind,))[0][0]
        return math.ceil(int(total) / max(1, renewal.live_shards))

    def take_over(self, limit: int) -> list[str]:
        """Acquire up to `limit` tables whose lease nobody holds, in one transaction (a takeover of a dead
        shard's tables is one commit, not one per table); returns those this shard got. Shards taking over
        at the same time get disjoint tables (PostgreSQL skips rows another takeover has locked)."""
        if self._draining or limit <= 0:
            return []
        with self._lock:
            now = self._clock()
            taken = self._db.write(lambda tx: self._take_over(tx, now, limit))
            self._held.update(taken)
        for table_id, epoch in sorted(taken.items()):
            if epoch > 1:
                self.metrics.takeovers.labels(self.kind).inc()
            self._log.info(f"{self.scheme.noun}_lease_taken_over", table_id=table_id, epoch=epoch)
        return sorted(taken)

    def _take_over(self, tx: Tx, now: int, limit: int) -> dict[str, int]:
        names = self.scheme
        skip_locked = "" if tx.dialect == "sqlite" else " FOR UPDATE SKIP LOCKED"
        rows = tx.execute(
            f"UPDATE {names.leases} SET owner = ?, incarnation = ?, epoch = epoch + 1, expires_ms = ?"
            f" WHERE kind = ? AND {names.item_id} IN"
            f" (SELECT {names.item_id} FROM {names.leases} WHERE kind = ?"
            f" AND (owner IS NULL OR expires_ms <= ?) ORDER BY {names.item_id} LIMIT ?" + skip_locked + ")"
            f" RETURNING {names.item_id}, epoch",
            (
                self.shard.shard_id,
                self.shard.incarnation,
                now + self.ttl_ms,
                self.kind,
                self.kind,
                now,
                limit,
            ),
        ).fetchall()
        return {str(r[0]): int(r[1]) for r in rows}

    # The fence ---------------------------------------------------------------------------------------

    def fenced(self, table_id: str, work: Callable[[Tx], T]) -> Callable[[Tx], T]:
        """`work`, preceded in its own transaction by the check that this incarnation still owns the
        table at the epoch it acquired (the row stays share-locked until the transaction ends)."""
        epoch = self._held.get(table_id)
        if epoch is None:
            self.metrics.fenced_writes.labels(self.kind).inc()
            raise self.scheme.fenced_out(self.kind, table_id, "this shard does not hold its lease")
        expected = (self.shard.shard_id, self.shard.incarnation, epoch)

        def behind_the_fence(tx: Tx) -> T:
            names = self.scheme
            if getattr(tx, "holds_back", False):
                # The check goes with the write's statements and its COMMIT in one message (PostgreSQL,
                # issue 24): it raises there (FenceBroken) rather than answer, and nothing commits.
                tx.execute(
                    f"SELECT felt_fence(EXISTS (SELECT 1 FROM {names.leases}"
                    f" WHERE kind = ? AND {names.item_id} = ? AND owner = ? AND incarnation = ? AND epoch = ?"
                    " FOR SHARE), ?)",
                    (self.kind, table_id, *expected, f"its lease moved past epoch {epoch}"),
                )
                return work(tx)
            row = tx.execute(
                f"SELECT owner, incarnation, epoch FROM {names.leases} WHERE kind = ? AND {names.item_id} = ?"
                + lock_clause(tx, "share"),
                (self.kind, table_id),
            ).fetchone()
            if row is None or (row[0], row[1], int(row[2])) != expected:
                raise self.scheme.fenced_out(self.kind, table_id, f"its lease moved past epoch {epoch}")
            return work(tx)

        return behind_the_fence

    def write(self, table_id: str, work: Callable[[Tx], T]) -> T:
        """Write the table's log through the fence; a refusal forgets the lease (it is another's now)."""
        try:
            try:
                return self._db.write(self.fenced(table_id, work))
            except FenceBroken as broken:
                raise self.scheme.fenced_out(self.kind, table_id, str(broken)) from None
        except FencedOut:
            if self.holds(table_id):
                self.metrics.fenced_writes.labels(self.kind).inc()
                self._forget(table_id, "fenced_write")
            raise


class LeaseKeeper:
    """Renews a shard's leases on a schedule (a third of the lease, so two renewals may fail before one
    expires) on a thread of its own, and tells the service what changed. With `take_over`, it also
    acquires tables nobody holds, up to this shard's fair share of the tables (for shards that serve
    each other's tables; a single shard takes every table at start instead). Tests call `tick()`."""

    def __init__(
        self,
        leases: Leases,
        *,
        on_lost: Callable[[list[str]], None] | None = None,
        on_gained: Callable[[list[str]], None] | None = None,
        take_over: bool = False,
        give_away: Callable[[list[str]], str | None] | None = None,
        interval_s: float | None = None,
    ) -> None:
        self.leases = leases
        self._on_lost, self._on_gained, self._take_over = on_lost, on_gained, take_over
        self._give_away = give_away
        self._orphaned_rounds = 0
        self.interval_s = interval_s if interval_s is not None else leases.ttl_ms / 3000
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._log = get_logger(service=leases.scheme.service, shard=leases.shard.shard_id, kind=leases.kind)
        self.last_round = time.monotonic()  # when the running keeper last finished a round
        self.last_renewed = self.last_round  # when a round last reached the store and renewed

    def tick(self) -> Renewal:
        renewal = self.leases.renew()
        gained = list(renewal.granted)
        lost = list(renewal.lost)
        if self._take_over and not renewal.superseded and renewal.unowned:
            room = self.leases.fair_share(renewal) - len(self.leases.held())
            # Tables nobody took for two rounds (every live shard at its share, counted while a dead one
            # still looked alive): take one a round anyway; a table is never left without an owner.
            self._orphaned_rounds = self._orphaned_rounds + 1 if room <= 0 else 0
            if room <= 0 and self._orphaned_rounds >= 2:
                room = 1
            taken = self.leases.take_over(room) if room > 0 else []
            gained += taken
            # Only while some table has no owner: what this shard could and did take, for a takeover's story.
            self._log.info(
                f"{self.leases.scheme.noun}_leases_unowned",
                unowned=renewal.unowned,
                room=room,
                taken=len(taken),
                live_shards=renewal.live_shards,
            )
        else:
            self._orphaned_rounds = 0
        # Tables are given away only while none is orphaned (never shed what nobody would take).
        if (
            self._give_away is not None
            and not renewal.superseded
            and renewal.live_shards > 1
            and not renewal.unowned
        ):
            held = sorted(self.leases.held())
            if len(held) > self.leases.fair_share(renewal):
                table_id = self._give_away(held)
                if table_id is not None:  # released first: until then every write of it still passes
                    self.leases.release(table_id)
                    self._log.info(f"{self.leases.scheme.noun}_lease_given_away", table_id=table_id)
                    lost.append(table_id)
        if lost and self._on_lost is not None:
            self._on_lost(lost)
        if gained and self._on_gained is not None:
            self._on_gained(gained)
        return renewal

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.tick()
                self.last_renewed = time.monotonic()
            except StoreUnavailable as exc:  # the next round tries again; the fence keeps writes safe
                self.leases.metrics.renewal_failures.labels(self.leases.kind).inc()
                self._log.warning(f"{self.leases.scheme.noun}_lease_renewal_failed", error=str(exc)[:200])
            except Exception as exc:  # never let the renewer die quietly
                self.leases.metrics.renewal_failures.labels(self.leases.kind).inc()
                self._log.error(f"{self.leases.scheme.noun}_lease_renewal_error", error=type(exc).__name__)
            self.last_round = time.monotonic()

    def current(self) -> bool:
        """Whether a renewal reached the store within the lease: past it, this shard's leases have
        expired for the others (they may take its tables) and its store does not answer."""
        return time.monotonic() - self.last_renewed < self.leases.ttl_ms / 1000

    def start(self) -> LeaseKeeper:
        self.last_round = self.last_renewed = time.monotonic()
        self.leases.metrics.keepers.add(self)
        self._thread = threading.Thread(
            target=self._run, name=f"{self.leases.scheme.noun}-leases-{self.leases.kind}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.leases.metrics.keepers.discard(self)
        if self._thread is not None:
            self._thread.join()
