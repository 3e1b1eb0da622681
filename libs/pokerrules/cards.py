"""Card codes for the rules core: the evaluator's vocabulary (handeval.cards) plus decks and compact text.

code = 4 × rank_index + suit_index (deuce = 0; suits c d h s = 0..3).
"""

from __future__ import annotations

from collections.abc import Sequence

from handeval.cards import DECK_SIZE, RANKS, SUITS, card_text, cards_text
from handeval.cards import parse_card as card_code

__all__ = [
    "DECK_SIZE",
    "RANKS",
    "SUITS",
    "card_code",
    "card_text",
    "cards_text",
    "check_deck",
    "ordered_deck",
    "parse_cards",
]


def parse_cards(text: str) -> tuple[int, ...]:
    """`'AsKd'`, `'As Kd'` or `'10h 9c'` -> codes."""
    compact = text.replace("10", "T").replace(" ", "").replace(",", "")
    if len(compact) % 2:
        raise ValueError(f"not a list of cards: {text!r}")
    return tuple(card_code(compact[i : i + 2]) for i in range(0, len(compact), 2))


def ordered_deck() -> list[int]:
    return list(range(DECK_SIZE))


def check_deck(deck: Sequence[int]) -> None:
    """A deck is a sequence of distinct valid codes (NK-1.1, NK-1.2: no card twice in a hand)."""
    if len(set(deck)) != len(deck) or any(not 0 <= c < DECK_SIZE for c in deck):
        raise ValueError("deck must be distinct card codes in 0..51")
