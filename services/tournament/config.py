"""Tournament service settings: the platform's (FELT_TOURNAMENT_PORT, FELT_TOURNAMENT_METRICS_PORT, ...)
and its own.

| variable                     | default         | meaning                                               |
|------------------------------|-----------------|-------------------------------------------------------|
| FELT_TABLE_ADDRESS           | 127.0.0.1:50054 | the table service (TableDirectorService, WatchTable)  |
| FELT_WALLET_ADDRESS          | 127.0.0.1:50053 | the wallet (holds, prize pools, prizes)               |
| FELT_DEALER_ADDRESS          | 127.0.0.1:50052 | the dealer (the Spin multiplier's verifiable draw)    |
| TOURNAMENT_DATABASE_URL      | (SQLite)        | postgresql://...: the log in PostgreSQL; or           |
|                              |                 | sqlite:///path; unset: tournaments.sqlite3 in the     |
|                              |                 | data directory                                        |
| FELT_TOURNAMENT_TICK_SECONDS | 0.1             | how often the clock checks levels, breaks, starts     |
| FELT_TOURNAMENT_MAX_LIVE     | 1000            | tournaments not over at once (TOO_MANY_TOURNAMENTS)   |

Tests may pass `clock=` (a callable returning integer milliseconds: virtual time).
"""

from __future__ import annotations

from typing import Any

from servicekit.config import ServerConfig, load_server_config, positive_float, positive_int, setting


def load_config(**overrides: Any) -> ServerConfig:
    own: dict[str, Any] = {
        # felt up --table-shards N lists every shard in FELT_TABLE_SHARD_ADDRESSES (comma-separated).
        "table_address": setting("FELT_TABLE_SHARD_ADDRESSES", "")
        or setting("FELT_TABLE_ADDRESS", "127.0.0.1:50054"),
        "wallet_address": setting("FELT_WALLET_ADDRESS", "127.0.0.1:50053"),
        "dealer_address": setting("FELT_DEALER_ADDRESS", "127.0.0.1:50052"),
        "database_url": setting("TOURNAMENT_DATABASE_URL", ""),
        "tick_seconds": setting("FELT_TOURNAMENT_TICK_SECONDS", 0.1, parse=positive_float),
        "max_live": setting("FELT_TOURNAMENT_MAX_LIVE", 1000, parse=positive_int),
    }
    return load_server_config("tournament", **{**own, **overrides})
