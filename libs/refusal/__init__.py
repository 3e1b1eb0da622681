"""The one refusal of the platform: a command the rules, the ledger or the platform will not carry out.

Every core (betting engine, table, casino games, ledger, dealing) and every service raises `Refusal`
(or a thin subclass of it that keeps its call sites short). A refusal carries

- its `kind`: what sort of refusal it is (invalid input naming the field, illegal now, not found, ...),
- its `reason`: a stable UPPER_SNAKE code clients branch on (NOT_YOUR_TURN, INSUFFICIENT_FUNDS),
- its `message`: prose for people, never a secret (no seed, salt, card or token),
- its `details`: the dynamic values (min, max, seat, account_id) as strings,
- for INVALID_ARGUMENT its field violations, and optionally a retry delay (rate limits, quotas).

This package is pure: no gRPC, no I/O, so the cores that raise it stay pure. servicekit's server
interceptor maps a refusal to a gRPC status (code from the kind, google.rpc ErrorInfo, BadRequest,
RetryInfo) in one place. A refused command changes nothing.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


class Kind(enum.Enum):
    """What sort of refusal; each is one gRPC status code of the same name (ARCHITECTURE "Errors")."""

    INVALID_ARGUMENT = "INVALID_ARGUMENT"  # malformed input: names the offending field
    FAILED_PRECONDITION = "FAILED_PRECONDITION"  # illegal now: not your turn, bet under the minimum
    NOT_FOUND = "NOT_FOUND"
    ALREADY_EXISTS = "ALREADY_EXISTS"  # also a request id reused for another request
    ABORTED = "ABORTED"  # a stale expected_version or a lost race: re-read and retry
    OUT_OF_RANGE = "OUT_OF_RANGE"  # past the end (a shoe's last card)
    PERMISSION_DENIED = "PERMISSION_DENIED"  # authenticated, but not allowed this
    UNAUTHENTICATED = "UNAUTHENTICATED"  # no valid credentials
    RESOURCE_EXHAUSTED = "RESOURCE_EXHAUSTED"  # a quota or rate limit: retry later
    UNAVAILABLE = "UNAVAILABLE"  # a dependency is away: retry (with the same request id)


@dataclass(frozen=True)
class FieldViolation:
    field: str
    description: str


class Refusal(Exception):
    """A refused command: kind, reason, message, details (and field violations, retry delay)."""

    kind: Kind
    reason: str
    message: str
    details: dict[str, str]
    violations: tuple[FieldViolation, ...]
    retry_after_seconds: float | None

    def __init__(
        self,
        kind: Kind,
        reason: str,
        message: str = "",
        *,
        field: str | None = None,
        details: Mapping[str, object] | None = None,
        violations: Sequence[FieldViolation] = (),
        retry_after_seconds: float | None = None,
    ) -> None:
        super().__init__(message or reason)
        self.kind = kind
        self.reason = reason
        self.message = message or reason
        self.details = {k: str(v) for k, v in (details or {}).items()}
        found = tuple(violations)
        if field is not None:
            self.details = {"field": field, **self.details}
            if not any(v.field == field for v in found):
                found = (FieldViolation(field, self.message), *found)
        self.violations = found
        self.retry_after_seconds = retry_after_seconds

    @property
    def field(self) -> str | None:
        """The first offending field of an INVALID_ARGUMENT refusal."""
        return self.violations[0].field if self.violations else None

    @property
    def metadata(self) -> dict[str, str]:
        """The details under the name gRPC's ErrorInfo gives them."""
        return self.details

    def __str__(self) -> str:
        return self.reason if self.message == self.reason else f"{self.reason}: {self.message}"

    def __reduce__(self) -> tuple[object, ...]:
        # Exceptions pickle as cls(*args); the subclasses' constructors differ, so rebuild from the state.
        return (_rebuild, (type(self), dict(self.__dict__)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.kind.value}, {self.reason!r}, {self.message!r})"


def _rebuild(cls: type[Refusal], state: dict[str, object]) -> Refusal:
    refusal = cls.__new__(cls)
    Exception.__init__(refusal, state.get("message", ""))
    refusal.__dict__.update(state)
    return refusal


def invalid_argument(field: str, reason: str, message: str, **details: object) -> Refusal:
    """Malformed input, naming the offending field."""
    return Refusal(Kind.INVALID_ARGUMENT, reason, message, field=field, details=details)


def failed_precondition(reason: str, message: str, **details: object) -> Refusal:
    return Refusal(Kind.FAILED_PRECONDITION, reason, message, details=details)


def not_found(reason: str, message: str, **details: object) -> Refusal:
    return Refusal(Kind.NOT_FOUND, reason, message, details=details)


def permission_denied(reason: str, message: str, **details: object) -> Refusal:
    return Refusal(Kind.PERMISSION_DENIED, reason, message, details=details)


__all__ = [
    "FieldViolation",
    "Kind",
    "Refusal",
    "failed_precondition",
    "invalid_argument",
    "not_found",
    "permission_denied",
]
