"""equity_vs_random: one hand against random opponent hands (NK-1.3 Hold'em, NK-1.4 Omaha), all in C.

References are exact where they can be: on a complete board every opponent hand is evaluated
(`evaluate_batch`), on the flop every opponent hand gets `equity`'s exact enumeration of the boards;
pre-flop the exact figures were computed outside the tests (below). Monte Carlo must land within five
standard errors of them."""

from __future__ import annotations

import array
import contextlib
import itertools
import math
import random
import threading

import handeval
import numpy as np
import pytest
from handeval import InvalidHand, Rule, equity, equity_vs_random, evaluate, evaluate_batch, parse_cards
from hypothesis import given, settings
from hypothesis import strategies as st

# Exact pre-flop equity against one random hand: the mean of `equity`'s exact enumeration (C(48, 5)
# boards) over all C(50, 2) = 1,225 opponent hands, computed once outside the tests (~40 s each) as
# `sum(equity(Rule.HOLDEM, [hole, list(opp)]).equities[0] for opp in combinations(rest, 2)) / 1225`;
# the usual published figures are 85.2 % and 34.6 %.
AA_VS_RANDOM = 0.852037133
SEVEN_TWO_OFF_VS_RANDOM = 0.345836473


def cards(text: str) -> list[int]:
    return parse_cards(text.split())


def within(estimate: float, exact: float, n: int, extra_var: float = 0.0) -> bool:
    """Within five standard errors (a Bernoulli-like share bounded by p(1-p)/n, plus any reference error)."""
    sigma = math.sqrt(max(exact * (1 - exact), 1e-4) / n + extra_var)
    return abs(estimate - exact) < 5 * sigma


def exact_river_vs_one(rule: Rule, hole: list[int], board: list[int]) -> float:
    """Exact share against one random hand on a complete board: every opponent hand evaluated."""
    rest = [c for c in range(52) if c not in set(hole) | set(board)]
    opponents = list(itertools.combinations(rest, len(hole)))
    packed = bytes(c for opp in opponents for c in (*opp, *board))  # Omaha: 4 hole then 5 board
    strengths = evaluate_batch(rule, len(hole) + 5, packed).strengths
    mine = evaluate(rule, hole, board).strength
    share = sum(1.0 if s < mine else 0.5 if s == mine else 0.0 for s in strengths)
    return share / len(opponents)


@pytest.mark.parametrize(("hole", "exact"), [("As Ah", AA_VS_RANDOM), ("7c 2d", SEVEN_TWO_OFF_VS_RANDOM)])
def test_nk_1_3_preflop_heads_up_against_a_random_hand(hole: str, exact: float) -> None:
    n = 1_000_000
    assert within(equity_vs_random(Rule.HOLDEM, cards(hole), (), 1, n, seed=11), exact, n)


@pytest.mark.parametrize(
    ("rule", "hole", "board"),
    [
        (Rule.HOLDEM, "Ah Kd", "Ac 7h 7d 2s 9c"),
        (Rule.HOLDEM, "5h 4h", "6h 7h 2c Kd 3s"),
        (Rule.OMAHA, "Tc 9c 8h 7h", "As Ks Qd Jd 4c"),
        (Rule.OMAHA, "Kd Qc 6s 5s", "Ah Th 9s 8d 7c"),
        (Rule.OMAHA, "9c 9d 8s 7s", "9h 8d 2s 2c Ks"),
    ],
)
def test_complete_board_matches_every_opponent_hand_evaluated(rule: Rule, hole: str, board: str) -> None:
    """NK-1.3 / NK-1.4: on the river the only unknown is the opponent's hand; the exact share over all
    of them (C(45, 2) Hold'em, C(43, 4) Omaha hands) is the reference. The Omaha boards give many
    opponents both a tying and a better combination (an early stop at a tie would show here)."""
    h, b = cards(hole), cards(board)
    exact = exact_river_vs_one(rule, h, b)
    n = 1_000_000
    assert within(equity_vs_random(rule, h, b, 1, n, seed=5), exact, n)


