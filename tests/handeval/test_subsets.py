"""The 6/7-card and Omaha results equal the best of their legal five-card subsets; an independent
reference ranking agrees on random hands."""

from __future__ import annotations

import itertools
import random

import numpy as np
from handeval import Rule, evaluate, evaluate_batch

from tests.handeval.reference import best_of, omaha_best, rank5


def _random_hands(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """n random hands of k distinct cards (argsort of random keys = a random permutation prefix)."""
    return np.argsort(rng.random((n, 52)), axis=1)[:, :k].astype(np.uint8)


def _strengths(rule: Rule, k: int, hands: np.ndarray) -> np.ndarray:
    return np.frombuffer(
        evaluate_batch(rule, k, np.ascontiguousarray(hands).tobytes()).strengths, dtype=np.uint32
    )


def test_seven_cards_equal_best_of_21_subsets_on_a_million_random_hands() -> None:
    rng = np.random.default_rng(20261130)
    n = 1_000_000
    for chunk in range(4):
        hands = _random_hands(rng, n // 4, 7)
        seven = _strengths(Rule.HOLDEM, 7, hands)
        subsets = list(itertools.combinations(range(7), 5))
        assert len(subsets) == 21
        fives = hands[:, subsets].reshape(-1, 5)  # 21 five-card hands per seven-card hand
        best = _strengths(Rule.HOLDEM, 5, fives).reshape(-1, 21).max(axis=1)
        assert np.array_equal(seven, best), f"chunk {chunk}"


def test_six_cards_equal_best_of_6_subsets() -> None:
    rng = np.random.default_rng(6)
    hands = _random_hands(rng, 100_000, 6)
    six = _strengths(Rule.HOLDEM, 6, hands)
    subsets = list(itertools.combinations(range(6), 5))
    best = _strengths(Rule.HOLDEM, 5, hands[:, subsets].reshape(-1, 5)).reshape(-1, 6).max(axis=1)
    assert np.array_equal(six, best)


def test_omaha_equals_best_of_60_legal_combinations() -> None:
    """NK-1.4: exactly two of the four hole cards and exactly three of the five board cards."""
    rng = np.random.default_rng(1004)
    hands = _random_hands(rng, 200_000, 9)
    omaha = _strengths(Rule.OMAHA, 9, hands)
    combos = [
        h + b for h in itertools.combinations(range(4), 2) for b in itertools.combinations(range(4, 9), 3)
    ]
    assert len(combos) == 60
    best = _strengths(Rule.HOLDEM, 5, hands[:, combos].reshape(-1, 5)).reshape(-1, 60).max(axis=1)
    assert np.array_equal(omaha, best)


def test_omaha_with_three_and_four_board_cards_matches_the_reference() -> None:
    rng = random.Random(34)
    for _ in range(300):
        cards = rng.sample(range(52), 4 + rng.choice((3, 4, 5)))
        hole, board = cards[:4], cards[4:]
        value = evaluate(Rule.OMAHA, hole, board)
        # the strength must equal the strength of the reference's best legal hand
        ref = omaha_best(hole, board)
        assert rank5(value.best) == ref
        assert sum(c in hole for c in value.best) == 2


def test_strength_order_matches_an_independent_reference() -> None:
    """Random pairs of hands: the C strengths order them exactly as the reference keys do."""
    rng = random.Random(7)
    for _ in range(3_000):
        n = rng.choice((5, 6, 7))
        a, b = rng.sample(range(52), n), rng.sample(range(52), n)
        va, vb = evaluate(Rule.HOLDEM, a[:2], a[2:]), evaluate(Rule.HOLDEM, b[:2], b[2:])
        ra, rb = best_of(a), best_of(b)
        assert (va.strength > vb.strength) == (ra > rb)
        assert (va.strength == vb.strength) == (ra == rb)
        assert rank5(va.best) == ra, "best cards are a best five-card subset"


def test_every_five_card_class_against_the_reference(all_five_card_hands: np.ndarray) -> None:
    """One hand of each of the 7,462 classes: the strength order is the reference order."""
    hands = all_five_card_hands
    strengths = _strengths(Rule.HOLDEM, 5, hands)
    _, first = np.unique(strengths, return_index=True)
    keys = [rank5(hands[i].tolist()) for i in first]  # ascending strength
    assert len(keys) == 7_462
    assert keys == sorted(keys) and len(set(keys)) == 7_462
