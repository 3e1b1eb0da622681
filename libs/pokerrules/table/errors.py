"""The one domain error of the table core: a refused command, with an UPPER_SNAKE reason."""

from __future__ import annotations

from refusal import Kind, Refusal


class TableError(Refusal):
    """A table command the rules do not allow now; the state it was applied to is unchanged.

    `reason` is a stable UPPER_SNAKE code; `details` carries the dynamic values (min, max, seat, ...) as
    strings, like `IllegalAction` of the betting engine. Most reasons are FAILED_PRECONDITION; the few
    others are in `_KINDS` (a seat number or amount that is no such thing names its field).
    """

    def __init__(self, reason: str, message: str = "", **details: object) -> None:
        kind, field = _KINDS.get(reason, (Kind.FAILED_PRECONDITION, None))
        super().__init__(kind, reason, message, field=field, details=details)


# Reasons, listed once so services and tests spell them the same way.
INVALID_CONFIG = "INVALID_CONFIG"
NO_SUCH_SEAT = "NO_SUCH_SEAT"
SEAT_TAKEN = "SEAT_TAKEN"
ALREADY_SEATED = "ALREADY_SEATED"
NOT_SEATED = "NOT_SEATED"
NOT_INVITED = "NOT_INVITED"
NOT_HOST = "NOT_HOST"
BOTS_NOT_ALLOWED = "BOTS_NOT_ALLOWED"
BUY_IN_BELOW_MIN = "BUY_IN_BELOW_MIN"
BUY_IN_ABOVE_MAX = "BUY_IN_ABOVE_MAX"
INVALID_AMOUNT = "INVALID_AMOUNT"
IN_HAND = "IN_HAND"  # the player's chips are in play: top-up waits for the hand's end
HAND_IN_PROGRESS = "HAND_IN_PROGRESS"
NO_HAND_IN_PROGRESS = "NO_HAND_IN_PROGRESS"
NOT_ENOUGH_PLAYERS = "NOT_ENOUGH_PLAYERS"
ALREADY_SITTING_OUT = "ALREADY_SITTING_OUT"
NOT_SITTING_OUT = "NOT_SITTING_OUT"
NO_CHIPS = "NO_CHIPS"  # a busted player sits in only after a re-buy
TIME_EXPIRED = "TIME_EXPIRED"
ALREADY_CONNECTED = "ALREADY_CONNECTED"
ALREADY_DISCONNECTED = "ALREADY_DISCONNECTED"
LEAVING = "LEAVING"
TOURNAMENT_TABLE = "TOURNAMENT_TABLE"  # wallet buy-ins and leaving with chips are for cash tables
NOT_TOURNAMENT_TABLE = "NOT_TOURNAMENT_TABLE"  # the director's commands are for tournament tables
TABLE_CLOSED = "TABLE_CLOSED"
HANDS_HELD = "HANDS_HELD"  # Pace.DIRECTOR: the next hand waits for the director's release
SEED_HAND_NOT_OPEN = "SEED_HAND_NOT_OPEN"  # a client seed for a hand whose seeds are not being collected

_KINDS: dict[str, tuple[Kind, str | None]] = {
    NOT_INVITED: (Kind.PERMISSION_DENIED, None),
    NO_SUCH_SEAT: (Kind.INVALID_ARGUMENT, "seat"),
    INVALID_AMOUNT: (Kind.INVALID_ARGUMENT, "amount"),
}
