"""The Python API: validation (field + reason), descriptions, best-card order, batch, fuzzing."""

from __future__ import annotations

import array
import contextlib
import random
import threading
from pathlib import Path

import handeval
import pytest
from handeval import (
    MAX_BATCH_HANDS,
    Category,
    InvalidHand,
    Rule,
    card_text,
    category_of,
    evaluate,
    evaluate_batch,
    parse_cards,
    strength7,
)
from hypothesis import given, settings
from hypothesis import strategies as st


def ev(text: str, rule: Rule = Rule.HOLDEM, nhole: int = 2) -> handeval.HandValue:
    codes = parse_cards(text.split())
    return evaluate(rule, codes[:nhole], codes[nhole:])


def test_the_compiled_core_is_the_one_loaded() -> None:
    core = Path(handeval._core.__file__)
    assert core.parent == Path(handeval.__file__).parent and core.suffix == ".so"


@pytest.mark.parametrize(
    ("text", "description", "best"),
    [
        ("Kh Kd 7s 7c As 2d 3c", "Two Pair, Kings and Sevens, Ace kicker", "Kh Kd 7s 7c As"),
        ("As Ks Qs Js Ts 2c 3d", "Royal Flush", "As Ks Qs Js Ts"),
        ("5s 4s 3s 2s As Kd Kc", "Straight Flush, Five high", "5s 4s 3s 2s As"),
        ("9c 9d 9h 9s Kd 2c 3c", "Four of a Kind, Nines, King kicker", "9s 9h 9d 9c Kd"),
        ("Kc Kh Kd As Ah 2c 2d", "Full House, Kings full of Aces", "Kh Kd Kc As Ah"),
        ("Jh 8h 6h 5h 2h 3c", "Flush, Jack-Eight-Six-Five-Deuce", "Jh 8h 6h 5h 2h"),
        ("Ac 2d 3h 4s 5c Kd", "Straight, Five high", "5c 4s 3h 2d Ac"),
        ("Ts Th Tc 6h 3d", "Three of a Kind, Tens, Six-Three kickers", "Ts Th Tc 6h 3d"),
        ("Ac Ah 8d 6h 5s", "Pair of Aces, Eight-Six-Five kickers", "Ah Ac 8d 6h 5s"),
        ("Qc Th 6d 5s 2h", "High Card, Queen-Ten-Six-Five-Deuce", "Qc Th 6d 5s 2h"),
    ],
)
def test_descriptions_and_canonical_best_order(text: str, description: str, best: str) -> None:
    value = ev(text)
    assert value.description == description
    assert value.best == tuple(parse_cards(best.split()))
    assert [card_text(c) for c in value.best] == best.split()


@pytest.mark.parametrize(
    ("text", "description", "category"),
    [
        ("Ah Kh Qh", "Mini Royal Flush", Category.ROYAL_FLUSH),
        ("7s 8s 9s", "Straight Flush, Nine high", Category.STRAIGHT_FLUSH),
        ("As 2d 3c", "Straight, Three high", Category.STRAIGHT),
        ("5d 5c 5h", "Three of a Kind, Fives", Category.THREE_OF_A_KIND),
        ("2h 7h Jh", "Flush, Jack-Seven-Deuce", Category.FLUSH),
        ("Ks Kd 4c", "Pair of Kings, Four kicker", Category.PAIR),
        ("Ac 9d 4s", "High Card, Ace-Nine-Four", Category.HIGH_CARD),
    ],
)
def test_three_card_descriptions(text: str, description: str, category: Category) -> None:
    value = ev(text, Rule.THREE_CARD, 3)
    assert (value.description, value.category) == (description, category)
    assert len(value.best) == 3


def test_three_card_ace_low_straight_orders_the_ace_last() -> None:
    assert [card_text(c) for c in ev("As 2d 3c", Rule.THREE_CARD, 3).best] == ["3c", "2d", "As"]


