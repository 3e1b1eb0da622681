"""Table leases: each table is owned by exactly one shard through a row of `table_leases` (the shards in
`table_shards`), renewed on a schedule, with a fencing token (`epoch`) checked in the same transaction as
every write of the table's log. The mechanism is servicekit.leases (shared with the tournament replicas
since issue 25); this module is the table service's scheme of it: its tables, metrics
(`poker_table_leases_held{kind}`, ...) and refusal (UNAVAILABLE TABLE_MOVING).
"""

from __future__ import annotations

import prometheus_client
from refusal import Kind, Refusal
from servicekit import leases as shared
from servicekit.leases import (
    DEFAULT_TTL_MS,
    LOSS_HOW,
    Clock,
    LeaseKeeper,
    LeaseMetrics,
    LeaseScheme,
    Owner,
    Renewal,
    Shard,
    wall_clock_ms,
)
from servicekit.sqlstore import Database

KINDS = ("poker", "casino")


class FencedOut(shared.FencedOut):
    """This shard does not hold the table's lease (any more): the write was refused and changed nothing.
    A caller whose command met it is answered UNAVAILABLE TABLE_MOVING (with a RetryInfo): the table is
    moving to another shard, and asking again finds where it went (TABLE_MOVED)."""

    def __init__(self, kind: str, table_id: str, reason: str) -> None:
        Refusal.__init__(
            self,
            Kind.UNAVAILABLE,
            "TABLE_MOVING",
            f"{kind} table {table_id!r}: {reason}; it is moving to another shard, retry",
            details={"table_id": table_id},
            retry_after_seconds=1.0,
        )
        self.item_kind = self.table_kind = kind  # poker or casino (`kind` is the refusal's)
        self.item_id = self.table_id = table_id


METRICS = LeaseMetrics(
    KINDS,
    held=prometheus_client.Gauge(
        "poker_table_leases_held", "Tables whose lease this shard holds now.", ["kind"]
    ),
    takeovers=prometheus_client.Counter(
        "poker_table_lease_takeovers_total",
        "Leases this shard took over from an earlier owner (expired, released, or its own previous process).",
        ["kind"],
    ),
    losses=prometheus_client.Counter(
        "poker_table_lease_losses_total",
        "Leases this shard found taken over by another owner, by how it found out.",
        ["kind", "how"],
    ),
    fenced_writes=prometheus_client.Counter(
        "poker_table_fenced_writes_total",
        "Writes of a table's log refused because this shard does not hold the table's lease.",
        ["kind"],
    ),
    unowned=prometheus_client.Gauge(
        "poker_table_unowned_tables",
        "Tables whose lease nobody holds (expired or released), at this shard's last renewal.",
        ["kind"],
    ),
    live_owners=prometheus_client.Gauge(
        "poker_table_shards_live", "Table shards whose heartbeat is fresh, at this shard's last renewal."
    ),
    renewal_failures=prometheus_client.Counter(
        "poker_table_lease_renewal_failures_total", "Lease renewals that could not reach the store.", ["kind"]
    ),
    renewal_age=prometheus_client.Gauge(
        "poker_table_lease_renewal_age_seconds",
        "Seconds since this shard's lease keeper last finished a round (renewal and takeovers); it grows"
        " without bound when the keeper is stuck, which heartbeats of the other kind of table can hide.",
        ["kind"],
    ),
)
SCHEME = LeaseScheme(
    service="table",
    noun="table",
    kinds=KINDS,
    leases="table_leases",
    owners="table_shards",
    item_id="table_id",
    owner_id="shard_id",
    metrics=METRICS,
    fenced_out=FencedOut,
)


class Leases(shared.Leases):
    """The leases of one kind of table ("poker", "casino") for one shard incarnation."""

    def __init__(
        self,
        db: Database,
        kind: str,
        shard: Shard,
        *,
        ttl_ms: int = DEFAULT_TTL_MS,
        clock: Clock = wall_clock_ms,
    ) -> None:
        super().__init__(SCHEME, db, kind, shard, ttl_ms=ttl_ms, clock=clock)


__all__ = [
    "DEFAULT_TTL_MS",
    "KINDS",
    "LOSS_HOW",
    "SCHEME",
    "Clock",
    "FencedOut",
    "LeaseKeeper",
    "Leases",
    "Owner",
    "Renewal",
    "Shard",
    "wall_clock_ms",
]
