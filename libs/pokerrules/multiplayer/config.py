"""Table parameters the engine needs for one hand: game variant, betting limit, blinds and the ante.

The ante is a **big blind ante** (TDA rules since 2019, WSOP): the player in the big blind posts one ante
for the whole table, after the blind (TDA 2024: "big blind first" when the stack cannot cover both), and the
ante is dead money in the main pot, never part of the live bet. One poster per hand instead of one per
player: fewer chips moved, nothing to collect from players who are already all-in, and the same total as a
per-player ante of ante / players. A short big blind posts its blind first, then what is left of the ante,
and is all-in on the ante if that is all it had (PokerKit's `antes` field with dead antes, PHH).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Limit(enum.Enum):
    NO_LIMIT = "no-limit"  # NK-3.1: maximum = the whole stack
    POT_LIMIT = "pot-limit"  # NK-3.7: maximum = pot-size raise


class Variant(enum.Enum):
    """Game variants; Naiko mode is Hold'em plus powers (NK-1.3, NK-1.5)."""

    HOLDEM = "holdem"
    OMAHA = "omaha"

    @property
    def hole_cards(self) -> int:
        # NK-1.3: two hole cards in Hold'em; NK-1.4: four in Omaha.
        return 2 if self is Variant.HOLDEM else 4


@dataclass(frozen=True, slots=True)
class GameConfig:
    variant: Variant
    limit: Limit
    small_blind: int
    big_blind: int
    ante: int = 0  # big blind ante, posted by the big blind for the table (0 = none)

    def __post_init__(self) -> None:
        if not (self.small_blind > 0 and self.big_blind == 2 * self.small_blind):
            raise ValueError("blinds must satisfy 0 < small_blind and big_blind = 2 x small_blind (MP-2.3)")
        if self.ante < 0:
            raise ValueError("the ante must not be negative")

    @classmethod
    def nlhe(cls, small_blind: int, big_blind: int, ante: int = 0) -> GameConfig:
        """No-Limit Hold'em (NK-A1: Hold'em and Naiko mode are No-Limit)."""
        return cls(Variant.HOLDEM, Limit.NO_LIMIT, small_blind, big_blind, ante)

    @classmethod
    def plo(cls, small_blind: int, big_blind: int, ante: int = 0) -> GameConfig:
        """Pot-Limit Omaha."""
        return cls(Variant.OMAHA, Limit.POT_LIMIT, small_blind, big_blind, ante)
