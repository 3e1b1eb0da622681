"""Domain errors of the casino engines: a refused command changes nothing and says why."""

from __future__ import annotations

from collections.abc import Mapping

from refusal import Kind, Refusal


class CasinoError(Refusal):
    """A command the rules refuse: `reason` UPPER_SNAKE (the gRPC ErrorInfo reason), `metadata` the values.
    FAILED_PRECONDITION unless `_KINDS` says otherwise."""

    def __init__(self, reason: str, message: str, metadata: Mapping[str, object] | None = None) -> None:
        kind, field = _KINDS.get(reason, (Kind.FAILED_PRECONDITION, None))
        super().__init__(kind, reason, message, field=field, details=metadata)


# Every reason an engine may give (all FAILED_PRECONDITION except those marked, listed in `_KINDS`).
BETTING_CLOSED = "BETTING_CLOSED"
SEAT_NOT_FOUND = "SEAT_NOT_FOUND"  # NOT_FOUND
SEAT_NOT_YOURS = "SEAT_NOT_YOURS"  # PERMISSION_DENIED
BET_NOT_OFFERED = "BET_NOT_OFFERED"  # INVALID_ARGUMENT
BET_NOT_POSITIVE = "BET_NOT_POSITIVE"  # INVALID_ARGUMENT
BET_BELOW_MINIMUM = "BET_BELOW_MINIMUM"
BET_ABOVE_MAXIMUM = "BET_ABOVE_MAXIMUM"
SIDE_BET_WITHOUT_ANTE = "SIDE_BET_WITHOUT_ANTE"
INSUFFICIENT_CHIPS = "INSUFFICIENT_CHIPS"
NO_PREVIOUS_BETS = "NO_PREVIOUS_BETS"
NO_BETS = "NO_BETS"
DECK_INVALID = "DECK_INVALID"  # INVALID_ARGUMENT
DECK_TOO_SHORT = "DECK_TOO_SHORT"  # INVALID_ARGUMENT
CARRY_INVALID = "CARRY_INVALID"  # INVALID_ARGUMENT: the pool carry given to Deal is not 0..9999
WRONG_DECK_SET = "WRONG_DECK_SET"
NOT_DECISION_TIME = "NOT_DECISION_TIME"
WRONG_STREET = "WRONG_STREET"
NOT_IN_HAND = "NOT_IN_HAND"
ALREADY_DECIDED = "ALREADY_DECIDED"
DECISION_NOT_ALLOWED = "DECISION_NOT_ALLOWED"
ROUND_FINISHED = "ROUND_FINISHED"
ONE_POSITION_PER_PLAYER = "ONE_POSITION_PER_PLAYER"  # THB-1.2

_KINDS: dict[str, tuple[Kind, str | None]] = {
    SEAT_NOT_FOUND: (Kind.NOT_FOUND, None),
    SEAT_NOT_YOURS: (Kind.PERMISSION_DENIED, None),
    BET_NOT_OFFERED: (Kind.INVALID_ARGUMENT, "bets"),
    BET_NOT_POSITIVE: (Kind.INVALID_ARGUMENT, "bets"),
    DECK_INVALID: (Kind.INVALID_ARGUMENT, "deck"),
    DECK_TOO_SHORT: (Kind.INVALID_ARGUMENT, "deck"),
    CARRY_INVALID: (Kind.INVALID_ARGUMENT, "deck"),
}
