"""Commands a player sends and the legal-action view the engine offers the player to act."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ActionKind(enum.Enum):
    FOLD = "fold"
    CHECK = "check"
    CALL = "call"
    BET = "bet"  # opening bet of a round; `amount` is the total the player's round bet becomes
    RAISE = "raise"  # `amount` is the total ("raise to"), as in NK-3.7 and MP-A6
    ALL_IN = "all_in"  # MP-4.14: resolved to a call, bet or raise of the whole stack


@dataclass(frozen=True, slots=True)
class Action:
    kind: ActionKind
    amount: int = 0

    @classmethod
    def fold(cls) -> Action:
        return cls(ActionKind.FOLD)

    @classmethod
    def check(cls) -> Action:
        return cls(ActionKind.CHECK)

    @classmethod
    def call(cls) -> Action:
        return cls(ActionKind.CALL)

    @classmethod
    def bet(cls, amount: int) -> Action:
        return cls(ActionKind.BET, amount)

    @classmethod
    def raise_to(cls, amount: int) -> Action:
        return cls(ActionKind.RAISE, amount)

    @classmethod
    def all_in(cls) -> Action:
        return cls(ActionKind.ALL_IN)


@dataclass(slots=True)
class LegalActions:
    """What the player to act may do now (NK-3.4: the server shows the minimum and maximum).

    `call_amount` is the chips a call adds (capped at the stack: a short call is all-in).
    `bet_kind` is BET when nobody has bet this round, else RAISE; `min_to`/`max_to` are totals for the
    round ("bet/raise to"), and are 0 when betting or raising is not allowed. When the stack cannot reach
    a full raise the only raise is the all-in, so `min_to == max_to == all_in_to` (NK-3.5).
    `all_in_to` is where the whole stack would take the round bet; at Pot-Limit a stack above the pot-size
    raise cannot go all-in (NK-3.7), which `can_all_in` says.
    A fresh view is made on every call (not frozen only because that makes it slower to build).
    """

    seat: int
    can_fold: bool
    can_check: bool
    call_amount: int
    bet_kind: ActionKind
    min_to: int
    max_to: int
    all_in_to: int
    stack: int
    current_bet: int
    pot: int

    @property
    def can_call(self) -> bool:
        return self.call_amount > 0

    @property
    def can_bet_or_raise(self) -> bool:
        return self.max_to > 0

    @property
    def can_all_in(self) -> bool:
        """Whether ALL_IN is legal now: a call of the whole stack, or a bet/raise within max_to."""
        if self.call_amount == self.stack:
            return True
        return self.max_to > 0 and self.all_in_to <= self.max_to

    def clamp(self, amount: int) -> int:
        """The nearest legal bet/raise-to total; callers first check `can_bet_or_raise`."""
        return min(max(amount, self.min_to), self.max_to)
