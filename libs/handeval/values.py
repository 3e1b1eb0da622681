"""Result and enum types of the evaluator API (values match the proto enums)."""

from __future__ import annotations

import array
import enum
from dataclasses import dataclass


class Rule(enum.Enum):
    """Which game's hand rules apply (values = proto HandRule numbers)."""

    HOLDEM = 1
    OMAHA = 2
    THREE_CARD = 3


class Category(enum.IntEnum):
    """Hand category (values = proto HandCategory numbers).

    The numbers are labels, not an order across rules: under THREE_CARD a STRAIGHT beats a FLUSH
    (TCP-4.1). Compare hands by strength. ROYAL_FLUSH is the ace-high straight flush; under THREE_CARD
    it is the Mini Royal Flush A-K-Q suited (TCP-4.1, paid on the Royal Flush row, TCP-5.1).
    """

    HIGH_CARD = 1
    PAIR = 2
    TWO_PAIR = 3
    THREE_OF_A_KIND = 4
    STRAIGHT = 5
    FLUSH = 6
    FULL_HOUSE = 7
    FOUR_OF_A_KIND = 8
    STRAIGHT_FLUSH = 9
    ROYAL_FLUSH = 10


@dataclass(frozen=True)
class HandValue:
    """One evaluated hand: strength (higher wins, equal exactly on a tie), category, best cards, text."""

    strength: int
    category: Category
    best: tuple[int, ...]
    description: str


@dataclass(frozen=True)
class BatchResult:
    """Per-hand strengths (array 'I') and categories (array 'B' of Category values)."""

    strengths: array.array  # type: ignore[type-arg]
    categories: array.array  # type: ignore[type-arg]


@dataclass(frozen=True)
class EquityResult:
    """Per-hand equity (wins + shared pots, as a fraction of samples), win and tie counts."""

    equities: tuple[float, ...]
    wins: tuple[int, ...]
    ties: tuple[int, ...]
    samples: int
    exact: bool
