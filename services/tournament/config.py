"""Tournament service settings: the platform's (FELT_TOURNAMENT_PORT, FELT_TOURNAMENT_METRICS_PORT, ...)
and its own.

| variable                     | default         | meaning                                               |
|------------------------------|-----------------|-------------------------------------------------------|
| FELT_TABLE_ADDRESS           | 127.0.0.1:51054 | the table service (TableDirectorService, WatchTable)  |
| FELT_WALLET_ADDRESS          | 127.0.0.1:51053 | the wallet (holds, prize pools, prizes)               |
| FELT_DEALER_ADDRESS          | 127.0.0.1:51052 | the dealer (the Spin multiplier's verifiable draw)    |
| TOURNAMENT_DATABASE_URL      | (SQLite)        | postgresql://...: the log in PostgreSQL; or           |
|                              |                 | sqlite:///path; unset: tournaments.sqlite3 in the     |
|                              |                 | data directory                                        |
| FELT_TOURNAMENT_TICK_SECONDS | 0.1             | how often the clock checks levels, breaks, starts     |
| FELT_TOURNAMENT_MAX_LIVE     | 1000            | tournaments not over at once (TOO_MANY_TOURNAMENTS)   |
| FELT_TOURNAMENT_REPLICATED   | 0               | 1: one of several replicas on one PostgreSQL store    |
|                              |                 | (each directs the tournaments it leases, redirects    |
|                              |                 | the others' writes, takes over a dead one's); 0: this |
|                              |                 | process directs every tournament of its store         |
| FELT_TOURNAMENT_REPLICA_ID   | host name       | this replica's id (the StatefulSet pod's name);       |
|                              | (alone: tournament) | alone, a fixed id: a restart takes its leases back |
| FELT_TOURNAMENT_ADVERTISE_ADDRESS | host:port  | where clients are sent for this replica's tournaments |
| FELT_TOURNAMENT_ADVERTISE_INTERNAL_ADDRESS | host:internal port | ... the other services (mTLS)|
| FELT_TOURNAMENT_LEASE_SECONDS | 10             | a tournament's lease (renewed every scan); a replica  |
|                              |                 | that stops renewing loses its tournaments after it    |
| FELT_TOURNAMENT_SCAN_SECONDS | 1               | replicated: leases renewed and orphans taken this often|

The addresses are the services' internal ports (mutual TLS with this service's certificate:
servicekit.tls). Tests may pass `clock=` (a callable returning integer milliseconds: virtual time).
"""

from __future__ import annotations

from typing import Any

from servicekit.config import (
    ServerConfig,
    default_internal_address,
    load_server_config,
    positive_float,
    positive_int,
    setting,
)


def _flag(raw: str) -> bool:
    return raw.strip().lower() not in ("0", "false", "no", "off")


def load_config(**overrides: Any) -> ServerConfig:
    own: dict[str, Any] = {
        # felt up --table-shards N lists every shard in FELT_TABLE_SHARD_ADDRESSES (comma-separated).
        "table_address": setting("FELT_TABLE_SHARD_ADDRESSES", "")
        or setting("FELT_TABLE_ADDRESS", default_internal_address("table")),
        "wallet_address": setting("FELT_WALLET_ADDRESS", default_internal_address("wallet")),
        "dealer_address": setting("FELT_DEALER_ADDRESS", default_internal_address("dealer")),
        "database_url": setting("TOURNAMENT_DATABASE_URL", ""),
        "tick_seconds": setting("FELT_TOURNAMENT_TICK_SECONDS", 0.1, parse=positive_float),
        "max_live": setting("FELT_TOURNAMENT_MAX_LIVE", 1000, parse=positive_int),
        "replicated": setting("FELT_TOURNAMENT_REPLICATED", False, parse=_flag),
        "replica_id": setting("FELT_TOURNAMENT_REPLICA_ID", ""),
        "advertise_address": setting("FELT_TOURNAMENT_ADVERTISE_ADDRESS", ""),
        "advertise_internal_address": setting("FELT_TOURNAMENT_ADVERTISE_INTERNAL_ADDRESS", ""),
        "lease_seconds": setting("FELT_TOURNAMENT_LEASE_SECONDS", 10.0, parse=positive_float),
        "scan_seconds": setting("FELT_TOURNAMENT_SCAN_SECONDS", 1.0, parse=positive_float),
    }
    return load_server_config("tournament", **{**own, **overrides})
