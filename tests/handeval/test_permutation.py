"""Permuting the input order never changes a result (strength, category, best cards, description)."""

from __future__ import annotations

from handeval import Rule, evaluate, evaluate_batch, strength7
from hypothesis import given, settings
from hypothesis import strategies as st

cards7 = st.lists(st.integers(0, 51), min_size=7, max_size=7, unique=True)
cards9 = st.lists(st.integers(0, 51), min_size=9, max_size=9, unique=True)
cards3 = st.lists(st.integers(0, 51), min_size=3, max_size=3, unique=True)


@settings(max_examples=300, deadline=None)  # timing varies on the shared CI machine
@given(cards7, st.randoms(use_true_random=False), st.integers(0, 2))
def test_holdem_is_order_independent(cards: list[int], rnd: object, drop: int) -> None:
    cards = cards[: 7 - drop]  # 5, 6 or 7 cards
    shuffled = list(cards)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    split = rnd.randint(0, len(cards))  # type: ignore[attr-defined]
    a = evaluate(Rule.HOLDEM, cards[:2], cards[2:])
    b = evaluate(Rule.HOLDEM, shuffled[:split], shuffled[split:])
    assert a == b
    packed = bytes(cards) + bytes(shuffled)
    assert list(evaluate_batch(Rule.HOLDEM, len(cards), packed).strengths) == [a.strength] * 2
    if len(cards) == 7:
        assert strength7(*shuffled) == a.strength


@settings(max_examples=200, deadline=None)  # timing varies on the shared CI machine
@given(cards9, st.randoms(use_true_random=False), st.integers(0, 2))
def test_omaha_is_order_independent_within_hole_and_board(cards: list[int], rnd: object, drop: int) -> None:
    hole, board = cards[:4], cards[4 : 9 - drop]
    hole2, board2 = list(hole), list(board)
    rnd.shuffle(hole2)  # type: ignore[attr-defined]
    rnd.shuffle(board2)  # type: ignore[attr-defined]
    assert evaluate(Rule.OMAHA, hole, board) == evaluate(Rule.OMAHA, hole2, board2)


@settings(deadline=None)
@given(cards3, st.permutations([0, 1, 2]))
def test_three_card_is_order_independent(cards: list[int], order: list[int]) -> None:
    assert evaluate(Rule.THREE_CARD, cards) == evaluate(Rule.THREE_CARD, [cards[i] for i in order])
    assert evaluate(Rule.THREE_CARD, cards[:1], cards[1:]) == evaluate(Rule.THREE_CARD, cards)
