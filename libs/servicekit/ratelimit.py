"""Per-caller rate limits: a token bucket per caller and group of RPCs, configured by each service.

A service names its limits in its ServiceSpec (`rate_limits`): a group of RPCs that share one bucket per
caller (JoinTable and LeaveTable share "seating", so a join/leave loop spends one budget), with one rate
for players and anonymous callers and another, much higher, for the platform's own callers (services and
operators): a flood of players never spends the table service's budget at the dealer or the wallet.

A call past its caller's budget is refused at once, before the servicer runs, with RESOURCE_EXHAUSTED,
reason RATE_LIMITED and a google.rpc.RetryInfo saying when one more call will pass; refusing costs no
lock of any table, so one player's flood cannot slow another table.

Buckets live in memory, per process, in an LRU of at most `max_callers` (caller, group) entries: memory
stays bounded whatever the number of callers, and a bucket that falls out comes back full (a caller
that idle has nothing to pay back). With FELT_<SERVICE>_WORKERS=N each worker keeps its own buckets.
That is the embedded default; with FELT_REDIS_URL every replica and worker of a service spends one
budget per caller, kept in Redis (servicekit.shared_limits), and these buckets answer while Redis does not.

Settings: FELT_<SERVICE>_RATE_<GROUP>=<per second>:<burst> (players) and
FELT_<SERVICE>_PLATFORM_RATE_<GROUP>=... (services and operators); `off` lifts a limit.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from servicekit import errors, metrics

RATE_LIMITED = "RATE_LIMITED"
MAX_CALLERS = 50_000  # (caller, group) buckets kept per process: ~10 MB at most
MAX_REFUSALS = 4_096  # refusals kept to answer again (by RPC and whole milliseconds to wait)

CallerKey = tuple[str, str]  # (role, subject); anonymous callers: ("anonymous", peer host)


@dataclass(frozen=True)
class Rate:
    """A token bucket: `burst` calls at once, refilled at `per_second`."""

    per_second: float
    burst: int

    def __post_init__(self) -> None:
        if not self.per_second > 0 or self.burst < 1:
            raise ValueError("a rate needs a positive rate per second and a burst of at least 1")

    @staticmethod
    def parse(raw: str) -> Rate | None:
        """`<per second>:<burst>` (e.g. `10:30`), or `off` for no limit."""
        text = raw.strip().lower()
        if text == "off":
            return None
        per_second, sep, burst = text.partition(":")
        if not sep:
            raise ValueError("write <per second>:<burst>, e.g. 10:30, or off")
        return Rate(float(per_second), int(burst))

    def __str__(self) -> str:
        return f"{self.per_second:g}/s, bursts of {self.burst}"


@dataclass(frozen=True)
class RateLimit:
    """One budget per caller, shared by `methods` (method names of the service's gRPC services)."""

    group: str  # lower_snake; FELT_<SERVICE>_RATE_<GROUP> and FELT_<SERVICE>_PLATFORM_RATE_<GROUP>
    methods: tuple[str, ...]
    player: Rate | None  # players and anonymous callers; None: no limit
    platform: Rate | None  # services and operators; None: no limit


class RateLimiter:
    def __init__(
        self,
        service: str,
        limits: Sequence[RateLimit],
        overrides: Mapping[str, Rate | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_callers: int = MAX_CALLERS,
    ) -> None:
        """`overrides`: `group` for the players' rate, `platform:group` for the platform's."""
        self._service = service
        self._clock = clock
        self._max_callers = max_callers
        overrides = dict(overrides or {})
        groups = {limit.group for limit in limits}
        unknown = sorted(k for k in overrides if k.removeprefix("platform:") not in groups)
        if unknown:
            raise ValueError(
                f"{service}: rate settings for unknown groups {unknown}; its groups: {sorted(groups)}"
            )
        self.limits: dict[str, RateLimit] = {}
        self._by_method: dict[str, tuple[str, Rate | None, Rate | None]] = {}
        for limit in limits:
            player = overrides.get(limit.group, limit.player)
            platform = overrides.get(f"platform:{limit.group}", limit.platform)
            self.limits[limit.group] = RateLimit(limit.group, limit.methods, player, platform)
            for method in limit.methods:
                if method in self._by_method:
                    raise ValueError(f"{service}: {method} is in two rate groups")
                self._by_method[method] = (limit.group, player, platform)
        self._buckets: OrderedDict[tuple[CallerKey, str], list[float]] = OrderedDict()
        self._refusals: dict[tuple[str, Rate, int], errors.DomainError] = {}
        self._lock = threading.Lock()
        self._size = metrics.RATE_LIMIT_BUCKETS.labels(service)

    @property
    def methods(self) -> set[str]:
        return set(self._by_method)

    def check(self, grpc_service: str, grpc_method: str, caller: CallerKey, platform: bool) -> None:
        """Spend one call of the caller's budget for `grpc_method`; RESOURCE_EXHAUSTED when none is left."""
        found = self._by_method.get(grpc_method)
        if found is None:
            return
        group, player_rate, platform_rate = found
        rate = platform_rate if platform else player_rate
        if rate is None:
            return
        wait = self._take((caller, group), rate)
        if wait > 0:
            metrics.RATE_LIMITED.labels(grpc_service, grpc_method).inc()
            raise self._refusal(grpc_method, rate, math.ceil(wait * 1000))

    def _refusal(self, grpc_method: str, rate: Rate, wait_ms: int) -> errors.DomainError:
        """The refusal saying to retry in `wait_ms`: made once per RPC and wait (a flood is mostly
        refusals: issue 24), so the interceptor answers the same one with the status it made for it."""
        key = (grpc_method, rate, wait_ms)
        refusal = self._refusals.get(key)
        if refusal is None:
            if len(self._refusals) >= MAX_REFUSALS:
                self._refusals.clear()
            refusal = errors.resource_exhausted_retry(
                RATE_LIMITED,
                f"too many {grpc_method} calls: at most {rate}; retry in {wait_ms} ms",
                wait_ms / 1000,
                rpc=grpc_method,
                limit=rate,
            )
            self._refusals[key] = refusal
        return refusal

    def _take(self, key: tuple[CallerKey, str], rate: Rate) -> float:
        """0 when a token was taken, else the seconds until one is there."""
        now = self._clock()
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = [float(rate.burst), now]
                self._buckets[key] = bucket
                if len(self._buckets) > self._max_callers:
                    self._buckets.popitem(last=False)
                self._size.set(len(self._buckets))
            else:
                self._buckets.move_to_end(key)
            tokens = min(float(rate.burst), bucket[0] + max(0.0, now - bucket[1]) * rate.per_second)
            bucket[1] = now
            if tokens >= 1.0:
                bucket[0] = tokens - 1.0
                return 0.0
            bucket[0] = tokens
            return (1.0 - tokens) / rate.per_second

    def __len__(self) -> int:
        return len(self._buckets)
