"""Refusals answered late: a call refused for its caller's rate (RATE_LIMITED) is answered once its retry
delay has passed, and no sooner than MIN_HOLD_SECONDS (at most `hold_seconds`), not at once.

Refusing is cheap for the service's own code, but each call still costs the gRPC server about 0.3-0.5 ms of
CPU whatever it answers (bench/refusals), so a client that retries the moment it is refused turns its
refusals into a flood that takes the CPU the other players' calls need (issue 24: the flooder's 1,700
calls a second cost the table service 0.9 of a core). Held until it may retry, a client that waits for its
answers (every gRPC stub does, per call) sends at most its concurrent calls per retry delay: the load
benchmark's flooder, 4 threads, falls from ~1,700 refused calls a second to ~40. The floor is for the
generous budgets (the table's reads: 50 a second), whose retry delays of 20 ms would still let 4 threads
send 200 refused calls a second; a client refused that often gains nothing from a sooner answer.

A held refusal keeps its server thread for the hold, so the holds are bounded: at most `per_caller` of one
caller at once and `max_held` in all (a part of the server's workers); past either the refusal is answered
at once, as before. A caller with more calls in flight than `per_caller` therefore still gets some at once:
only an event-loop server could hold them all without a thread each.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import prometheus_client

from servicekit.ratelimit import CallerKey

PER_CALLER = 4  # the load benchmark's flooder, and an eager client's few threads
MIN_HOLD_SECONDS = 0.1

HELD = prometheus_client.Counter(
    "felt_rpc_refusals_held_total",
    "Refusals (RATE_LIMITED) answered once their retry delay had passed instead of at once, so a client "
    "that retries at once cannot turn its refusals into a flood.",
    ["grpc_service"],
)


class RefusalPacer:
    def __init__(
        self,
        service: str,
        hold_seconds: float,
        max_held: int,
        per_caller: int = PER_CALLER,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.hold_seconds = hold_seconds
        self._max_held, self._per_caller = max_held, per_caller
        self._sleep = sleep
        self._lock = threading.Lock()
        self._held: dict[CallerKey, int] = {}
        self._total = 0
        self._counted = HELD.labels(service)

    def hold(self, caller: CallerKey, retry_after_seconds: float | None) -> None:
        """Wait until the caller may retry (at least MIN_HOLD_SECONDS, at most `hold_seconds`), if there is
        room for one more hold."""
        if retry_after_seconds is None or retry_after_seconds <= 0:
            return
        wait = min(max(retry_after_seconds, MIN_HOLD_SECONDS), self.hold_seconds)
        with self._lock:
            mine = self._held.get(caller, 0)
            if mine >= self._per_caller or self._total >= self._max_held:
                return
            self._held[caller] = mine + 1
            self._total += 1
        try:
            self._counted.inc()
            self._sleep(wait)
        finally:
            with self._lock:
                self._total -= 1
                left = self._held[caller] - 1
                if left:
                    self._held[caller] = left
                else:
                    del self._held[caller]

    def held(self, caller: CallerKey | None = None) -> int:
        with self._lock:
            return self._total if caller is None else self._held.get(caller, 0)
