"""Errors of the dealing domain: refusals (the platform's one `Refusal`), each with an UPPER_SNAKE
reason and a kind, mapped to gRPC once by the platform.

Messages are for people and never contain a seed, a salt or a card: they may end up in logs and in
responses to callers who must not learn the deck.
"""

from __future__ import annotations

from refusal import Kind, Refusal


class DealingError(Refusal):
    """Base of the dealing errors: `reason` is stable (clients branch on it), `message` is prose; the
    subclass says the kind (FAILED_PRECONDITION unless it says otherwise)."""

    default_reason: str = "DEALING_ERROR"
    default_kind: Kind = Kind.FAILED_PRECONDITION

    def __init__(self, message: str, reason: str | None = None, **metadata: object) -> None:
        super().__init__(self.default_kind, reason or self.default_reason, message, details=metadata)


class InvalidRequest(DealingError):
    """Malformed input (decks out of range, a count below 1, a bad label); `field` names the culprit."""

    default_reason = "INVALID_ARGUMENT"
    default_kind = Kind.INVALID_ARGUMENT

    def __init__(self, field: str, message: str, reason: str, **metadata: object) -> None:
        Refusal.__init__(self, Kind.INVALID_ARGUMENT, reason, message, field=field, details=metadata)


class EntropyUnavailable(DealingError):
    """The OS CSPRNG failed or produced a suspect output: refuse to deal, never fall back."""

    default_reason = "ENTROPY_UNAVAILABLE"
    default_kind = Kind.UNAVAILABLE


class ShoeNotFound(DealingError):
    default_reason = "SHOE_NOT_FOUND"
    default_kind = Kind.NOT_FOUND


class ShoeClosed(DealingError):
    """The shoe was closed or expired: nothing more is dealt from it."""

    default_reason = "SHOE_CLOSED"


class ShoeStillOpen(DealingError):
    """Reveal of a shoe that can still deal: the seed would expose undealt cards."""

    default_reason = "SHOE_OPEN"


class ShoeExhausted(DealingError):
    """Dealing, burning or peeking past the last card."""

    default_reason = "SHOE_EXHAUSTED"
    default_kind = Kind.OUT_OF_RANGE


class RequestConflict(DealingError):
    """A request id reused with different parameters."""

    default_reason = "REQUEST_ID_REUSED"
    default_kind = Kind.ALREADY_EXISTS


class TooManyShoes(DealingError):
    """The dealer, or this caller's quota, holds its most shoes; `retry_after_seconds` says when one
    is likely free again."""

    default_reason = "TOO_MANY_SHOES"
    default_kind = Kind.RESOURCE_EXHAUSTED

    def __init__(
        self,
        message: str,
        reason: str | None = None,
        retry_after_seconds: float | None = None,
        **metadata: object,
    ) -> None:
        super().__init__(message, reason, **metadata)
        self.retry_after_seconds = retry_after_seconds


class DrawRefused(DealingError):
    """A labelled draw the shoe cannot make: its label was drawn with other outcomes (one draw per label
    and shoe, so the record an auditor checks is unambiguous), or the shoe's draws are used up."""

    default_reason = "DRAW_LABEL_USED"


class ShoeAwaitingSeeds(DealingError):
    """A shoe committed with `await_client_seeds` has no order until `DealHand` gives its client seeds:
    nothing can be dealt, burned, peeked at or drawn from it before."""

    default_reason = "SHOE_AWAITING_SEEDS"


class ShoeNotAwaitingSeeds(DealingError):
    """`DealHand` on a shoe whose order is fixed already (sealed by an earlier `DealHand`, or a v1 shoe
    shuffled at creation): its client seeds cannot be given (again)."""

    default_reason = "SHOE_NOT_AWAITING_SEEDS"
