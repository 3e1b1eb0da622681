"""Bearer tokens a client sends, renewed before they expire.

A service that calls others (table -> dealer, wallet; tournament -> table, wallet, dealer) signs its own
service token. A token minted once at start-up expires after `auth.DEFAULT_TTL_SECONDS` and every call
made after that is refused, so clients hold a token *source* instead: `RenewingToken` mints a new token
once most of the current one's life is used (at `RENEW_AT` of it), on an injectable clock, so renewal is
testable across many lifetimes in no time. Where the token comes from elsewhere and cannot be renewed
(`felt play --token`), `GivenToken` says so once before it expires and once when it has.

Pass a source where a token is expected: `servicekit.client.channel(address, source)` asks it for the
token on every call (a cheap comparison with the clock) and, when a dependency answers TOKEN_EXPIRED
anyway (its clock is ahead of ours), renews once and sends the call again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol

import prometheus_client

from servicekit import auth
from servicekit.config import ServerConfig

RENEW_AT = 0.8  # of a token's lifetime: a 12 h token is renewed after 9.6 h, with 2.4 h to spare
WARN_BEFORE_SECONDS = 600.0  # a given token's holder is warned this long before it expires

TOKEN_EXPIRES = prometheus_client.Gauge(
    "felt_client_token_expiry_timestamp_seconds",
    "When the service token this process sends expires (Unix time); renewed at 80% of its life.",
    ["service"],
    multiprocess_mode="livemin",
)
TOKEN_RENEWALS = prometheus_client.Counter(
    "felt_client_token_renewals_total", "Service tokens minted again before they expired.", ["service"]
)


class TokenSource(Protocol):
    """What a channel asks for the token of each call."""

    def __call__(self) -> str: ...

    def renew(self) -> None:
        """Mint a new token now (after a dependency said ours expired); a no-op where that is impossible."""


class RenewingToken:
    """The token of (subject, role), signed with `keys`, minted anew at `RENEW_AT` of its lifetime."""

    def __init__(
        self,
        keys: auth.Keys,
        subject: str,
        role: auth.Role,
        ttl_seconds: int = auth.DEFAULT_TTL_SECONDS,
        clock: Callable[[], float] = time.time,
        metrics_service: str | None = None,
    ) -> None:
        if ttl_seconds < 2:
            raise ValueError("a renewing token lives at least 2 seconds")
        self._keys, self._subject, self._role = keys, subject, role
        self._ttl = ttl_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._metrics = metrics_service
        self._token = ""
        self._renew_at = float("-inf")
        self.expires_at = 0.0
        self._mint(renewal=False)

    @property
    def subject(self) -> str:
        return self._subject

    @property
    def role(self) -> auth.Role:
        return self._role

    def __call__(self) -> str:
        if self._clock() >= self._renew_at:
            with self._lock:
                if self._clock() >= self._renew_at:  # another thread may have renewed meanwhile
                    self._mint(renewal=True)
        return self._token

    def renew(self) -> None:
        with self._lock:
            self._mint(renewal=True)

    def _mint(self, renewal: bool) -> None:
        now = self._clock()
        self._token = auth.issue_token(self._keys, self._subject, self._role, self._ttl, now=now)
        issued = int(now)
        self.expires_at = float(issued + self._ttl)
        self._renew_at = issued + self._ttl * RENEW_AT
        if self._metrics is not None:
            TOKEN_EXPIRES.labels(self._metrics).set(self.expires_at)
            if renewal:
                TOKEN_RENEWALS.labels(self._metrics).inc()


def service_token(keys: auth.Keys, service: str, config: ServerConfig) -> RenewingToken:
    """The token a service signs for its own calls to others: subject = its name, role SERVICE, renewed
    before it expires. Tests may set `auth_clock=` (the wall clock it expires on) and
    `service_token_ttl_seconds=` in the config's overrides."""
    return RenewingToken(
        keys,
        service,
        auth.Role.SERVICE,
        int(config.extra.get("service_token_ttl_seconds", auth.DEFAULT_TTL_SECONDS)),
        clock=config.extra.get("auth_clock") or time.time,
        metrics_service=service,
    )


class GivenToken:
    """A token issued elsewhere: sent as it is, with a warning (through `warn`) once it has less than
    `warn_before` seconds left, and another once it has expired. It cannot be renewed here."""

    def __init__(
        self,
        token: str,
        warn: Callable[[str], None],
        clock: Callable[[], float] = time.time,
        warn_before: float = WARN_BEFORE_SECONDS,
    ) -> None:
        self._token = token
        self._warn = warn
        self._clock = clock
        self.expires_at = auth.expiry_of(token)
        self._warn_before = warn_before
        self._warned: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self) -> str:
        if self.expires_at is not None:
            left = self.expires_at - self._clock()
            if left <= 0:
                self._once("expired", "your token has expired: calls are refused; get a new one (--token)")
            elif left <= self._warn_before:
                minutes = max(1, round(left / 60))
                self._once("soon", f"your token expires in about {minutes} min and cannot be renewed here")
        return self._token

    def renew(self) -> None:
        """Impossible without the signing key: the warnings say what to do."""

    def _once(self, key: str, message: str) -> None:
        with self._lock:
            if key in self._warned:
                return
            self._warned.add(key)
        self._warn(message)
