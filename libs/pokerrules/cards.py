"""Card codes: code = 4 × rank_index + suit_index (deuce = 0; suits c d h s = 0..3)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

RANKS = "23456789TJQKA"
SUITS = "cdhs"
DECK_SIZE = 52


def card_code(text: str) -> int:
    """`'As'` -> 51. Raises ValueError for anything that is not one card."""
    if len(text) != 2 or text[0] not in RANKS or text[1] not in SUITS:
        raise ValueError(f"not a card: {text!r}")
    return 4 * RANKS.index(text[0]) + SUITS.index(text[1])


def card_text(code: int) -> str:
    if not 0 <= code < DECK_SIZE:
        raise ValueError(f"not a card code: {code}")
    return RANKS[code >> 2] + SUITS[code & 3]


def parse_cards(text: str) -> tuple[int, ...]:
    """`'AsKd'` or `'As Kd'` -> codes."""
    compact = text.replace(" ", "").replace(",", "")
    if len(compact) % 2:
        raise ValueError(f"not a list of cards: {text!r}")
    return tuple(card_code(compact[i : i + 2]) for i in range(0, len(compact), 2))


def cards_text(codes: Iterable[int], sep: str = "") -> str:
    return sep.join(card_text(c) for c in codes)


def ordered_deck() -> list[int]:
    return list(range(DECK_SIZE))


def check_deck(deck: Sequence[int]) -> None:
    """A deck is a sequence of distinct valid codes (NK-1.1, NK-1.2: no card twice in a hand)."""
    if len(set(deck)) != len(deck) or any(not 0 <= c < DECK_SIZE for c in deck):
        raise ValueError("deck must be distinct card codes in 0..51")
