"""Which shard serves a table, and the refusal a call for a table of another shard gets (issue 15).

Each table service process is a shard: an id (the pod's name, `FELT_TABLE_SHARD_ID`) and the address it
advertises to clients (`FELT_TABLE_ADVERTISE_ADDRESS`), both in the shared store's `table_shards` row. A
call naming a table this shard does not serve is refused, so a client never acts on a stale copy:

- FAILED_PRECONDITION `TABLE_MOVED`: another live shard owns it; ErrorInfo metadata `address` (where to
  call), `internal_address` (where the other services call: the shard's internal port, mutual TLS),
  `shard` and `table_id`, and `web_url` (that shard's browser door) when it has one. Clients call
  `address` instead (servicekit/shards.py does it; the services, `internal_address`); a web client,
  `web_url`.
- UNAVAILABLE `TABLE_MOVING` with a RetryInfo: nobody serves it right now (its shard stopped renewing or
  handed it over, and no other shard took it yet): ask again after the delay, here or at any shard.

A stream of a table that moves ends with one of the two, its metadata also carrying `from_seq`: the next
event number to ask for at the new address.
"""

from __future__ import annotations

from dataclasses import dataclass

import prometheus_client
from refusal import Refusal
from servicekit import errors

from services.table.storage.leases import Owner, Shard

MOVING_RETRY_SECONDS = 1.0
ROUTED = prometheus_client.Counter(
    "poker_table_routed_away_total",
    "Calls and streams for a table this shard does not serve, by the answer (TABLE_MOVED, TABLE_MOVING).",
    ["reason"],
)
for _reason in ("TABLE_MOVED", "TABLE_MOVING"):
    ROUTED.labels(_reason)


@dataclass(frozen=True)
class Place:
    """A table's shard as the store has it: its address, and whether it serves the table now."""

    shard_id: str
    address: str
    live: bool
    web_url: str = ""
    internal_address: str = ""  # the shard's internal port (mutual TLS): where services are sent


def place_of(owner: Owner | None, now_ms: int) -> Place | None:
    if owner is None:
        return None
    return Place(
        owner.shard_id or "",
        owner.address or "",
        owner.live(now_ms),
        owner.web_url or "",
        owner.internal_address or "",
    )


def moved(table_id: str, place: Place | None, **more: object) -> Refusal:
    """TABLE_MOVED to a live owner with an address, else TABLE_MOVING (retry)."""
    if place is not None and place.live and place.address:
        ROUTED.labels("TABLE_MOVED").inc()
        if place.web_url:
            more = {**more, "web_url": place.web_url}
        internal = {"internal_address": place.internal_address} if place.internal_address else {}
        return errors.failed_precondition(
            "TABLE_MOVED",
            f"table {table_id!r} is served by shard {place.shard_id} at {place.address}; call it there",
            table_id=table_id,
            shard=place.shard_id,
            address=place.address,
            **internal,
            **more,
        )
    return moving(table_id, **more)


def moving(table_id: str, **more: object) -> Refusal:
    ROUTED.labels("TABLE_MOVING").inc()
    return errors.unavailable(
        "TABLE_MOVING",
        f"table {table_id!r} is moving to another shard; retry",
        retry_after_seconds=MOVING_RETRY_SECONDS,
        table_id=table_id,
        **more,
    )


def is_mine(owner: Owner | None, shard: Shard) -> bool:
    return owner is not None and (owner.shard_id, owner.incarnation) == (shard.shard_id, shard.incarnation)
