"""Several tournament replicas, one owner per tournament (issue 25): the table shards' leases
(servicekit.leases) in the tournament store (`tn_leases`, `tn_replicas`), and the refusals a call for a
tournament another replica owns gets.

- Each replica is an id (`FELT_TOURNAMENT_REPLICA_ID`, the pod's name) and a new incarnation per process;
  it advertises its public and internal addresses (`FELT_TOURNAMENT_ADVERTISE_ADDRESS`,
  `..._INTERNAL_ADDRESS`) in its `tn_replicas` row.
- Every write of a tournament's rows passes the fence (TournamentStore.leases): a replica that lost a
  tournament (it stopped renewing, was paused past its lease) commits nothing for it again.
- Replicated (`FELT_TOURNAMENT_REPLICATED=1`, on a shared PostgreSQL): a new tournament goes to the live
  replica with the fewest; the keeper renews every `scan` seconds and takes over tournaments nobody holds
  (a dead replica's, after its lease of 10 s) up to this replica's fair share; a drained replica (SIGTERM)
  releases its tournaments first. Alone (the embedded default): this replica owns every tournament.
- A write or WatchTournament for a tournament owned elsewhere is refused FAILED_PRECONDITION
  `TOURNAMENT_MOVED` with ErrorInfo metadata `address` (the owner's public port), `internal_address`,
  `replica` and `tournament_id`, or UNAVAILABLE `TOURNAMENT_MOVING` (RetryInfo) while nobody owns it;
  reads are answered by any replica from the log (clients follow: servicekit.shards with these reasons).
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import prometheus_client
from refusal import Kind, Refusal
from servicekit import errors
from servicekit import leases as shared
from servicekit.leases import DEFAULT_TTL_MS, LeaseKeeper, LeaseMetrics, LeaseScheme, Owner, Shard
from servicekit.sqlstore import Database

KIND = "tournament"
MOVED, MOVING = "TOURNAMENT_MOVED", "TOURNAMENT_MOVING"
MOVING_RETRY_SECONDS = 1.0
ROUTED = prometheus_client.Counter(
    "poker_tournament_routed_away_total",
    "Calls and streams for a tournament this replica does not own, by the answer.",
    ["reason"],
)
for _reason in (MOVED, MOVING):
    ROUTED.labels(_reason)


class FencedOut(shared.FencedOut):
    """This replica does not hold the tournament's lease (any more): the write changed nothing. The caller
    hears UNAVAILABLE TOURNAMENT_MOVING (retry: the next call finds the new owner, TOURNAMENT_MOVED)."""

    def __init__(self, kind: str, tournament_id: str, reason: str) -> None:
        Refusal.__init__(
            self,
            Kind.UNAVAILABLE,
            MOVING,
            f"tournament {tournament_id!r}: {reason}; it is moving to another replica, retry",
            details={"tournament_id": tournament_id},
            retry_after_seconds=MOVING_RETRY_SECONDS,
        )
        self.item_kind, self.item_id = kind, tournament_id


SCHEME = LeaseScheme(
    service="tournament",
    noun="tournament",
    kinds=(KIND,),
    leases="tn_leases",
    owners="tn_replicas",
    item_id="tournament_id",
    owner_id="replica_id",
    metrics=LeaseMetrics(
        (KIND,),
        held=prometheus_client.Gauge(
            "poker_tournament_leases_held", "Tournaments whose lease this replica holds now.", ["kind"]
        ),
        takeovers=prometheus_client.Counter(
            "poker_tournament_lease_takeovers_total",
            "Leases this replica took over from an earlier owner (expired, released, its previous process).",
            ["kind"],
        ),
        losses=prometheus_client.Counter(
            "poker_tournament_lease_losses_total",
            "Leases this replica found taken over by another, by how it found out.",
            ["kind", "how"],
        ),
        fenced_writes=prometheus_client.Counter(
            "poker_tournament_fenced_writes_total",
            "Writes of a tournament's log refused because this replica does not hold its lease.",
            ["kind"],
        ),
        unowned=prometheus_client.Gauge(
            "poker_tournament_unowned_tournaments",
            "Tournaments in play whose lease nobody holds, at this replica's last renewal.",
            ["kind"],
        ),
        live_owners=prometheus_client.Gauge(
            "poker_tournament_replicas_live",
            "Tournament replicas whose heartbeat is fresh, at the last renewal.",
        ),
        renewal_failures=prometheus_client.Counter(
            "poker_tournament_lease_renewal_failures_total",
            "Lease renewals that could not reach the store.",
            ["kind"],
        ),
        renewal_age=prometheus_client.Gauge(
            "poker_tournament_lease_renewal_age_seconds",
            "Seconds since this replica's lease keeper last finished a round (renewal and takeovers).",
            ["kind"],
        ),
    ),
    fenced_out=FencedOut,
)


def this_replica(replica_id: str = "", address: str = "", internal_address: str = "") -> Shard:
    """This process as a replica: `replica_id` or the host's name (a pod's name), a new incarnation."""
    return Shard(replica_id or socket.gethostname(), address, internal_address=internal_address)


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


def moved(tournament_id: str, owner: Owner | None, now_ms: int | None = None) -> Refusal:
    """TOURNAMENT_MOVED to a live owner with an address, else TOURNAMENT_MOVING (retry)."""
    now = wall_ms() if now_ms is None else now_ms
    if owner is not None and owner.live(now) and owner.address:
        ROUTED.labels(MOVED).inc()
        internal = {"internal_address": owner.internal_address} if owner.internal_address else {}
        return errors.failed_precondition(
            MOVED,
            f"tournament {tournament_id!r} is directed by replica {owner.shard_id} at {owner.address};"
            " call it there",
            tournament_id=tournament_id,
            replica=owner.shard_id or "",
            address=owner.address,
            **internal,
        )
    ROUTED.labels(MOVING).inc()
    return errors.unavailable(
        MOVING,
        f"tournament {tournament_id!r} is moving to another replica; retry",
        retry_after_seconds=MOVING_RETRY_SECONDS,
        tournament_id=tournament_id,
    )


class Replicas:
    """This replica's tournaments: their leases, the keeper that renews them and takes orphans over, and
    what the hub is told when one is gained or lost."""

    def __init__(
        self,
        db: Database,
        replica: Shard,
        *,
        replicated: bool,
        ttl_ms: int = DEFAULT_TTL_MS,
        scan_seconds: float = 1.0,
    ) -> None:
        self.replicated = replicated
        self.leases = shared.Leases(SCHEME, db, KIND, replica, ttl_ms=ttl_ms)
        self.scan_seconds = scan_seconds
        self.keeper: LeaseKeeper | None = None

    @property
    def replica(self) -> Shard:
        return self.leases.shard

    def start(self, on_gained: Callable[[list[str]], None], on_lost: Callable[[list[str]], None]) -> None:
        """Join (a row in tn_replicas) and keep the leases renewed; replicated, take orphans over."""
        self.leases.join()
        self.keeper = LeaseKeeper(
            self.leases,
            on_lost=on_lost,
            on_gained=on_gained,
            take_over=self.replicated,
            interval_s=self.scan_seconds if self.replicated else None,
        ).start()

    def holds(self, tournament_id: str) -> bool:
        return self.leases.holds(tournament_id)

    def acquire(self, tournament_id: str) -> bool:
        """Take the tournament's lease (free, expired, this replica's previous process's, or placed on this
        incarnation already)."""
        return self.leases.acquire(tournament_id) is not None

    def placed_here(self, tournament_id: str) -> bool:
        """Placed on this incarnation by another replica (and not yet taken up): take it up now."""
        owner = self.leases.owner_of(tournament_id)
        mine = (self.replica.shard_id, self.replica.incarnation)
        return (
            owner is not None and (owner.shard_id, owner.incarnation) == mine and self.acquire(tournament_id)
        )

    def refusal(self, tournament_id: str) -> Refusal:
        return moved(tournament_id, self.leases.owner_of(tournament_id))

    def retire(self, tournament_id: str) -> None:
        self.leases.retire(tournament_id)

    def drain(self) -> list[str]:
        """Stop taking tournaments and release every lease (the others take them at their next scan)."""
        if self.keeper is not None:
            self.keeper.stop()
            self.keeper = None
        return self.leases.drain()

    def stop(self) -> None:
        if self.keeper is not None:
            self.keeper.stop()
            self.keeper = None
