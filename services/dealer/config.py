"""Dealer settings: the platform's (FELT_DEALER_PORT, FELT_DEALER_METRICS_PORT, ...) and its own.

| variable                              | default | meaning                                                |
|---------------------------------------|---------|--------------------------------------------------------|
| FELT_DEALER_SHOE_IDLE_SECONDS         | 900     | an open shoe untouched this long expires (no more deals)|
| FELT_DEALER_AWAITING_IDLE_SECONDS     | 86400   | ... one still awaiting its client seeds (v2, committed) |
| FELT_DEALER_SHOE_RETENTION_SECONDS    | 3600    | a closed/expired shoe stays revealable this long        |
| FELT_DEALER_MAX_SHOES                 | 100000  | shoes held in memory at once (RESOURCE_EXHAUSTED above) |
| FELT_DEALER_SERVICE_SHARE             | 0.5     | of MAX_SHOES only service callers may hold              |
| FELT_DEALER_SHOES_PER_CALLER          | 64      | shoes a caller that is no service holds at once         |
| FELT_DEALER_SHOE_RATE_PER_CALLER      | 2       | new shoes a second such a caller creates, sustained     |
| FELT_DEALER_SHOE_BURST_PER_CALLER     | 20      | ... and at once after a quiet spell                     |
| FELT_DEALER_SHOES_PER_SERVICE         | 100000  | shoes one service (table, tournament) holds at once     |
| FELT_DEALER_SHOE_RATE_PER_SERVICE     | 2000    | new shoes a second one service creates, sustained       |
| FELT_DEALER_SHOE_BURST_PER_SERVICE    | 2000    | ... and at once                                         |
| FELT_DEALER_WORKERS                   | 1       | dealer processes behind the one port (routing.py)       |

Every limit is per dealer process (a pod); held shoes include ended ones until they are forgotten
(dealing/quota.py). With FELT_DEALER_WORKERS=N each worker enforces 1/N of a caller's quota (services
keep theirs whole), so a caller that spreads its calls over the workers still gets no more than its
quota on the host (server.py says why it is split rather than shared).

Tests may also pass `seed_source=` and `clock=` overrides (objects, not environment variables) to drive
the dealer with a deterministic seed source, a broken entropy source or a fake clock.
"""

from __future__ import annotations

from typing import Any

from dealing import BookSettings
from dealing.quota import Quota, QuotaSettings
from servicekit.config import ServerConfig, load_server_config, positive_float, positive_int, setting
from servicekit.workers import worker_settings


def load_config(**overrides: Any) -> ServerConfig:
    own = {
        "shoe_idle_seconds": setting("FELT_DEALER_SHOE_IDLE_SECONDS", 900.0, parse=positive_float),
        "awaiting_idle_seconds": setting("FELT_DEALER_AWAITING_IDLE_SECONDS", 86_400.0, parse=positive_float),
        "shoe_retention_seconds": setting("FELT_DEALER_SHOE_RETENTION_SECONDS", 3600.0, parse=positive_float),
        "max_shoes": setting("FELT_DEALER_MAX_SHOES", 100_000, parse=positive_int),
        "service_share": setting("FELT_DEALER_SERVICE_SHARE", 0.5, parse=_share),
        "shoes_per_caller": setting("FELT_DEALER_SHOES_PER_CALLER", 64, parse=positive_int),
        "shoe_rate_per_caller": setting("FELT_DEALER_SHOE_RATE_PER_CALLER", 2.0, parse=positive_float),
        "shoe_burst_per_caller": setting("FELT_DEALER_SHOE_BURST_PER_CALLER", 20, parse=positive_int),
        "shoes_per_service": setting("FELT_DEALER_SHOES_PER_SERVICE", 100_000, parse=positive_int),
        "shoe_rate_per_service": setting("FELT_DEALER_SHOE_RATE_PER_SERVICE", 2000.0, parse=positive_float),
        "shoe_burst_per_service": setting("FELT_DEALER_SHOE_BURST_PER_SERVICE", 2000, parse=positive_int),
        # FELT_DEALER_WORKERS defaults to 1 (dev, tests): the table service reaches the dealer over one
        # connection, i.e. one worker, and on 2 shared cores 2-3 workers measured the same CPU per shoe
        # with no idle core to add (bench/results/dealer.md). More pods, or N on a bigger host.
        **worker_settings("dealer"),
    }
    return load_server_config("dealer", **{**own, **overrides})


def _share(raw: str) -> float:
    value = float(raw)
    if not 0 <= value < 1:
        raise ValueError("must be a fraction: 0 <= share < 1")
    return value


def book_settings(config: ServerConfig) -> BookSettings:
    """The book's limits; `config.extra` may also carry them directly (tests)."""
    defaults = BookSettings()
    get = config.extra.get
    quotas = QuotaSettings(
        caller=Quota(
            int(get("shoes_per_caller", defaults.quotas.caller.shoes)),
            float(get("shoe_rate_per_caller", defaults.quotas.caller.per_second)),
            int(get("shoe_burst_per_caller", defaults.quotas.caller.burst)),
        ),
        service=Quota(
            int(get("shoes_per_service", defaults.quotas.service.shoes)),
            float(get("shoe_rate_per_service", defaults.quotas.service.per_second)),
            int(get("shoe_burst_per_service", defaults.quotas.service.burst)),
        ),
        service_share=float(get("service_share", defaults.quotas.service_share)),
    )
    return BookSettings(
        idle_seconds=float(get("shoe_idle_seconds", defaults.idle_seconds)),
        awaiting_idle_seconds=float(get("awaiting_idle_seconds", defaults.awaiting_idle_seconds)),
        retention_seconds=float(get("shoe_retention_seconds", defaults.retention_seconds)),
        max_shoes=int(get("max_shoes", defaults.max_shoes)),
        quotas=quotas,
    )
