"""Table service settings: the platform's (FELT_TABLE_PORT, FELT_TABLE_METRICS_PORT, ...) and its own.

| variable                    | default         | meaning                                                   |
|-----------------------------|-----------------|-----------------------------------------------------------|
| FELT_DEALER_ADDRESS         | 127.0.0.1:51052 | the dealer's internal port (cards: one shoe per round)    |
| FELT_WALLET_ADDRESS         | 127.0.0.1:51053 | the wallet's internal port (holds and settlement)         |
| FELT_TABLE_CASINO_TABLES    | see tables.py   | `id:GAME:seats[:BET=min-max;...],...`, e.g.               |
|                             |                 | `thb-1:TEXAS_HOLDEM_BONUS:7`, `c:CASINO_HOLDEM:1:ANTE=5-50`|
| FELT_TABLE_BETTING_SECONDS  | 20              | betting closes this long after a round's first bet        |
| FELT_TABLE_DECISION_SECONDS | 20              | a decision not made in time is taken automatically        |
| FELT_TABLE_CASINO_MAX_SEATS | 3               | casino seats one player holds at most, all tables together|
| FELT_TABLE_CASINO_IDLE_ROUNDS | 5             | a seat that sat out this many deals in a row is released  |
| FELT_TABLE_CASINO_IDLE_SECONDS | 300          | ... or that played no round for this long (table's clock) |
| FELT_TABLE_POKER_TABLES     | poker/tables.py | public poker tables, `id:GAME:sb/bb:min-max:seats[:bots=N]`|
| FELT_TABLE_POKER_BOT_PACING | 1               | 0: bots act at once (tests, benchmarks)                   |
| FELT_TABLE_POKER_HAND_PAUSE_MS | 2000         | pause between two poker hands                             |
| FELT_TABLE_POKER_RESUME     | 1               | 0: a poker hand interrupted by a restart is always voided |
| FELT_TABLE_WATCH_SEND_SECONDS | 10            | a WatchTable message its client leaves unread this long   |
|                             |                 | ends the stream (RESOURCE_EXHAUSTED SLOW_CONSUMER)        |
| FELT_TABLE_FULL_HISTORY_SERVICES | (none)     | services (token subjects, comma-separated) given full hand |
|                             |                 | histories, every hole card; operators always are          |
| TABLE_DATABASE_URL          | (SQLite)        | postgresql://...: the tables' log in PostgreSQL (shared   |
|                             |                 | by shards); sqlite:///path: one SQLite file; unset:       |
|                             |                 | tables.sqlite3 and casino.sqlite3 in the data directory   |
| FELT_TABLE_LEASE_SECONDS    | 10              | a table's lease: renewed every third of it; a shard that  |
|                             |                 | stops renewing loses its tables after it                  |
| FELT_TABLE_PG_POOL_SIZE     | 8               | PostgreSQL connections per store (poker, casino)          |
| FELT_TABLE_SHARDED          | 0               | 1: one of several shards on one store (each serves its    |
|                             |                 | tables, refuses others' with TABLE_MOVED, takes over a    |
|                             |                 | dead shard's); 0: this process serves the whole store     |
| FELT_TABLE_SHARD_ID         | host name       | this shard's id (the StatefulSet pod's name)              |
| FELT_TABLE_ADVERTISE_ADDRESS| host:port       | the address clients are sent to for this shard's tables   |
| FELT_TABLE_ADVERTISE_WEB_URL| http://host:web | the browser door web clients are sent to (TABLE_MOVED's   |
|                             | port, or none   | `web_url`); default from FELT_TABLE_WEB_PORT when fixed   |
| FELT_TABLE_ADVERTISE_INTERNAL_ADDRESS | host:internal port | ... the other services (mutual TLS)      |
| FELT_TABLE_SHARD_SCAN_SECONDS | 1             | sharded: leases renewed and orphans looked for this often |

Tests may also pass `clock=` (a callable returning seconds; virtual time) and `tick_seconds=` overrides;
the poker tables take `poker_clock=` (a callable returning integer milliseconds).
"""

from __future__ import annotations

from typing import Any

from servicekit.config import ServerConfig, default_internal_address, load_server_config, setting

from services.table.casino.table import SeatPolicy
from services.table.casino.tables import TableSpec, default_tables, parse_tables
from services.table.poker import tables as poker