@pytest.mark.parametrize(
    ("rule", "hole", "board", "field", "reason"),
    [
        (Rule.HOLDEM, [51, 50], [1, 2], "hole_cards", "WRONG_CARD_COUNT"),
        (Rule.HOLDEM, [51, 50, 49], [1, 2, 3, 4, 5], "hole_cards", "WRONG_CARD_COUNT"),
        (Rule.HOLDEM, [51, 52], [1, 2, 3], "hole_cards", "UNKNOWN_CARD"),
        (Rule.HOLDEM, [51, 50], [1, 2, -1], "board", "UNKNOWN_CARD"),
        (Rule.HOLDEM, [51, 50], [1, 2, 51], "board", "DUPLICATE_CARD"),
        (Rule.HOLDEM, [51, 51], [1, 2, 3], "hole_cards", "DUPLICATE_CARD"),
        (Rule.OMAHA, [51, 50], [1, 2, 3], "hole_cards", "WRONG_CARD_COUNT"),
        (Rule.OMAHA, [51, 50, 49, 48], [1, 2], "board", "WRONG_CARD_COUNT"),
        (Rule.OMAHA, [51, 50, 49, 48], [1, 2, 3, 4, 5, 6], "board", "WRONG_CARD_COUNT"),
        (Rule.THREE_CARD, [51, 50], [], "hole_cards", "WRONG_CARD_COUNT"),
        (Rule.THREE_CARD, [51, 50, 49, 48], [], "hole_cards", "WRONG_CARD_COUNT"),
    ],
)
def test_evaluate_validation(rule: Rule, hole: list[int], board: list[int], field: str, reason: str) -> None:
    with pytest.raises(InvalidHand) as info:
        evaluate(rule, hole, board)
    assert (info.value.field, info.value.reason) == (field, reason)
    assert isinstance(info.value, ValueError) and str(info.value)


def test_evaluate_rejects_a_non_rule_and_non_int_cards() -> None:
    with pytest.raises(InvalidHand) as info:
        evaluate(1, [0, 1, 2, 3, 4])  # type: ignore[arg-type]
    assert info.value.field == "rule"
    with pytest.raises(InvalidHand):
        evaluate(Rule.HOLDEM, ["As", 1, 2, 3, 4])  # type: ignore[list-item]
    with pytest.raises(InvalidHand):
        evaluate(Rule.HOLDEM, [True, 1, 2, 3, 4])


def test_holdem_accepts_five_six_and_seven_cards_split_anywhere() -> None:
    cards = parse_cards(["As", "Ks", "Qs", "Js", "Ts", "2c", "3d"])
    assert evaluate(Rule.HOLDEM, cards[:5]).category is Category.ROYAL_FLUSH
    assert evaluate(Rule.HOLDEM, [], cards[:6]).category is Category.ROYAL_FLUSH
    assert evaluate(Rule.HOLDEM, cards, []).strength == 7462


def test_strength7_matches_evaluate_and_rejects_bad_codes() -> None:
    rng = random.Random(5)
    for _ in range(1000):
        c = rng.sample(range(52), 7)
        assert strength7(*c) == evaluate(Rule.HOLDEM, c[:2], c[2:]).strength
    with pytest.raises(InvalidHand) as info:
        strength7(0, 1, 2, 3, 4, 5, 52)
    assert info.value.reason == "UNKNOWN_CARD"
    with pytest.raises(InvalidHand):
        strength7(-1, 1, 2, 3, 4, 5, 6)
    with pytest.raises(InvalidHand) as info:
        strength7(0, 1, 2, 3, 4, 5, 5)
    assert info.value.reason == "DUPLICATE_CARD"
    with pytest.raises(TypeError):
        strength7(0, 1, 2, 3, 4, 5)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        strength7(0, 1, 2, 3, 4, 5, "6")  # type: ignore[arg-type]
    with pytest.raises(OverflowError):
        strength7(0, 1, 2, 3, 4, 5, 2**80)


def test_batch_matches_single_evaluations_for_every_rule() -> None:
    rng = random.Random(11)
    for rule, k, split in ((Rule.HOLDEM, 5, 2), (Rule.HOLDEM, 6, 2), (Rule.HOLDEM, 7, 2), (Rule.OMAHA, 9, 4),
                           (Rule.THREE_CARD, 3, 3)):  # fmt: skip
        hands = [rng.sample(range(52), k) for _ in range(500)]
        result = evaluate_batch(rule, k, bytes(c for h in hands for c in h))
        singles = [evaluate(rule, h[:split], h[split:]) for h in hands]
        assert list(result.strengths) == [v.strength for v in singles]
        assert list(result.categories) == [int(v.category) for v in singles]
        assert result.strengths.typecode == "I" and result.categories.typecode == "B"


def test_batch_accepts_bytearray_memoryview_and_empty_input() -> None:
    packed = bytes(range(7)) + bytes(range(10, 17))
    expected = list(evaluate_batch(Rule.HOLDEM, 7, packed).strengths)
    assert list(evaluate_batch(Rule.HOLDEM, 7, bytearray(packed)).strengths) == expected
    assert list(evaluate_batch(Rule.HOLDEM, 7, memoryview(packed)).strengths) == expected
    assert list(evaluate_batch(Rule.HOLDEM, 7, memoryview(packed)[7:]).strengths) == expected[1:]
    assert len(evaluate_batch(Rule.HOLDEM, 7, b"").strengths) == 0


