"""structlog JSON logging: one line per event on stdout, ISO UTC timestamps, contextvars merged."""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

_configured = False


def configure_logging(level: str = "INFO") -> None:
    """Configure structlog once per process (later calls only change the level)."""
    global _configured
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        numeric = logging.INFO
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(sys.stdout),
        cache_logger_on_first_use=False,
    )
    _configured = True


def get_logger(**initial: Any) -> Any:
    if not _configured:
        configure_logging()
    return structlog.get_logger(**initial)


def bind_ids(**ids: object) -> None:
    """Bind domain ids in scope (table_id, hand_id, account_id, shoe_id, ...) to this RPC's log lines."""
    structlog.contextvars.bind_contextvars(**{k: str(v) for k, v in ids.items() if v not in (None, "")})
