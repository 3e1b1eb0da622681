"""Dealer settings: the platform's (FELT_DEALER_PORT, FELT_DEALER_METRICS_PORT, ...) and its own.

| variable                              | default | meaning                                                |
|---------------------------------------|---------|--------------------------------------------------------|
| FELT_DEALER_SHOE_IDLE_SECONDS         | 900     | an open shoe untouched this long expires (no more deals)|
| FELT_DEALER_SHOE_RETENTION_SECONDS    | 3600    | a closed/expired shoe stays revealable this long        |
| FELT_DEALER_MAX_SHOES                 | 100000  | shoes held in memory at once (RESOURCE_EXHAUSTED above) |
| FELT_DEALER_WORKERS                   | 1       | dealer processes behind the one port (routing.py)       |

Tests may also pass `seed_source=` and `clock=` overrides (objects, not environment variables) to drive
the dealer with a deterministic seed source, a broken entropy source or a fake clock.
"""

from __future__ import annotations

from typing import Any

from dealing import BookSettings
from servicekit.config import ServerConfig, load_server_config, positive_float, positive_int, setting
from servicekit.workers import worker_settings


def load_config(**overrides: Any) -> ServerConfig:
    own = {
        "shoe_idle_seconds": setting("FELT_DEALER_SHOE_IDLE_SECONDS", 900.0, parse=positive_float),
        "shoe_retention_seconds": setting("FELT_DEALER_SHOE_RETENTION_SECONDS", 3600.0, parse=positive_float),
        "max_shoes": setting("FELT_DEALER_MAX_SHOES", 100_000, parse=positive_int),
        # FELT_DEALER_WORKERS defaults to 1 (dev, tests): the table service reaches the dealer over one
        # connection, i.e. one worker, and on 2 shared cores 2-3 workers measured the same CPU per shoe
        # with no idle core to add (bench/results/dealer.md). More pods, or N on a bigger host.
        **worker_settings("dealer"),
    }
    return load_server_config("dealer", **{**own, **overrides})


def book_settings(config: ServerConfig) -> BookSettings:
    defaults = BookSettings()
    return BookSettings(
        idle_seconds=float(config.extra.get("shoe_idle_seconds", defaults.idle_seconds)),
        retention_seconds=float(config.extra.get("shoe_retention_seconds", defaults.retention_seconds)),
        max_shoes=int(config.extra.get("max_shoes", defaults.max_shoes)),
    )
