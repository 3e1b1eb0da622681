"""The tables of one kind a table service serves from its store, while it serves them all (no calls are
routed between shards yet): its stores write through this, never around it.

- At open, before the service loads anything, the shard acquires the lease of every table the store knows
  (a restart of the same shard takes them back at once and fences whatever its previous process still
  does). A table another live shard holds is left alone, and this process never writes for it.
- A table the store first sees after the open (created since) is acquired on its first write: nobody can
  have loaded it before, so nothing in memory can be older than the log.
- A table whose lease this process lost (its renewal or a write found another owner) is never taken back
  by this process: what it has in memory may be older than the log; only a fresh load may serve it.
- A LeaseKeeper renews the leases in the background; `close` stops it and releases every lease, so the
  next process takes them without waiting for them to expire.
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


def this_shard() -> Shard:
    """This process as a shard: the host's name (a StatefulSet pod's name: table-0, table-1, ...) and a
    new incarnation."""
    return Shard(socket.gethostname())


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
    ) -> None:
        self.leases = Leases(db, kind, shard or this_shard(), ttl_ms=ttl_ms, clock=clock)
        self._log = get_logger(service="table", shard=self.leases.shard.shard_id, kind=kind)
        self._lock = threading.Lock()
        self.leases.join()
        known = [str(r[0]) for r in db.read("SELECT table_id FROM table_leases WHERE kind = ?", (kind,))]
        self._seen = set(known)  # every table this process has tried to hold
        for table_id in known:
            if self.leases.acquire(table_id) is None:
                owner = self.leases.owner_of(table_id)
                self._log.warning("table_held_elsewhere", table_id=table_id, owner=owner and owner.shard_id)
        self.keeper = LeaseKeeper(self.leases).start() if renew else None

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
            first = table_id not in self._seen
            self._seen.add(table_id)
        if first:
            self.leases.acquire(table_id)
        return self.leases.write(table_id, work)

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
