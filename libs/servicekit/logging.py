"""structlog JSON logging: one line per event on stdout, ISO UTC timestamps, contextvars merged."""

from __future__ import annotations

import logging
import threading
from typing import Any

import structlog

_configured = False


class _StdoutLogger:
    """structlog's PrintLogger, except that it writes to the sys.stdout of the moment, not to the one
    current when logging was configured. In a service process sys.stdout never changes, so the lines are
    the same; in tests, in-process services follow pytest's capture as it swaps sys.stdout (their lines
    land in the output of the test that was running, never in a closed capture stream of an earlier one)."""

    _lock = threading.Lock()  # one line at a time from the server's threads

    def msg(self, message: str) -> None:
        with self._lock:
            print(message, flush=True)

    log = debug = info = warn = warning = msg
    fatal = failure = err = error = critical = exception = msg


_STDOUT_LOGGER = _StdoutLogger()


def _stdout_logger(*_args: Any) -> _StdoutLogger:
    return _STDOUT_LOGGER


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
        logger_factory=_stdout_logger,
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
