"""Errors of the dealing domain. Each carries an UPPER_SNAKE reason; the service maps them to gRPC once.

Messages are for people and never contain a seed, a salt or a card: they may end up in logs and in
responses to callers who must not learn the deck.
"""

from __future__ import annotations


class DealingError(Exception):
    """Base of the dealing errors: `reason` is stable (clients branch on it), `message` is prose."""

    reason: str = "DEALING_ERROR"

    def __init__(self, message: str, reason: str | None = None, **metadata: object) -> None:
        super().__init__(message)
        self.message = message
        if reason is not None:
            self.reason = reason
        self.metadata: dict[str, str] = {key: str(value) for key, value in metadata.items()}

    def __str__(self) -> str:
        return f"{self.reason}: {self.message}"


class InvalidRequest(DealingError):
    """Malformed input (decks out of range, a count below 1, a bad label); `field` names the culprit."""

    reason = "INVALID_ARGUMENT"

    def __init__(self, field: str, message: str, reason: str, **metadata: object) -> None:
        super().__init__(message, reason, **metadata)
        self.field = field


class EntropyUnavailable(DealingError):
    """The OS CSPRNG failed or produced a suspect output: refuse to deal, never fall back."""

    reason = "ENTROPY_UNAVAILABLE"


class ShoeNotFound(DealingError):
    reason = "SHOE_NOT_FOUND"


class ShoeClosed(DealingError):
    """The shoe was closed or expired: nothing more is dealt from it."""

    reason = "SHOE_CLOSED"


class ShoeStillOpen(DealingError):
    """Reveal of a shoe that can still deal: the seed would expose undealt cards."""

    reason = "SHOE_OPEN"


class ShoeExhausted(DealingError):
    """Dealing, burning or peeking past the last card."""

    reason = "SHOE_EXHAUSTED"


class RequestConflict(DealingError):
    """A request id reused with different parameters."""

    reason = "REQUEST_ID_REUSED"


class TooManyShoes(DealingError):
    reason = "TOO_MANY_SHOES"
