"""The store that replicas share their per-caller budgets in: Redis, when FELT_REDIS_URL names one.

Without it each process counts alone (the embedded default, right for one machine); with it every replica
and shard of a service spends one budget per caller, so the limits hold whatever the replica count.

Redis is a helper here, not a dependency of play: when it cannot be reached, a call is still judged, by the
process's own counts, and the store is left alone for a while before it is asked again (a down Redis must
not add its timeout to every call). Going down and coming back are one log line each, and every call
judged without it counts in felt_shared_store_fallbacks_total.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from servicekit import metrics
from servicekit.logging import get_logger

T = TypeVar("T")

# A call waits at most this long for Redis before it is judged in-process: a limiter that adds more than
# a few milliseconds to every call costs more than the floods it stops.
TIMEOUT_SECONDS = 0.25
# After a failure Redis is left alone this long; calls meanwhile are judged in-process at once.
RETRY_AFTER_SECONDS = 2.0
DEFAULT_PREFIX = "felt"


class SharedStore:
    """A Redis client for one service's budgets, with its keys under `<prefix>:<service>:`."""

    def __init__(
        self,
        url: str,
        service: str,
        prefix: str = DEFAULT_PREFIX,
        timeout: float = TIMEOUT_SECONDS,
        retry_after: float = RETRY_AFTER_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.service = service
        self.namespace = f"{prefix}:{service}:"
        self.client = redis.Redis.from_url(
            url,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            # No retry: a failed call falls back at once; the first call after `retry_after` asks again.
            retry=Retry(NoBackoff(), 0),
            health_check_interval=30,
        )
        self._retry_after = retry_after
        self._clock = clock
        self._lock = threading.Lock()
        self._down_until: float | None = None  # set while Redis is left alone
        self.log = get_logger(service=service)
        self._fallbacks = metrics.SHARED_STORE_FALLBACKS.labels(service)
        self._up = metrics.SHARED_STORE_UP.labels(service)
        self._up.set(1)

    def key(self, *parts: str) -> str:
        return self.namespace + ":".join(parts)

    def script(self, lua: str) -> Any:
        """A Lua script run atomically in Redis (EVALSHA, loaded again if Redis forgot it)."""
        return self.client.register_script(lua)

    def run(self, what: str, shared: Callable[[], T], alone: Callable[[], T]) -> T:
        """`shared()` against Redis; `alone()` (the process's own count) when Redis cannot answer.

        Failing open is deliberate: the limits guard the platform against floods, and a Redis outage
        must not stop every player's game. For the length of the outage each replica enforces the budget
        by itself, as it did before Redis: looser by the replica count, never off."""
        if self._resting():
            self._fallbacks.inc()
            return alone()
        try:
            answer = shared()
        except redis.RedisError as exc:
            self._went_down(what, exc)
            self._fallbacks.inc()
            return alone()
        self._came_back()
        return answer

    @property
    def up(self) -> bool:
        with self._lock:
            return self._down_until is None

    def _resting(self) -> bool:
        with self._lock:
            return self._down_until is not None and self._clock() < self._down_until

    def _went_down(self, what: str, exc: Exception) -> None:
        with self._lock:
            first = self._down_until is None
            self._down_until = self._clock() + self._retry_after
        if first:
            self._up.set(0)
            self.log.warning(
                "shared_store_unreachable",
                detail=f"{what}: Redis did not answer; per-caller limits are counted by this process alone "
                "until it does",
                error=f"{type(exc).__name__}: {exc}"[:200],
            )

    def _came_back(self) -> None:
        with self._lock:
            if self._down_until is None:
                return
            self._down_until = None
        self._up.set(1)
        self.log.info("shared_store_back", detail="Redis answers again; per-caller limits are shared")

    def close(self) -> None:
        self.client.close()
