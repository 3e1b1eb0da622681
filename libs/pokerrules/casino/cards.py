"""Card codes as the casino engines use them: code = 4 × rank_index + suit_index (deuce = 0; c d h s = 0..3).

Kept local to the casino package so the engines depend on nothing but the evaluator.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

RANKS = "23456789TJQKA"
SUITS = "cdhs"
DECK_SIZE = 52
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
    """`'As'` -> 51; `'10h'` is accepted for a ten."""
    text = text.strip().replace("10", "T")
    if len(text) != 2 or text[0].upper() not in RANKS or text[1].lower() not in SUITS:
        raise ValueError(f"not a card: {text!r}")
    return 4 * RANKS.index(text[0].upper()) + SUITS.index(text[1].lower())


def cards(text: str) -> tuple[int, ...]:
    """`'As Kd'` or `'AsKd'` -> codes."""
    compact = text.replace("10", "T").replace(" ", "").replace(",", "")
    if len(compact) % 2:
        raise ValueError(f"not a list of cards: {text!r}")
    return tuple(card(compact[i : i + 2]) for i in range(0, len(compact), 2))


def card_text(code: int) -> str:
    if not 0 <= code < DECK_SIZE:
        raise ValueError(f"not a card code: {code}")
    return RANKS[code >> 2] + SUITS[code & 3]


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