def test_flop_matches_exact_equity_over_every_opponent_hand() -> None:
    """On the flop `equity` enumerates the turn and river exactly; averaged over all C(47, 2) opponent
    hands it is the exact equity against a random hand."""
    hole, board = cards("Qs Js"), cards("Ts 4s 9d")
    rest = [c for c in range(52) if c not in set(hole) | set(board)]
    shares = [
        equity(Rule.HOLDEM, [hole, list(opp)], board).equities[0] for opp in itertools.combinations(rest, 2)
    ]
    exact = sum(shares) / len(shares)
    n = 400_000
    assert within(equity_vs_random(Rule.HOLDEM, hole, board, 1, n, seed=3), exact, n)


@pytest.mark.parametrize(
    ("rule", "hole", "board", "opponents"),
    [
        (Rule.OMAHA, "As Ah Ks Kh", "", 1),
        (Rule.OMAHA, "Jh Th 9c 8c", "Qh 7c 2d", 2),
        (Rule.OMAHA, "Ac Ad 6h 5s", "Kc 8c 3c Td", 3),
        (Rule.HOLDEM, "Kh Qh", "", 5),
        (Rule.HOLDEM, "8s 8d", "Ah 8h 4c", 4),
    ],
)
def test_agrees_with_equity_averaged_over_sampled_opponents(
    rule: Rule, hole: str, board: str, opponents: int
) -> None:
    """The old way (sample opponents in Python, `equity` finishes the board) is an independent reference:
    its mean over many sampled opponent sets, with its own standard error, must agree."""
    h, b = cards(hole), cards(board)
    rng = random.Random(17)
    unseen = [c for c in range(52) if c not in set(h) | set(b)]
    per = len(h)
    values = []
    for _ in range(1_000):
        drawn = rng.sample(unseen, per * opponents)
        hands = [h] + [drawn[k * per : (k + 1) * per] for k in range(opponents)]
        values.append(equity(rule, hands, b, iterations=300, seed=rng.getrandbits(62) | 1).equities[0])
    mean = sum(values) / len(values)
    var = sum((v - mean) ** 2 for v in values) / (len(values) - 1) / len(values)
    n = 200_000
    assert within(equity_vs_random(rule, h, b, opponents, n, seed=9), mean, n, extra_var=var)


@pytest.mark.parametrize(
    ("rule", "hole", "board", "opponents"),
    [
        (Rule.OMAHA, "As Ah Ks Kh", "", 1),
        (Rule.OMAHA, "Jh Th 9c 8c", "Qh 7c 2d", 5),
        (Rule.OMAHA, "Ac Ad 6h 5s", "Kc 8c 3c Td", 9),
        (Rule.HOLDEM, "Ts 9s", "", 5),
        (Rule.HOLDEM, "Ac Kd", "Ah 8h 4c 2s", 9),
    ],
)
def test_agrees_with_deals_sampled_in_numpy_and_evaluated_in_batches(
    rule: Rule, hole: str, board: str, opponents: int
) -> None:
    """A second independent reference, with a small error of its own: deals drawn with numpy, every hand
    evaluated by `evaluate_batch` (Omaha: 4 hole + 5 board, NK-1.4), shares counted in numpy."""
    h, b = cards(hole), cards(board)
    gen = np.random.default_rng(23)
    unseen = np.array([c for c in range(52) if c not in set(h) | set(b)], dtype=np.uint8)
    per, need, deals = len(h), 5 - len(b), 100_000
    drawn = unseen[np.argsort(gen.random((deals, len(unseen))), axis=1)[:, : need + opponents * per]]
    boards = np.hstack([np.tile(np.array(b, dtype=np.uint8), (deals, 1)), drawn[:, :need]])
    holes = [np.tile(np.array(h, dtype=np.uint8), (deals, 1))]
    holes += [drawn[:, need + k * per : need + (k + 1) * per] for k in range(opponents)]
    strengths = []
    for hand in holes:
        packed = np.ascontiguousarray(np.hstack([hand, boards])).tobytes()
        strengths.append(np.frombuffer(evaluate_batch(rule, per + 5, packed).strengths, dtype=np.uint32))
    table = np.vstack(strengths)
    best = table.max(axis=0)
    winners = (table == best).sum(axis=0)
    mine = np.where(table[0] == best, 1.0 / winners, 0.0)
    reference = float(mine.mean())
    var = float(mine.var(ddof=1)) / deals
    n = 200_000
    assert within(equity_vs_random(rule, h, b, opponents, n, seed=10), reference, n, extra_var=var)


