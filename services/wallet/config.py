"""Wallet settings: the platform's (FELT_WALLET_PORT, FELT_WALLET_METRICS_PORT, FELT_DATA_DIR, ...)
and its own:

- WALLET_DATABASE_URL (default empty): `postgresql://...` selects PostgreSQL; empty keeps the ledger
  in SQLite at `<FELT_DATA_DIR>/wallet.sqlite3`; `sqlite:///path` names another SQLite file.
- FELT_WALLET_MAX_WORKERS (default 16): gRPC worker threads, i.e. concurrent RPCs.
- FELT_WALLET_HOLD_SWEEP_SECONDS (default 1.0): how often expired holds are swept (chips freed).
- FELT_WALLET_PG_POOL_SIZE (default 16): PostgreSQL connections in the pool (per worker process).
- FELT_WALLET_WORKERS (default 1): worker processes serving the one gRPC port (SO_REUSEPORT); more
  than one makes `felt serve wallet` a supervisor of that many workers (see services/wallet/workers.py).

Tests may also pass `clock=` (a callable returning epoch milliseconds) as an override.
"""

from __future__ import annotations

from typing import Any

from servicekit.config import ServerConfig, load_server_config, positive_float, positive_int, setting

WORKER_INDEX_ENV = "FELT_WALLET_WORKER_INDEX"


def load_config(**overrides: Any) -> ServerConfig:
    own: dict[str, Any] = {
        "database_url": setting("WALLET_DATABASE_URL", ""),
        "hold_sweep_seconds": setting("FELT_WALLET_HOLD_SWEEP_SECONDS", 1.0, parse=positive_float),
        "pg_pool_size": setting("FELT_WALLET_PG_POOL_SIZE", 16, parse=positive_int),
        # Measured with 64 clients: 16 threads give the same throughput as 64 and a shorter p99 tail
        # (fewer threads fighting for the GIL); SQLite group commit batches whatever is queued.
        "max_workers": setting("FELT_WALLET_MAX_WORKERS", 16, parse=positive_int),
        # Default 1 (dev and tests): on this 2-core machine 2 processes helped only with idle CPU (SQLite
        # +12-31 % at load 2-7, nothing at 9-25), and the table service calls the wallet through one
        # connection, i.e. one worker (bench/results/wallet.md).
        "workers": setting("FELT_WALLET_WORKERS", 1, parse=positive_int),
        # Set by the supervisor in each worker's environment, never by hand.
        "worker_index": setting(WORKER_INDEX_ENV, None, parse=int),
    }
    return load_server_config("wallet", **{**own, **{k: v for k, v in overrides.items() if v is not None}})
