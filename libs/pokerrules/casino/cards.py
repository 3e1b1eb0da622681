"""Card codes as the casino engines use them: the project's one card vocabulary (`handeval.cards`: code =
4 × rank_index + suit_index, deuce = 0; c d h s = 0..3) plus the rank constants and helpers the rules read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from handeval.cards import DECK_SIZE, RANKS, SUITS, card_text, parse_card

from pokerrules.cards import parse_cards as cards  # "As Kd" -> codes

__all__ = ["DECK_SIZE", "RANKS", "SUITS", "card_text", "cards"]

ACE = 12
KING = 11
QUEEN = 10
JACK = 9
TEN = 8
FOUR = 2


def rank_of(code: int) -> int:
    return code >> 2


def suit_of(code: int) -> int:
    return code & 3


def card(text: str) -> int:
    """`'As'` -> 51; `'10h'` is a ten (handeval's parser)."""
    return parse_card(text)


def cards_text(codes: Iterable[int]) -> str:
    return " ".join(card_text(c) for c in codes)


def is_valid_deck(deck: Sequence[int]) -> bool:
    return len(set(deck)) == len(deck) and all(0 <= c < DECK_SIZE for c in deck)


def stacked_deck(first: Sequence[int]) -> tuple[int, ...]:
    """A full deck dealing `first` first, then the other cards in code order (replays, worked examples)."""
    taken = set(first)
    if len(taken) != len(first):
        raise ValueError("a card appears twice")
    return (*first, *(c for c in range(DECK_SIZE) if c not in taken))