def test_a_lock_wins_everything_and_a_board_royal_splits_evenly() -> None:
    """Exact answers whatever the sample: the royal flush cannot be beaten or tied; a board royal flush
    is everyone's hand (NK-EX-7), so the pot splits between the hand and every opponent."""
    assert equity_vs_random(Rule.HOLDEM, cards("As Ks"), cards("Qs Js Ts 2d 3c"), 9, 5_000, seed=1) == 1.0
    royal = cards("As Ks Qs Js Ts")
    for opponents in range(1, 10):
        share = equity_vs_random(Rule.HOLDEM, cards("2c 3d"), royal, opponents, 1_000, seed=2)
        assert share == pytest.approx(1 / (opponents + 1), abs=1e-12)
    # NK-1.4: in Omaha the royal needs two hole cards, and then it is a lock too
    assert (
        equity_vs_random(Rule.OMAHA, cards("As Ks 2c 2d"), cards("Qs Js Ts 7h 3c"), 9, 5_000, seed=1) == 1.0
    )


def test_more_opponents_means_a_smaller_share() -> None:
    shares = [equity_vs_random(Rule.HOLDEM, cards("As Ah"), (), k, 100_000, seed=4) for k in range(1, 10)]
    assert shares == sorted(shares, reverse=True)
    assert shares[-1] < 0.4 < shares[0]


def test_the_seed_makes_it_reproducible() -> None:
    args = (Rule.OMAHA, cards("As Ah Ks Kh"), cards("2c 7d 9h"), 3, 20_000)
    a = equity_vs_random(*args, seed=7)
    assert a == equity_vs_random(*args, seed=7)
    assert a != equity_vs_random(*args, seed=8)
    assert 0.0 <= equity_vs_random(*args) <= 1.0  # seed 0: a random seed