@pytest.mark.parametrize(
    ("rule", "k", "packed", "field", "reason", "index"),
    [
        (Rule.HOLDEM, 7, bytes(range(10)), "packed_cards", "BAD_BUFFER_LENGTH", None),
        (Rule.HOLDEM, 5, bytes([0, 1, 2, 3, 4, 0, 1, 2, 3, 200]), "packed_cards", "UNKNOWN_CARD", 1),
        (Rule.HOLDEM, 5, bytes([0, 1, 2, 3, 3]), "packed_cards", "DUPLICATE_CARD", 0),
        (Rule.HOLDEM, 4, bytes(range(8)), "cards_per_hand", "WRONG_CARD_COUNT", None),
        (Rule.HOLDEM, 9, bytes(range(9)), "cards_per_hand", "WRONG_CARD_COUNT", None),
        (Rule.OMAHA, 7, bytes(range(7)), "cards_per_hand", "WRONG_CARD_COUNT", None),
        (Rule.THREE_CARD, 5, bytes(range(5)), "cards_per_hand", "WRONG_CARD_COUNT", None),
    ],
)
def test_batch_validation(
    rule: Rule, k: int, packed: bytes, field: str, reason: str, index: int | None
) -> None:
    with pytest.raises(InvalidHand) as info:
        evaluate_batch(rule, k, packed)
    assert (info.value.field, info.value.reason) == (field, reason)
    if index is not None:
        assert f"hand {index}" in str(info.value)


def test_batch_rejects_non_buffers() -> None:
    with pytest.raises(InvalidHand) as info:
        evaluate_batch(Rule.HOLDEM, 5, [0, 1, 2, 3, 4])  # type: ignore[arg-type]
    assert info.value.field == "packed_cards"


def test_batch_from_several_threads_gives_the_same_answers() -> None:
    """The GIL is released during the C loop; concurrent batches must not interfere."""
    rng = random.Random(3)
    packed = bytes(c for _ in range(20_000) for c in rng.sample(range(52), 7))
    expected = list(evaluate_batch(Rule.HOLDEM, 7, packed).strengths)
    results: list[list[int]] = []

    def work() -> None:
        results.append(list(evaluate_batch(Rule.HOLDEM, 7, packed).strengths))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 4


def test_category_of_rejects_out_of_range_strengths() -> None:
    assert category_of(Rule.THREE_CARD, 741) is Category.ROYAL_FLUSH
    for rule, bad in ((Rule.HOLDEM, 0), (Rule.HOLDEM, 7463), (Rule.THREE_CARD, 742), (Rule.OMAHA, 2**70)):
        with pytest.raises(InvalidHand):
            category_of(rule, bad)


def test_max_batch_hands_is_documented_and_positive() -> None:
    assert MAX_BATCH_HANDS == 4_000_000


@settings(max_examples=400, deadline=None)  # timing varies on the shared CI machine
@given(
    st.sampled_from(list(Rule)),
    st.integers(-2, 12),
    st.binary(max_size=64),
)
def test_fuzz_batch_never_crashes(rule: Rule, k: int, packed: bytes) -> None:
    try:
        result = evaluate_batch(rule, k, packed)
    except InvalidHand as exc:
        assert exc.field in {"packed_cards", "cards_per_hand"}
        return
    assert len(result.strengths) == len(packed) // k


@settings(max_examples=400, deadline=None)  # timing varies on the shared CI machine
@given(
    st.sampled_from(list(Rule)),
    st.lists(st.integers(-3, 60), max_size=8),
    st.lists(st.integers(-3, 60), max_size=8),
)
def test_fuzz_evaluate_never_crashes(rule: Rule, hole: list[int], board: list[int]) -> None:
    try:
        value = evaluate(rule, hole, board)
    except InvalidHand as exc:
        assert exc.reason in {"WRONG_CARD_COUNT", "UNKNOWN_CARD", "DUPLICATE_CARD"}
        return
    assert value.strength >= 1 and value.description


@settings(max_examples=200, deadline=None)  # timing varies on the shared CI machine
@given(st.lists(st.integers(-(2**65), 2**65), min_size=7, max_size=7))
def test_fuzz_strength7_never_crashes(codes: list[int]) -> None:
    try:
        assert 1 <= strength7(*codes) <= 7462
    except (InvalidHand, OverflowError):
        assert any(not 0 <= c < 52 for c in codes) or len(set(codes)) < 7


@settings(max_examples=200, deadline=None)  # timing varies on the shared CI machine
@given(
    st.sampled_from([Rule.HOLDEM, Rule.OMAHA]),
    st.lists(st.lists(st.integers(0, 51), max_size=5), max_size=12),
    st.lists(st.integers(0, 51), max_size=6),
    st.lists(st.integers(0, 51), max_size=6),
)
def test_fuzz_equity_never_crashes(
    rule: Rule, hands: list[list[int]], board: list[int], dead: list[int]
) -> None:
    try:
        r = handeval.equity(rule, hands, board, dead, iterations=200, seed=1)
    except InvalidHand:
        return
    assert sum(r.equities) == pytest.approx(1.0)
    assert array.array("d", r.equities)  # plain floats


