"""Exhaustive passes: every 5-, 7- and 3-card hand gives the textbook category counts."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from handeval import Category, Rule, _core, category_of, evaluate_batch

FIVE_CARD_COUNTS = {
    Category.HIGH_CARD: 1_302_540,
    Category.PAIR: 1_098_240,
    Category.TWO_PAIR: 123_552,
    Category.THREE_OF_A_KIND: 54_912,
    Category.STRAIGHT: 10_200,
    Category.FLUSH: 5_108,
    Category.FULL_HOUSE: 3_744,
    Category.FOUR_OF_A_KIND: 624,
    Category.STRAIGHT_FLUSH: 36,
    Category.ROYAL_FLUSH: 4,
}

SEVEN_CARD_COUNTS = {
    Category.HIGH_CARD: 23_294_460,
    Category.PAIR: 58_627_800,
    Category.TWO_PAIR: 31_433_400,
    Category.THREE_OF_A_KIND: 6_461_620,
    Category.STRAIGHT: 6_180_020,
    Category.FLUSH: 4_047_644,
    Category.FULL_HOUSE: 3_473_184,
    Category.FOUR_OF_A_KIND: 224_848,
    Category.STRAIGHT_FLUSH: 37_260,
    Category.ROYAL_FLUSH: 4_324,
}

# TCP-4.1 categories over all C(52, 3) = 22,100 three-card hands.
THREE_CARD_COUNTS = {
    Category.HIGH_CARD: 16_440,
    Category.PAIR: 3_744,
    Category.FLUSH: 1_096,
    Category.STRAIGHT: 720,
    Category.THREE_OF_A_KIND: 52,
    Category.STRAIGHT_FLUSH: 44,
    Category.ROYAL_FLUSH: 4,  # Mini Royal Flush, A-K-Q suited
}


def _all_hands(n: int) -> bytes:
    combos = np.array(list(itertools.combinations(range(52), n)), dtype=np.uint8)
    return combos.tobytes()


def test_all_five_card_hands_through_the_batch_api(all_five_card_hands: np.ndarray) -> None:
    result = evaluate_batch(Rule.HOLDEM, 5, all_five_card_hands.tobytes())
    assert len(result.strengths) == 2_598_960
    counts = Counter(Category(c) for c in result.categories)
    assert counts == FIVE_CARD_COUNTS
    strengths = np.frombuffer(result.strengths, dtype=np.uint32)
    assert len(np.unique(strengths)) == 7_462
    assert strengths.min() == 1 and strengths.max() == 7_462


def test_all_seven_card_hands_through_the_c_enumeration() -> None:
    counts, distinct, hands = _core.enumerate7()
    assert hands == 133_784_560
    assert counts[0] == 0, "no seven-card hand may fall outside the strength table"
    assert {Category(i): counts[i] for i in range(1, 11)} == SEVEN_CARD_COUNTS
    assert distinct == 4_824  # seven cards can never make the 2,638 weakest five-card classes


def test_the_c_five_card_enumeration_agrees() -> None:
    counts, distinct, hands = _core.enumerate5()
    assert hands == 2_598_960 and distinct == 7_462
    assert {Category(i): counts[i] for i in range(1, 11)} == FIVE_CARD_COUNTS


def test_all_three_card_hands() -> None:
    result = evaluate_batch(Rule.THREE_CARD, 3, _all_hands(3))
    assert Counter(Category(c) for c in result.categories) == THREE_CARD_COUNTS
    assert len(set(result.strengths)) == 741


def test_strength_scale_boundaries_give_categories() -> None:
    starts = {
        1: Category.HIGH_CARD,
        1278: Category.PAIR,
        4138: Category.TWO_PAIR,
        4996: Category.THREE_OF_A_KIND,
        5854: Category.STRAIGHT,
        5864: Category.FLUSH,
        7141: Category.FULL_HOUSE,
        7297: Category.FOUR_OF_A_KIND,
        7453: Category.STRAIGHT_FLUSH,
        7462: Category.ROYAL_FLUSH,
    }
    for strength, category in starts.items():
        assert category_of(Rule.HOLDEM, strength) is category
        assert category_of(Rule.OMAHA, strength) is category
    assert category_of(Rule.HOLDEM, 1277) is Category.HIGH_CARD
    assert category_of(Rule.HOLDEM, 7461) is Category.STRAIGHT_FLUSH


@pytest.mark.slow
def test_all_seven_card_hands_through_the_batch_api() -> None:
    """The same 133,784,560 hands, packed by Python and ranked by `evaluate_batch`, one chunk per
    (first, second) card pair: the public API, not only the C enumeration, gives the textbook counts."""
    fives = {n: np.array(list(itertools.combinations(range(n), 5)), dtype=np.uint8) for n in range(5, 51)}
    totals = np.zeros(11, dtype=np.int64)
    hands = 0
    for first in range(52):
        for second in range(first + 1, 47):
            rest = fives[51 - second] + np.uint8(second + 1)
            chunk = np.empty((len(rest), 7), dtype=np.uint8)
            chunk[:, 0], chunk[:, 1], chunk[:, 2:] = first, second, rest
            result = evaluate_batch(Rule.HOLDEM, 7, chunk.tobytes())
            totals += np.bincount(np.frombuffer(result.categories, dtype=np.uint8), minlength=11)
            hands += len(rest)
    assert hands == 133_784_560
    assert {Category(i): int(totals[i]) for i in range(1, 11)} == SEVEN_CARD_COUNTS