def test_threads_run_it_concurrently_with_the_same_answers() -> None:
    """The loop runs with the GIL released; results do not depend on which thread calls."""
    args = (Rule.HOLDEM, cards("Kh Qh"), (), 5, 300_000)
    expected = [equity_vs_random(*args, seed=s) for s in range(1, 5)]
    got: dict[int, float] = {}
    threads = [
        threading.Thread(target=lambda s=s: got.__setitem__(s, equity_vs_random(*args, seed=s)))
        for s in range(1, 5)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [got[s] for s in range(1, 5)] == expected


@pytest.mark.parametrize(
    ("args", "field", "reason"),
    [
        ((Rule.THREE_CARD, cards("As Ah Ad"), (), 1, 100), "rule", "UNSUPPORTED_RULE"),
        (("HOLDEM", cards("As Ah"), (), 1, 100), "rule", "UNKNOWN_RULE"),
        ((Rule.HOLDEM, cards("As Ah Ad"), (), 1, 100), "hole_cards", "WRONG_CARD_COUNT"),
        ((Rule.OMAHA, cards("As Ah"), (), 1, 100), "hole_cards", "WRONG_CARD_COUNT"),
        ((Rule.HOLDEM, [0, 52], (), 1, 100), "hole_cards", "UNKNOWN_CARD"),
        ((Rule.HOLDEM, [0, True], (), 1, 100), "hole_cards", "UNKNOWN_CARD"),
        ((Rule.HOLDEM, cards("As As"), (), 1, 100), "hole_cards", "DUPLICATE_CARD"),
        ((Rule.HOLDEM, cards("As Ah"), cards("2c 3c"), 1, 100), "board", "WRONG_CARD_COUNT"),
        ((Rule.HOLDEM, cards("As Ah"), cards("2c 3c As"), 1, 100), "board", "DUPLICATE_CARD"),
        ((Rule.HOLDEM, cards("As Ah"), [2, 3, -1], 1, 100), "board", "UNKNOWN_CARD"),
        ((Rule.HOLDEM, cards("As Ah"), (), 0, 100), "opponents", "TOO_FEW_HANDS"),
        ((Rule.HOLDEM, cards("As Ah"), (), 10, 100), "opponents", "TOO_MANY_HANDS"),
        ((Rule.HOLDEM, cards("As Ah"), (), 1.0, 100), "opponents", "BAD_OPPONENTS"),
        ((Rule.HOLDEM, cards("As Ah"), (), 1, 0), "iterations", "BAD_ITERATIONS"),
        ((Rule.HOLDEM, cards("As Ah"), (), 1, handeval.MAX_ITERATIONS + 1), "iterations", "BAD_ITERATIONS"),
        ((Rule.HOLDEM, cards("As Ah"), (), 1, True), "iterations", "BAD_ITERATIONS"),
    ],
)
def test_invalid_requests(args: tuple[object, ...], field: str, reason: str) -> None:
    with pytest.raises(InvalidHand) as info:
        equity_vs_random(*args)  # type: ignore[arg-type]
    assert (info.value.field, info.value.reason) == (field, reason)
    assert str(info.value)


def test_bad_seed() -> None:
    for seed in (-1, 2**64, True):
        with pytest.raises(InvalidHand) as info:
            equity_vs_random(Rule.HOLDEM, cards("As Ah"), seed=seed)
        assert info.value.reason == "BAD_SEED"


def test_nine_omaha_opponents_fit_the_deck() -> None:
    """The most the deck must hold: 10 Omaha hands and a board, 45 of 52 cards."""
    share = equity_vs_random(Rule.OMAHA, cards("As Ah Ks Kh"), (), 9, 2_000, seed=1)
    assert 0.0 < share < 1.0


@settings(max_examples=150, deadline=None)  # timing varies on the shared machine
@given(
    rule=st.sampled_from([Rule.HOLDEM, Rule.OMAHA]),
    picks=st.permutations(range(52)),
    nboard=st.sampled_from([0, 3, 4, 5]),
    opponents=st.integers(1, 9),
    seed=st.integers(1, 2**64 - 1),
)
def test_share_is_a_probability_and_the_seed_fixes_it(
    rule: Rule, picks: list[int], nboard: int, opponents: int, seed: int
) -> None:
    per = 2 if rule is Rule.HOLDEM else 4
    hole, board = picks[:per], picks[per : per + nboard]
    share = equity_vs_random(rule, hole, board, opponents, 300, seed)
    assert 0.0 <= share <= 1.0
    assert share == equity_vs_random(rule, hole, board, opponents, 300, seed)
    # 300 deals, each a share k / TIE_UNIT of a pot: the mean is a multiple of 1 / (300 * TIE_UNIT)
    units = share * 300 * handeval._core.TIE_UNIT
    assert units == pytest.approx(round(units), abs=1e-6)


@settings(max_examples=40, deadline=None)
@given(picks=st.permutations(range(52)), seed=st.integers(1, 2**64 - 1))
def test_on_a_complete_board_it_matches_exact_evaluation(picks: list[int], seed: int) -> None:
    """Hold'em on the river: the exact share over all 990 opponent hands is the reference."""
    hole, board = picks[:2], picks[2:7]
    exact = exact_river_vs_one(Rule.HOLDEM, hole, board)
    n = 20_000
    share = equity_vs_random(Rule.HOLDEM, hole, board, 1, n, seed)
    if exact in (0.0, 1.0):
        assert share == exact  # nothing beats (or loses to) this hand: no sampling error at all
    else:
        assert within(share, exact, n)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(-1, 4),
    st.binary(max_size=6),
    st.binary(max_size=7),
    st.integers(-2, 12),
    st.integers(0, 3),
)
def test_fuzz_the_raw_binding_never_crashes(
    rule: int, hole: bytes, board: bytes, opponents: int, iterations: int
) -> None:
    """The C entry point guards itself too, whatever the Python layer lets through."""
    with contextlib.suppress(ValueError):
        wins, ties, shares, samples = handeval._core.equity_vs_random(
            rule, hole, board, opponents, iterations, 1
        )
        assert samples == iterations and wins + ties <= samples
        assert array.array("Q", [shares])