def test_threaded_batch_matches_single_threaded_and_reports_the_first_bad_hand() -> None:
    rng = random.Random(12)
    n = 150_000  # above the threading threshold (65,536 hands)
    packed = bytearray(c for _ in range(n) for c in rng.sample(range(52), 7))
    assert handeval._core.set_batch_threads(1) == 1  # the default
    try:
        single = evaluate_batch(Rule.HOLDEM, 7, packed)
        assert handeval._core.set_batch_threads(3) == 3
        threaded = evaluate_batch(Rule.HOLDEM, 7, packed)
        assert threaded == single
        packed[7 * 140_000 + 6] = packed[7 * 140_000]  # duplicate in the last chunk
        packed[7 * 120_000 + 2] = 99  # unknown card earlier
        with pytest.raises(InvalidHand) as info:
            evaluate_batch(Rule.HOLDEM, 7, packed)
        assert "hand 120000" in str(info.value) and info.value.reason == "UNKNOWN_CARD"
        packed[7 * 120_000 + 2] = packed[7 * 120_000 + 3]  # now a duplicate there
        with pytest.raises(InvalidHand) as info:
            evaluate_batch(Rule.HOLDEM, 7, packed)
        assert "hand 120000" in str(info.value) and info.value.reason == "DUPLICATE_CARD"
    finally:
        handeval._core.set_batch_threads(1)


@settings(max_examples=300, deadline=None)  # timing varies on the shared CI machine
@given(
    st.integers(-1, 5),
    st.integers(-2, 12),
    st.binary(max_size=40),
    st.integers(0, 64),
    st.binary(max_size=12),
    st.binary(max_size=6),
)
def test_fuzz_the_raw_binding_never_crashes(
    rule: int, k: int, packed: bytes, out_len: int, holes: bytes, board: bytes
) -> None:
    """The C entry points guard themselves too, whatever the Python layer lets through."""
    core = handeval._core
    with contextlib.suppress(InvalidHand, ValueError):
        core.evaluate(rule, holes[:4], board)
    with contextlib.suppress(ValueError):
        core.batch(rule, k, packed, bytearray(out_len * 4), bytearray(out_len))
    with contextlib.suppress(ValueError):
        core.equity(rule, len(holes) // 2, holes, board, b"", 100, 1, 1000)
    assert core.category(rule, k) in range(11)


def test_baseline_and_x86_64_v3_batch_loops_agree() -> None:
    """The batch loop is built for x86-64-v3 (popcount duplicate check) and for the baseline (carry
    check); the CPU picks one. Both must give the same strengths and the same first bad hand."""
    rng = random.Random(21)
    hands = [rng.sample(range(52), k) for k in (5, 6, 7) for _ in range(2_000)]
    core = handeval._core
    try:
        results = []
        for baseline in (True, False):
            core._batch_use_baseline(baseline)
            per_shape = []
            for k in (5, 6, 7):
                packed = bytes(c for h in hands if len(h) == k for c in h)
                per_shape.append(evaluate_batch(Rule.HOLDEM, k, packed))
            for rule, k in ((Rule.OMAHA, 9), (Rule.THREE_CARD, 3)):
                shape_rng = random.Random(k)
                packed = bytes(c for _ in range(1_000) for c in shape_rng.sample(range(52), k))
                per_shape.append(evaluate_batch(rule, k, packed))
            bad = bytearray(bytes(c for h in hands if len(h) == 7 for c in h))
            bad[7 * 1500 + 1] = bad[7 * 1500 + 5]
            with pytest.raises(InvalidHand) as info:
                evaluate_batch(Rule.HOLDEM, 7, bad)
            results.append((per_shape, str(info.value), info.value.reason))
        assert results[0] == results[1]
        assert results[0][1].startswith("hand 1500") and results[0][2] == "DUPLICATE_CARD"
    finally:
        core._batch_use_baseline(False)


def test_card_arguments_may_be_any_iterable_but_not_junk() -> None:
    cards = parse_cards(["As", "Ks", "Qs", "Js", "Ts"])
    assert evaluate(Rule.HOLDEM, iter(cards[:2]), (c for c in cards[2:])).category is Category.ROYAL_FLUSH  # type: ignore[arg-type]
    with pytest.raises(InvalidHand) as info:
        evaluate(Rule.HOLDEM, None, cards)  # type: ignore[arg-type]
    assert (info.value.field, info.value.reason) == ("hole_cards", "UNKNOWN_CARD")
    with pytest.raises(InvalidHand) as info:
        evaluate(Rule.HOLDEM, cards[:2], [*cards[2:], cards[0]])
    assert "As appears twice" in str(info.value)
