"""Hand strength as the casino engines need it, behind a small protocol so the evaluator is a dependency.

The default ranker is the C evaluator `handeval`. Everything here beyond the protocol reads facts off a
ranked hand (its category and best five cards) that the rules ask about: the rank of a pair, A-A, etc.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from handeval import Category  # the evaluator's categories, one definition

from pokerrules.casino.cards import rank_of, suit_of


@dataclass(frozen=True)
class Ranked:
    strength: int  # higher wins; equal strengths tie
    category: Category
    best: tuple[int, ...]  # the cards that make the hand


class HandRanker(Protocol):
    def best_five(self, cards: Sequence[int]) -> Ranked:
        """The best five-card poker hand out of 5 to 7 cards (any combination)."""
        ...

    def three_card(self, cards: Sequence[int]) -> Ranked:
        """A three-card poker hand (TCP-4.1: straight above flush)."""
        ...


class HandevalRanker:
    """The C evaluator. Imported lazily so the engines load (and their pure parts test) without it."""

    def __init__(self) -> None:
        import handeval

        self._h: Any = handeval

    def best_five(self, cards: Sequence[int]) -> Ranked:
        value = self._h.evaluate(self._h.Rule.HOLDEM, list(cards[:2]), list(cards[2:]))
        return Ranked(int(value.strength), Category(int(value.category)), tuple(value.best))

    def three_card(self, cards: Sequence[int]) -> Ranked:
        value = self._h.evaluate(self._h.Rule.THREE_CARD, list(cards), [])
        return Ranked(int(value.strength), Category(int(value.category)), tuple(value.best))


_default: HandRanker | None = None


def default_ranker() -> HandRanker:
    global _default
    if _default is None:
        _default = HandevalRanker()
    return _default


def pair_rank(hand: Ranked) -> int | None:
    """The rank index of the pair of a One Pair hand, else None."""
    if hand.category != Category.PAIR:
        return None
    counts = Counter(rank_of(c) for c in hand.best)
    return max(r for r, n in counts.items() if n == 2)


def is_pair_of(cards: Sequence[int], rank: int) -> bool:
    return len(cards) == 2 and rank_of(cards[0]) == rank == rank_of(cards[1])


def is_mini_royal(cards: Sequence[int]) -> bool:
    """TCP-4.1: A-K-Q of one suit."""
    return len({suit_of(c) for c in cards}) == 1 and sorted(rank_of(c) for c in cards) == [10, 11, 12]


def high_rank(cards: Sequence[int]) -> int:
    return max(rank_of(c) for c in cards)
