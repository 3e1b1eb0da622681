"""handeval: C-accelerated poker hand evaluator (Hold'em, Omaha, three-card poker) and equity.

See docs/evaluator.md for the algorithm, the strength scale and the limits.
"""

from handeval.api import (
    DEFAULT_ITERATIONS,
    DEFAULT_VS_RANDOM_ITERATIONS,
    EXACT_MAX_BOARDS,
    MAX_BATCH_HANDS,
    MAX_EQUITY_HANDS,
    MAX_ITERATIONS,
    MIN_EQUITY_HANDS,
    category_of,
    equity,
    equity_vs_random,
    evaluate,
    evaluate_batch,
    strength7,
)
from handeval.cards import RANKS, SUITS, CardError, card_text, parse_card, parse_cards
from handeval.errors import InvalidHand
from handeval.values import BatchResult, Category, EquityResult, HandValue, Rule

__all__ = [
    "DEFAULT_ITERATIONS",
    "DEFAULT_VS_RANDOM_ITERATIONS",
    "EXACT_MAX_BOARDS",
    "MAX_BATCH_HANDS",
    "MAX_EQUITY_HANDS",
    "MAX_ITERATIONS",
    "MIN_EQUITY_HANDS",
    "RANKS",
    "SUITS",
    "BatchResult",
    "CardError",
    "Category",
    "EquityResult",
    "HandValue",
    "InvalidHand",
    "Rule",
    "card_text",
    "category_of",
    "equity",
    "equity_vs_random",
    "evaluate",
    "evaluate_batch",
    "parse_card",
    "parse_cards",
    "strength7",
]
