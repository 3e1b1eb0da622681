"""Card codes and card text.

code = 4 × rank_index + suit_index (deuce = 0; clubs, diamonds, hearts, spades = 0..3).
"""

from __future__ import annotations

from collections.abc import Iterable

RANKS = "23456789TJQKA"
SUITS = "cdhs"
DECK_SIZE = 52


class CardError(ValueError):
    """A card text or code that names no card."""

    def __init__(self, text: str, reason: str = "UNKNOWN_CARD") -> None:
        super().__init__(f"unknown card {text!r}: expected rank of {RANKS} (or 10) then suit of {SUITS}")
        self.text = text
        self.reason = reason


def parse_card(text: str) -> int:
    """Code of a card text: "As", "as", "10s" (= "Ts"); raises CardError otherwise."""
    if not isinstance(text, str):
        raise CardError(repr(text))
    raw = text.strip()
    body = raw[:-1].upper()
    if body == "10":
        body = "T"
    if len(raw) < 2 or len(body) != 1:
        raise CardError(text)
    rank = RANKS.find(body)
    suit = SUITS.find(raw[-1].lower())
    if rank < 0 or suit < 0:
        raise CardError(text)
    return 4 * rank + suit


def parse_cards(texts: Iterable[str]) -> list[int]:
    """Codes of several card texts, in order."""
    return [parse_card(t) for t in texts]


def card_text(code: int) -> str:
    """Canonical text of a code 0..51 ("As", "Td", "2c")."""
    if not isinstance(code, int) or isinstance(code, bool) or not 0 <= code < 52:
        raise CardError(repr(code))
    return RANKS[code >> 2] + SUITS[code & 3]


def cards_text(codes: Iterable[int], sep: str = "") -> str:
    """Canonical text of several codes: [51, 46] -> "AsKd" (or "As Kd" with sep=" ")."""
    return sep.join(card_text(c) for c in codes)
