"""How often a service's garbage collector runs (FELT_GC_THRESHOLDS), and its pauses as a metric.

Why: a full (generation-2) collection walks the whole heap of a long-running service (a table shard's
tables) and holds the GIL meanwhile, tens of milliseconds; every call in flight waits. CPython collects
the young generation every 700 net allocations, so under load objects that live for one call (a request's
dicts, the browser door's asyncio and HTTP objects) are often still alive at a young collection, get
promoted, die old, and bring on full collections (bench/results/door.md: the door's p99 was those pauses).
A larger young threshold lets them die young by reference counting; the objects built at start-up are
frozen out of every collection (gc.freeze).
"""

from __future__ import annotations

import gc
import time
from typing import Any

import prometheus_client

from servicekit.config import setting

# (young, middle, old): a young collection after 20,000 net new container objects (~1 ms to walk), the
# middle one every 20 young ones, the old one every 20 middle ones and, as CPython requires anyway, once
# the objects promoted since the last full collection are a quarter of the old generation.
DEFAULT_THRESHOLDS = (20_000, 20, 20)
CPYTHON_DEFAULTS = (700, 10, 10)  # FELT_GC_THRESHOLDS=700,10,10: the interpreter's own pacing

PAUSE_SECONDS = prometheus_client.Histogram(
    "python_gc_pause_seconds",
    "Time the garbage collector held the interpreter, per collection, by generation collected.",
    ["generation"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
)


def parse_thresholds(raw: str) -> tuple[int, int, int]:
    """'young,middle,old' as three positive whole numbers."""
    parts = [part.strip() for part in raw.split(",")]
    if len(parts) != 3:
        raise ValueError("expected three numbers: young,middle,old (CPython's own: 700,10,10)")
    young, middle, old = (int(part) for part in parts)
    if min(young, middle, old) <= 0:
        raise ValueError("each threshold must be positive")
    return young, middle, old


class _PauseTimer:
    """gc.callbacks entry: times each collection into PAUSE_SECONDS."""

    def __init__(self) -> None:
        self._started = 0.0
        self._children = {generation: PAUSE_SECONDS.labels(str(generation)) for generation in range(3)}

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self._children[info["generation"]].observe(time.perf_counter() - self._started)


_timer: _PauseTimer | None = None


def configure(environ: dict[str, str] | None = None) -> tuple[int, int, int]:
    """Set the collector's thresholds and time its pauses (once per process); returns the thresholds."""
    global _timer
    thresholds = setting("FELT_GC_THRESHOLDS", DEFAULT_THRESHOLDS, parse=parse_thresholds, environ=environ)
    gc.set_threshold(*thresholds)
    if _timer is None:
        _timer = _PauseTimer()
        gc.callbacks.append(_timer)
    return thresholds


def freeze_startup_objects() -> None:
    """After start-up: what exists now (modules, descriptors, servicers) is never walked again."""
    gc.collect()
    gc.freeze()
