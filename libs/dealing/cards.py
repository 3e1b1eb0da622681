"""The dealer's card vocabulary: the evaluator's codes and text (code = 4 × rank_index + suit_index).

A shoe of n decks holds the codes 0..51 n times; positions (not codes) tell copies apart. The
stand-alone verifier (verifier.py) keeps its own copy of these few lines on purpose: it imports nothing.
"""

from __future__ import annotations

from handeval.cards import DECK_SIZE, RANKS, SUITS, card_text, parse_card

MIN_DECKS = 1
MAX_DECKS = 8
CARD_TEXTS: tuple[str, ...] = tuple(card_text(code) for code in range(DECK_SIZE))

__all__ = ["CARD_TEXTS", "DECK_SIZE", "MAX_DECKS", "MIN_DECKS", "RANKS", "SUITS", "card_text", "parse_card"]
