"""Card codes and text, as in the evaluator: code = 4 × rank_index + suit_index, text like `As` `Td` `2c`.

A shoe of n decks holds the codes 0..51 n times; positions (not codes) tell copies apart.
"""

from __future__ import annotations

RANKS = "23456789TJQKA"
SUITS = "cdhs"
DECK_SIZE = 52
MIN_DECKS = 1
MAX_DECKS = 8


def card_text(code: int) -> str:
    """The text of a card code: 0 -> `2c`, 51 -> `As`."""
    if not 0 <= code < DECK_SIZE:
        raise ValueError(f"card code out of range: {code}")
    return RANKS[code // 4] + SUITS[code % 4]


def card_code(text: str) -> int:
    """The code of a card's text; rank case-insensitive, suit lower or upper case, `10` accepted for T."""
    cleaned = text.strip()
    if cleaned[:2] == "10":
        cleaned = "T" + cleaned[2:]
    if len(cleaned) != 2:
        raise ValueError(f"not a card: {text!r}")
    rank = RANKS.find(cleaned[0].upper())
    suit = SUITS.find(cleaned[1].lower())
    if rank < 0 or suit < 0:
        raise ValueError(f"not a card: {text!r}")
    return 4 * rank + suit


CARD_TEXTS: tuple[str, ...] = tuple(card_text(code) for code in range(DECK_SIZE))
