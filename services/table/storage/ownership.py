"""The tables of one kind a table service serves from its store: its stores write through this, never
around it. Two modes:

Serving the whole store (`sharded=False`, one table service: `felt up`'s default):

- At open, before the service loads anything, the shard acquires the lease of every table the store knows
  (a restart of the same shard takes them back at once and fences whatever its previous process still
  does). A table another live shard holds is left alone, and this process never writes for it.
- A table the store first sees after the open (created since) is acquired on its first write: nobody can
  have loaded it before, so nothing in memory can be older than the log.
- A table whose lease this process lost (its renewal or a write found another owner) is never taken back
  by this process: what it has in memory may be older than the log; only a fresh load may serve it.
- A LeaseKeeper renews the leases in the background; `close` stops it and releases every lease, so the
  next process takes them without waiting for them to expire.

One shard of several (`sharded=True`, FELT_TABLE_SHARDED; `felt up --table-shards N`, the StatefulSet):
- At open the shard takes back only the tables its own previous process held (a restarted pod); every
  other table stays with its owner. `run(...)` starts the keeper with takeovers: each renewal also takes
  tables nobody holds (a dead or drained shard's), up to this shard's fair share, and gives away one
  table a round, between hands, while it holds more than its share (a shard that came back gets tables
  again). `on_gained` / `on_lost` tell the service which tables to load and which to drop.
- A table is never acquired on its first write: a write for a table this shard does not hold is FencedOut.
- `drain` (SIGTERM) stops renewing, marks the shard draining (placement skips it) and releases every
  lease, so the others take the tables over at their next renewal instead of after the lease.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import TypeVar

from servicekit.logging import get_logger

from services.table.storage.database import Database, Tx
from services.table.storage.leases import (
    DEFAULT_TTL_MS,
    Clock,
    FencedOut,
    LeaseKeeper,
    Leases,
    Shard,
    wall_clock_ms,
)

T = TypeVar("T")


def this_shard(shard_id: str = "", address: str = "", internal_address: str = "", web_url: str = "") -> Shard:
    """This process as a shard: `shard_id` or the host's name (a StatefulSet pod's name: table-0,
    table-1, ...), the addresses it advertises (players; the other services: its internal port), its
    browser door's URL, and a new incarnation."""
    return Shard(
        shard_id or socket.gethostname(), address, internal_address=internal_address, web_url=web_url
    )


class ShardTables:
    def __init__(
        self,
        db: Database,
        kind: str,
        shard: Shard | None = None,
        *,
        ttl_ms: int = DEFAULT_TTL_MS,
        clock: Clock = wall_clock_ms,
        renew: bool = True,
        sharded: bool = False,
    ) -> None:
        self.leases = Leases(db, kind, shard or this_shard(), ttl_ms=ttl_ms, clock=clock)
        self.sharded = sharded
        self._log = get_logger(service="table", shard=self.leases.shard.shard_id, kind=kind)
        self._lock = threading.Lock()
        self._on_lost: Callable[[list[str]], None] | None = None
        self.leases.join()
        if sharded:  # only what this shard's previous process held; the others' tables stay theirs
            known = [
                str(r[0])
                for r in db.read(
                    "SELECT table_id FROM table_leases WHERE kind = ? AND owner = ?",
                    (kind, self.leases.shard.shard_id),
                )
            ]
        else:
            known = [str(r[0]) for r in db.read("SELECT table_id FROM table_leases WHERE kind = ?", (kind,))]
        self._seen = set(known)  # every table this process has tried to hold
        for table_id in known:
            if self.leases.acquire(table_id) is None:
                owner = self.leases.owner_of(table_id)
                self._log.warning("table_held_elsewhere", table_id=table_id, owner=owner and owner.shard_id)
        self.keeper: LeaseKeeper | None = None
        if renew and not sharded:
            self.keeper = LeaseKeeper(self.leases).start()

    def run(
        self,
        on_gained: Callable[[list[str]], None],
        on_lost: Callable[[list[str]], None],
        give_away: Callable[[list[str]], str | None] | None = None,
        *,
        interval_s: float | None = None,
    ) -> None:
        """A sharded store's keeper, with takeovers, telling the service what it gained and lost (on the
        keeper's thread; `on_lost` also when a write finds the table fenced). `give_away(held)` names a
        table this shard may hand over now (between hands), or None."""
        if not self.sharded or self.keeper is not None:
            return
        self._on_lost = on_lost
        self.keeper = LeaseKeeper(
            self.leases,
            on_lost=on_lost,
            on_gained=on_gained,
            take_over=True,
            give_away=give_away,
            interval_s=interval_s,
        ).start()

    def acquire_placed(self, table_id: str) -> bool:
        """Take a table placed on this shard (by another's CreateTable) before the keeper's next renewal
        reports it: only when the lease row names this very process (never another's table)."""
        owner = self.leases.owner_of(table_id)
        mine = (self.leases.shard.shard_id, self.leases.shard.incarnation)
        if owner is None or (owner.shard_id, owner.incarnation) != mine:
            return False
        return self.leases.acquire(table_id) is not None

    def place(self, table_id: str, rows: Callable[[Tx], object] | None = None) -> str:
        """A new table on the live shard with the fewest tables (this one, serving the whole store)."""
        with self._lock:
            self._seen.add(table_id)
        return self.leases.place(table_id, rows, here=not self.sharded)

    def drain(self) -> list[str]:
        """Stop renewing and hand every table over (released at once); the tables released."""
        if self.keeper is not None:
            self.keeper.stop()
            self.keeper = None
        try:
            return self.leases.drain()
        except Exception as exc:  # the store is away: the leases expire by themselves
            self._log.warning("table_drain_failed", error=type(exc).__name__)
            return []

    def leases_current(self) -> bool:
        """Whether this shard still holds its leases: its keeper's renewals reach the store (true before
        a sharded keeper runs: it has taken nothing yet)."""
        return self.keeper is None or self.keeper.current()

    def holds(self, table_id: str) -> bool:
        return self.leases.holds(table_id)

    def create(self, table_id: str, rows: Callable[[Tx], object]) -> None:
        """A new table, served here: its lease and its rows in one transaction."""
        with self._lock:
            self._seen.add(table_id)
        self.leases.place(table_id, rows, here=True)

    def write(self, table_id: str, work: Callable[[Tx], T]) -> T:
        """`work` in one transaction, through the table's fence (FencedOut: not this shard's table)."""
        with self._lock:
            first = table_id not in self._seen and not self.sharded
            self._seen.add(table_id)
        if first:
            self.leases.acquire(table_id)
        try:
            return self.leases.write(table_id, work)
        except FencedOut:
            if self._on_lost is not None:
                self._on_lost([table_id])
            raise

    def close(self) -> None:
        if self.keeper is not None:
            self.keeper.stop()
        for table_id in sorted(self.leases.held()):
            try:
                self.leases.release(table_id)
            except Exception as exc:  # the store is away: the leases expire by themselves
                self._log.warning("table_lease_release_failed", table_id=table_id, error=type(exc).__name__)
                break


__all__ = ["FencedOut", "ShardTables", "this_shard"]
