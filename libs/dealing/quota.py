"""How many shoes each caller may hold and create, so that no caller can exhaust the dealer for others.

Without quotas any caller could fill the dealer's cap (FELT_DEALER_MAX_SHOES, 100,000) in about 100 s and
no table could start a hand until those shoes were forgotten, an hour later. Now:

- every caller holds at most `Quota.shoes` shoes at once (open ones, and ended ones not yet forgotten:
  both take memory, and counting only open shoes would let a caller create-and-close its way to the cap);
- every caller creates at most `Quota.per_second` new shoes a second, in bursts of up to `Quota.burst`
  (a token bucket; every attempt within the holding quota costs a token, refused or not);
- services (the platform's table and tournament services) have their own, larger quota, and a share of
  the cap (`service_share`) is theirs alone: callers that are not services together hold at most the
  rest, so however many player accounts an attacker uses, the tables still get their shoes.

Refusals are `TooManyShoes` (RESOURCE_EXHAUSTED) with the reason and a retry delay. Time comes from the
book's injectable clock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Quota:
    """What one caller may hold and create."""

    shoes: int  # held at once: open, and ended but not yet forgotten
    per_second: float  # new shoes a second, sustained
    burst: int  # new shoes at once after a quiet spell

    def split(self, parts: int) -> Quota:
        """This quota shared by `parts` processes that each enforce their part (none rounds to 0)."""
        return Quota(
            shoes=max(1, math.ceil(self.shoes / parts)),
            per_second=self.per_second / parts,
            burst=max(1, math.ceil(self.burst / parts)),
        )


@dataclass(frozen=True)
class QuotaSettings:
    caller: Quota = field(
        default_factory=lambda: Quota(shoes=64, per_second=2.0, burst=20)
    )  # players, operators
    service: Quota = field(default_factory=lambda: Quota(shoes=100_000, per_second=2_000.0, burst=2_000))
    service_share: float = 0.5  # of the book's cap that only services may use

    def __post_init__(self) -> None:
        if not 0 <= self.service_share < 1:
            raise ValueError("service_share is a fraction of the cap: 0 <= share < 1")

    def split(self, parts: int) -> QuotaSettings:
        """The quotas of one of `parts` worker processes: each caller's divided among them; a service's
        whole in each (a service calls over one connection, so its calls land on one worker, and 1/N
        there would starve the tables); the share is of each worker's own cap."""
        if parts <= 1:
            return self
        return replace(self, caller=self.caller.split(parts))


class TokenBucket:
    """`burst` tokens, refilled at `per_second`; a creation takes one."""

    __slots__ = ("_at", "_burst", "_rate", "_tokens")

    def __init__(self, per_second: float, burst: int, now: float) -> None:
        self._rate = per_second
        self._burst = float(burst)
        self._tokens = float(burst)
        self._at = now

    def _refill(self, now: float) -> None:
        if now > self._at:
            self._tokens = min(self._burst, self._tokens + (now - self._at) * self._rate)
            self._at = now

    def take(self, now: float) -> float:
        """0.0 when a token was taken; otherwise the seconds until one will be there (none is taken)."""
        self._refill(now)
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return 0.0
        return (1.0 - self._tokens) / self._rate

    def full(self, now: float) -> bool:
        self._refill(now)
        return self._tokens >= self._burst
