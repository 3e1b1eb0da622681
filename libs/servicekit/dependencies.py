"""The services this process calls, and whether they accept our credentials.

A dependency that refuses our token (UNAUTHENTICATED, or PERMISSION_DENIED for our role or name) will
refuse every call until someone acts: an expired or unrenewable token, a rotated signing key, a service
account's role changed. Without a sign of it the process looked healthy while no hand could start. So
the client channel (`servicekit.client.channel(..., dependency=...)`) reports each call's outcome here:

- `felt_client_credentials_refused{service, dependency}` is 1 while the dependency refuses us, and
  `felt_client_refused_calls_total{service, dependency, grpc_code}` counts the refused calls
  (alert FeltDependencyRefusesCredentials);
- the service's health is NOT_SERVING while any dependency refuses us (ServiceSpec.dependencies);
- the first call the dependency accepts again (any answer past its authentication) clears it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import grpc
import prometheus_client

from servicekit.logging import get_logger
from servicekit.metrics import code_label

CREDENTIALS_REFUSED = prometheus_client.Gauge(
    "felt_client_credentials_refused",
    "1 while a dependency refuses this service's credentials (UNAUTHENTICATED or PERMISSION_DENIED).",
    ["service", "dependency"],
    multiprocess_mode="livemax",
)
REFUSED_CALLS = prometheus_client.Counter(
    "felt_client_refused_calls_total",
    "Calls to a dependency refused for this service's credentials.",
    ["service", "dependency", "grpc_code"],
)
REFUSING_CODES = frozenset({grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED})
# Answers that never reached the dependency's authentication: they say nothing about our credentials.
_UNDECIDED = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED}
)


class Dependency:
    """One service this process calls (`name`), seen from the calls of `service` (this process)."""

    def __init__(self, service: str, name: str) -> None:
        self.service = service
        self.name = name
        self._refusing = False
        self._lock = threading.Lock()
        self._listeners: list[Callable[[], None]] = []
        self._gauge = CREDENTIALS_REFUSED.labels(service, name)
        self._gauge.set(0)
        for code in REFUSING_CODES:
            REFUSED_CALLS.labels(service, name, code_label(code))
        self._log = get_logger(service=service)

    @property
    def refusing(self) -> bool:
        return self._refusing

    def watch(self, listener: Callable[[], None]) -> None:
        """Call `listener` (no arguments) whenever `refusing` changes."""
        with self._lock:
            self._listeners.append(listener)

    def observe(self, code: grpc.StatusCode, reason: str = "") -> None:
        """The outcome of one call: refused for our credentials, accepted, or undecided (not reached)."""
        if code in REFUSING_CODES:
            REFUSED_CALLS.labels(self.service, self.name, code_label(code)).inc()
            self._set(True, code, reason)
        elif code not in _UNDECIDED:
            self._set(False, code, reason)

    def _set(self, refusing: bool, code: grpc.StatusCode, reason: str) -> None:
        with self._lock:
            if refusing == self._refusing:
                return
            self._refusing = refusing
            listeners = list(self._listeners)
        self._gauge.set(1 if refusing else 0)
        if refusing:  # the reason (TOKEN_EXPIRED, ROLE_NOT_ALLOWED, ...), never the token
            self._log.error(
                "dependency_refuses_credentials", dependency=self.name, grpc_code=code.name, reason=reason
            )
        else:
            self._log.info("dependency_accepts_credentials", dependency=self.name)
        for listener in listeners:
            listener()
