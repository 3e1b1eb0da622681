"""Several wallet processes behind one gRPC port (FELT_WALLET_WORKERS=N > 1).

The wallet keeps no state outside its database, so N worker processes can serve the same port (the
kernel spreads connections over them; one client channel always talks to one worker). The supervisor
and the plumbing between it and the workers are the platform's (libs/servicekit/workers.py: the port
reserved with SO_REUSEPORT, ready pipes, restart of a dead worker, SIGTERM drains all, one /metrics
summing every worker through prometheus-client multiprocess mode). What is the wallet's own: each
worker is a whole wallet with its own store (SQLite: its own writer on the shared WAL database, group
commits per process, writers taking turns through a flock; PostgreSQL: its own pool), health service
and hold sweeper.
"""

from __future__ import annotations

from collections.abc import Callable

from servicekit import workers
from servicekit.config import ServerConfig
from servicekit.server import ServiceSpec

Announce = workers.Announce


def serve(spec_for: Callable[[ServerConfig], ServiceSpec], config: ServerConfig, announce: Announce) -> int:
    """One wallet, a supervisor of FELT_WALLET_WORKERS wallets, or one of them (servicekit.workers)."""
    return workers.serve(spec_for, config, announce)
