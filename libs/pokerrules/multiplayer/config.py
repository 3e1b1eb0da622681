"""Table parameters the engine needs for one hand: game variant, betting limit and blinds."""

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

    def __post_init__(self) -> None:
        if not (self.small_blind > 0 and self.big_blind == 2 * self.small_blind):
            raise ValueError("blinds must satisfy 0 < small_blind and big_blind = 2 x small_blind (MP-2.3)")

    @classmethod
    def nlhe(cls, small_blind: int, big_blind: int) -> GameConfig:
        """No-Limit Hold'em (NK-A1: Hold'em and Naiko mode are No-Limit)."""
        return cls(Variant.HOLDEM, Limit.NO_LIMIT, small_blind, big_blind)

    @classmethod
    def plo(cls, small_blind: int, big_blind: int) -> GameConfig:
        """Pot-Limit Omaha."""
        return cls(Variant.OMAHA, Limit.POT_LIMIT, small_blind, big_blind)
