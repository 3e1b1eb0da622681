"""Per-caller limits that hold across a service's replicas and shards: rate budgets and stream slots kept
in Redis (servicekit.shared_store), so N replicas refuse a caller at the budget, not at N times it.

Rate budgets are the same token buckets as the in-process limiter's (servicekit.ratelimit), run in Redis
as GCRA, the token bucket written as one timestamp per caller: the "theoretical arrival time" of the
caller's next call. Redis' own clock is the only clock, so replicas whose clocks disagree still agree on
a budget. No maintained Python limiter fits: `limits` (and the others on PyPI) offer fixed, moving and
sliding windows, which cannot say "a burst of 30, then 10 a second" the way the services' budgets do.

Stream slots: a caller's open streams are leases in a sorted set, scored by when they lapse. The replica
that holds a stream renews its leases while the stream is open and removes the lease when it ends; a
replica that dies leaves leases that lapse within LEASE_SECONDS, so a crashed pod never pins a player's
slots for longer.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping, Sequence

from servicekit.ratelimit import CallerKey, Rate, RateLimit, RateLimiter
from servicekit.shared_store import SharedStore

# KEYS[1]: the caller's bucket. ARGV: seconds per call (1 / rate), burst. Returns "0" when the call may
# pass (and spends it), else the seconds until one will: as a string, since Redis truncates Lua numbers.
# A refused call spends nothing, as in the in-process bucket.
_GCRA = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) + tonumber(now_parts[2]) / 1000000
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local next_tat = tat + interval
local allowed_at = next_tat - interval * burst
if now < allowed_at then
  return string.format('%.6f', allowed_at - now)
end
redis.call('SET', KEYS[1], string.format('%.6f', next_tat), 'PX', math.ceil((next_tat - now) * 1000))
return '0'
"""


class SharedRateLimiter(RateLimiter):
    """servicekit.ratelimit.RateLimiter with its buckets in Redis; the process's own buckets answer while
    Redis does not (SharedStore.run says why failing open is right here)."""

    def __init__(
        self,
        store: SharedStore,
        limits: Sequence[RateLimit],
        overrides: Mapping[str, Rate | None] | None = None,
    ) -> None:
        super().__init__(store.service, limits, overrides)
        self._store = store
        self._gcra = store.script(_GCRA)

    def _take(self, key: tuple[CallerKey, str], rate: Rate) -> float:
        (role, subject), group = key
        bucket = self._store.key("rate", group, role, subject)

        def shared() -> float:
            return float(self._gcra(keys=[bucket], args=[repr(1.0 / rate.per_second), rate.burst]))

        return self._store.run("rate limit", shared, lambda: super(SharedRateLimiter, self)._take(key, rate))


# KEYS[1]: the caller's leases. ARGV: the most they may hold, the new lease, its life in ms. 1: taken.
_TAKE_LEASE = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
"""
# KEYS[1]: the caller's leases. ARGV: their life in ms, then the leases this replica still holds. XX: only
# leases still there are pushed on; one given back meanwhile is not brought back to pin the caller's slot
# (and one that lapsed in an outage stays gone: the caller is counted short until that stream ends).
_RENEW_LEASES = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
"""

LEASE_SECONDS = 30.0  # a dead replica's streams stop counting against their callers after this


class SharedStreamLeases:
    """The streams each caller holds across every replica of a service, as leases in Redis."""

    def __init__(
        self, store: SharedStore, lease_seconds: float = LEASE_SECONDS, renew_seconds: float | None = None
    ) -> None:
        self._store = store
        self._lease_ms = int(lease_seconds * 1000)
        # Renewed three times a lease's life: two renewals may fail before a live stream's lease lapses.
        self._renew_seconds = renew_seconds if renew_seconds is not None else lease_seconds / 3
        self._take_script = store.script(_TAKE_LEASE)
        self._renew_script = store.script(_RENEW_LEASES)
        self._lock = threading.Lock()
        self._held: dict[CallerKey, list[str]] = {}  # leases this replica holds, by caller
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    def take(self, caller: CallerKey, most: int) -> bool | None:
        """A lease for one more stream of `caller`'s, unless they hold `most` across the replicas (False);
        None when Redis does not answer (the process's own count decides)."""
        lease = uuid.uuid4().hex
        key = self._key(caller)

        def shared() -> bool | None:
            return bool(self._take_script(keys=[key], args=[most, lease, self._lease_ms]))

        taken = self._store.run("stream slot", shared, lambda: None)
        if taken:
            with self._lock:
                self._held.setdefault(caller, []).append(lease)
            self._start_renewing()
        return taken

    def give_back(self, caller: CallerKey) -> None:
        """Remove one of `caller`'s leases held here (none when the slot was taken while Redis was down)."""
        with self._lock:
            leases = self._held.get(caller)
            if not leases:
                return
            lease = leases.pop()
            if not leases:
                del self._held[caller]
        key = self._key(caller)
        self._store.run("stream slot", lambda: self._store.client.zrem(key, lease), lambda: 0)

    def held(self) -> int:
        with self._lock:
            return sum(len(leases) for leases in self._held.values())

    def renew(self) -> None:
        """Push the lapse of every lease held here LEASE_SECONDS ahead (three times a lease's life)."""
        with self._lock:
            held = [(caller, list(leases)) for caller, leases in self._held.items()]
        for caller, leases in held:
            self._renew_one(self._key(caller), leases)

    def _renew_one(self, key: str, leases: list[str]) -> None:
        self._store.run(
            "stream slot renewal",
            lambda: self._renew_script(keys=[key], args=[self._lease_ms, *leases]),
            lambda: None,
        )

    def close(self) -> None:
        self._stop.set()

    def _key(self, caller: CallerKey) -> str:
        return self._store.key("streams", *caller)

    def _start_renewing(self) -> None:
        with self._lock:
            if self._renewer is not None:
                return
            self._renewer = threading.Thread(
                target=self._renew_forever, name=f"{self._store.service}-leases", daemon=True
            )
        self._renewer.start()

    def _renew_forever(self) -> None:
        while not self._stop.wait(self._renew_seconds):
            try:
                self.renew()
            except Exception:  # the renewer must live on, or the leases would lapse under live streams
                self._store.log.exception("stream_lease_renewal_failed")