def _positive_float(raw: str) -> float:
    value = float(raw)
    if value <= 0:
        raise ValueError("must be positive")
    return value


def _positive_int(raw: str) -> int:
    value = int(raw)
    if value <= 0:
        raise ValueError("must be positive")
    return value


def _flag(raw: str) -> bool:
    return raw.strip().lower() not in ("0", "false", "no", "off")


def _names(raw: str) -> frozenset[str]:
    return frozenset(filter(None, (part.strip() for part in raw.split(","))))


def load_config(**overrides: Any) -> ServerConfig:
    own: dict[str, Any] = {
        # Their internal ports (mutual TLS with this service's certificate: servicekit.tls).
        "dealer_address": setting("FELT_DEALER_ADDRESS", default_internal_address("dealer")),
        "wallet_address": setting("FELT_WALLET_ADDRESS", default_internal_address("wallet")),
        "casino_tables": setting("FELT_TABLE_CASINO_TABLES", default_tables(), parse=parse_tables),
        "betting_seconds": setting("FELT_TABLE_BETTING_SECONDS", 20.0, parse=_positive_float),
        "decision_seconds": setting("FELT_TABLE_DECISION_SECONDS", 20.0, parse=_positive_float),
        "casino_max_seats": setting("FELT_TABLE_CASINO_MAX_SEATS", 3, parse=_positive_int),
        "casino_idle_rounds": setting("FELT_TABLE_CASINO_IDLE_ROUNDS", 5, parse=_positive_int),
        "casino_idle_seconds": setting("FELT_TABLE_CASINO_IDLE_SECONDS", 300.0, parse=_positive_float),
        "poker_tables": setting("FELT_TABLE_POKER_TABLES", poker.default_tables(), parse=poker.parse_tables),
        "bot_pacing": setting("FELT_TABLE_POKER_BOT_PACING", True, parse=_flag),
        "hand_pause_ms": setting("FELT_TABLE_POKER_HAND_PAUSE_MS", 2000, parse=int),
        "resume_hands": setting("FELT_TABLE_POKER_RESUME", True, parse=_flag),
        "watch_send_seconds": setting("FELT_TABLE_WATCH_SEND_SECONDS", 10.0, parse=_positive_float),
        "full_history_services": setting("FELT_TABLE_FULL_HISTORY_SERVICES", frozenset[str](), parse=_names),
        "database_url": setting("TABLE_DATABASE_URL", ""),
        "lease_seconds": setting("FELT_TABLE_LEASE_SECONDS", 10.0, parse=_positive_float),
        "pg_pool_size": setting("FELT_TABLE_PG_POOL_SIZE", 8, parse=int),
        "sharded": setting("FELT_TABLE_SHARDED", False, parse=_flag),
        "shard_id": setting("FELT_TABLE_SHARD_ID", ""),
        "advertise_address": setting("FELT_TABLE_ADVERTISE_ADDRESS", ""),
        "advertise_web_url": setting("FELT_TABLE_ADVERTISE_WEB_URL", ""),
        "advertise_internal_address": setting("FELT_TABLE_ADVERTISE_INTERNAL_ADDRESS", ""),
        "shard_scan_seconds": setting("FELT_TABLE_SHARD_SCAN_SECONDS", 1.0, parse=_positive_float),
    }
    return load_server_config("table", **{**own, **overrides})


def casino_tables(config: ServerConfig) -> list[TableSpec]:
    tables = config.extra.get("casino_tables") or default_tables()
    return [t if isinstance(t, TableSpec) else parse_tables(str(t))[0] for t in tables]


def seat_policy(config: ServerConfig) -> SeatPolicy:
    """Issue 13 finding 5: the casino's seat cap per player and when an idle seat is released."""
    return SeatPolicy(
        max_seats=int(config.extra.get("casino_max_seats", 3)),
        idle_rounds=int(config.extra.get("casino_idle_rounds", 5)),
        idle_seconds=float(config.extra.get("casino_idle_seconds", 300.0)),
    )


def poker_tables(config: ServerConfig) -> list[poker.PublicTable]:
    tables = config.extra.get("poker_tables")
    if tables is None:
        return poker.default_tables()
    if isinstance(tables, str):
        return poker.parse_tables(tables)
    return list(tables)
