"""The one domain error of the betting engine: a refused command, with an UPPER_SNAKE reason."""

from __future__ import annotations

from refusal import Kind, Refusal


class IllegalAction(Refusal):
    """A command the rules do not allow now. The state it was applied to is unchanged.

    `reason` is a stable UPPER_SNAKE code (NOT_YOUR_TURN, BELOW_MIN_RAISE, ...); `details` carries the
    dynamic values (min, max, ...) as strings. An action illegal now is FAILED_PRECONDITION; an amount
    that is no amount at all (INVALID_AMOUNT) is invalid input naming `amount`.
    """

    def __init__(self, reason: str, message: str = "", **details: object) -> None:
        if reason == INVALID_AMOUNT:
            super().__init__(Kind.INVALID_ARGUMENT, reason, message, field="amount", details=details)
        else:
            super().__init__(Kind.FAILED_PRECONDITION, reason, message, details=details)


# Reasons, listed once so services and tests spell them the same way.
NOT_YOUR_TURN = "NOT_YOUR_TURN"
HAND_OVER = "HAND_OVER"
UNKNOWN_SEAT = "UNKNOWN_SEAT"
CANNOT_CHECK = "CANNOT_CHECK"
NOTHING_TO_CALL = "NOTHING_TO_CALL"
CHECK_AVAILABLE = "CHECK_AVAILABLE"
CANNOT_BET = "CANNOT_BET"
CANNOT_RAISE = "CANNOT_RAISE"
RAISE_NOT_REOPENED = "RAISE_NOT_REOPENED"
NOBODY_TO_RAISE = "NOBODY_TO_RAISE"
BELOW_MIN_BET = "BELOW_MIN_BET"
BELOW_MIN_RAISE = "BELOW_MIN_RAISE"
ABOVE_POT_LIMIT = "ABOVE_POT_LIMIT"
ABOVE_STACK = "ABOVE_STACK"
INVALID_AMOUNT = "INVALID_AMOUNT"
INVALID_SETUP = "INVALID_SETUP"
NO_NEXT_STREET = "NO_NEXT_STREET"
NOT_YOUR_CARD = "NOT_YOUR_CARD"
DECK_EXHAUSTED = "DECK_EXHAUSTED"
