"""Calls the interceptor refuses before their servicer runs (rate limits, caps, tokens, stream slots,
calls in flight): every one counted, a sample of them logged.

A flood is mostly refusals: one log line each (~490 bytes) let one anonymous client write 12.5 MB in
15 s (issue 24). So a refusal is counted in `felt_rpc_refused_total` (by method, reason and protocol: no
per-caller label, its size stays bounded) and logged only when it is the first of its caller and reason
in an interval; the ones after it are counted, and one `rpc_refused_summary` line says how many when
the interval is over. A flood writes at most two short lines per caller, reason and interval.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from servicekit import metrics
from servicekit.logging import get_logger

INTERVAL_SECONDS = 10.0
MAX_KEYS = 10_000  # (caller, reason) windows held: past it the oldest is summed up and dropped

# (caller key, reason): who is refused and why; a caller refused before its token was read is its peer.
Key = tuple[tuple[str, str], str]


class _Window:
    __slots__ = ("ends", "methods", "suppressed")

    def __init__(self, ends: float) -> None:
        self.ends = ends
        self.suppressed = 0
        self.methods: dict[str, int] = {}


class RefusalLog:
    def __init__(
        self,
        service: str,
        interval: float = INTERVAL_SECONDS,
        max_keys: int = MAX_KEYS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._service = service
        self._interval = interval
        self._max_keys = max_keys
        self._clock = clock
        self._lock = threading.Lock()
        self._windows: OrderedDict[Key, _Window] = OrderedDict()
        self._next_sweep = clock() + interval
        self._log = get_logger()

    def refused(
        self,
        grpc_service: str,
        grpc_method: str,
        protocol: str,
        reason: str,
        caller: tuple[str, str],
        fields: Callable[[], dict[str, Any]],
    ) -> None:
        """Count one refusal; log it if it opens its caller's and reason's interval. `fields()` go on the
        line (the gRPC code, the duration, the request id): made only for a line written."""
        metrics.RPC_REFUSED.labels(grpc_service, grpc_method, reason, protocol).inc()
        key = (caller, reason)
        now = self._clock()
        ended: list[tuple[Key, _Window]] = []
        with self._lock:
            if now >= self._next_sweep:
                ended = self._sweep(now)
            window = self._windows.get(key)
            if window is not None and now < window.ends:
                window.suppressed += 1
                window.methods[grpc_method] = window.methods.get(grpc_method, 0) + 1
                window = None  # counted: no line
            else:
                if window is not None:
                    ended.append((key, self._windows.pop(key)))
                self._windows[key] = _Window(now + self._interval)
                while len(self._windows) > self._max_keys:
                    ended.append(self._windows.popitem(last=False))
                window = self._windows[key]
        for old_key, old in ended:
            self._summary(old_key, old)
        if window is not None:
            self._log.info(
                "rpc",
                service=self._service,
                rpc=grpc_method,
                reason=reason,
                protocol=protocol,
                caller=caller[1],
                caller_role=caller[0],
                sampled=f"the first of {self._interval:g} s; the others are counted",
                **fields(),
            )

    def flush(self) -> None:
        """Write the summary of every interval still open (the server stops)."""
        with self._lock:
            ended = list(self._windows.items())
            self._windows.clear()
        for key, window in ended:
            self._summary(key, window)

    def _sweep(self, now: float) -> list[tuple[Key, _Window]]:
        """The intervals over by `now`, taken out (under the lock)."""
        self._next_sweep = now + self._interval
        ended = [(k, w) for k, w in self._windows.items() if now >= w.ends]
        for key, _window in ended:
            del self._windows[key]
        return ended

    def _summary(self, key: Key, window: _Window) -> None:
        if not window.suppressed:
            return
        (role, subject), reason = key
        self._log.info(
            "rpc_refused_summary",
            service=self._service,
            reason=reason,
            caller=subject,
            caller_role=role,
            refused=window.suppressed,
            by_rpc=window.methods,
            interval_s=self._interval,
        )
