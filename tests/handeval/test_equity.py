"""Equity: exact enumeration, seeded Monte Carlo within its error, ties, dead cards, validation."""

from __future__ import annotations

import itertools
import math

import pytest
from handeval import EXACT_MAX_BOARDS, InvalidHand, Rule, equity, evaluate, parse_cards


def hands(*texts: str) -> list[list[int]]:
    return [parse_cards([t[i : i + 2] for i in range(0, len(t), 2)]) for t in texts]


def test_aces_against_kings_exact() -> None:
    """AsAh vs KsKh pre-flop over all C(48, 5) boards. Cross-checked (outside the tests) by brute force
    with eval7's evaluator: 1,410,336 wins, 292,660 losses, 9,308 ties. (The often-quoted 0.8195 is
    AA vs KK sharing one suit, e.g. AsAh vs KsKd, checked below.)"""
    r = equity(Rule.HOLDEM, hands("AsAh", "KsKh"))
    assert r.exact and r.samples == 1_712_304
    assert r.wins == (1_410_336, 292_660) and r.ties == (9_308, 9_308)
    assert r.equities[0] == pytest.approx((1_410_336 + 9_308 / 2) / 1_712_304, abs=1e-12)
    assert r.equities[0] == pytest.approx(0.826366, abs=1e-6)
    assert sum(r.equities) == pytest.approx(1.0)
    one_suit = equity(Rule.HOLDEM, hands("AsAh", "KsKd"))
    assert one_suit.equities[0] == pytest.approx(0.8195, abs=1e-4)


def test_river_equity_is_the_showdown() -> None:
    board = parse_cards(["2s", "7d", "9c", "Jh", "Kd"])
    r = equity(Rule.HOLDEM, hands("AcAd", "KcKs", "3c4c"), board)
    assert r.exact and r.samples == 1
    assert r.equities == (0.0, 1.0, 0.0) and r.wins == (0, 1, 0)


def test_exact_turn_matches_counting_by_hand() -> None:
    """Every river card evaluated with evaluate(): the enumeration must agree exactly."""
    hs, board = hands("AhKh", "QsQd"), parse_cards(["2h", "7h", "Qc", "3s"])
    used = set(board) | {c for h in hs for c in h}
    wins = [0, 0]
    ties = 0
    for river in (c for c in range(52) if c not in used):
        s = [evaluate(Rule.HOLDEM, h, [*board, river]).strength for h in hs]
        if s[0] == s[1]:
            ties += 1
        else:
            wins[s[1] > s[0]] += 1
    r = equity(Rule.HOLDEM, hs, board)
    assert r.exact and r.samples == 44
    assert list(r.wins) == wins and r.ties == (ties, ties)


def test_omaha_exact_flop_matches_evaluate() -> None:
    hs = hands("AhKh7h4h", "QsQdJc9c")
    board = parse_cards(["Qh", "9s", "8d"])
    used = set(board) | {c for h in hs for c in h}
    rest = [c for c in range(52) if c not in used]
    share = [0.0, 0.0]
    n = 0
    for turn, river in itertools.combinations(rest, 2):
        s = [evaluate(Rule.OMAHA, h, [*board, turn, river]).strength for h in hs]
        n += 1
        best = max(s)
        for i in range(2):
            if s[i] == best:
                share[i] += 1 / s.count(best)
    r = equity(Rule.OMAHA, hs, board)
    assert r.exact and r.samples == n == math.comb(len(rest), 2)
    assert r.equities == pytest.approx((share[0] / n, share[1] / n), abs=1e-12)


def test_board_royal_flush_is_a_tie_for_everyone() -> None:
    """NK-EX-7 / MP-EX-9: playing the board splits the pot."""
    board = parse_cards(["As", "Ks", "Qs", "Js", "Ts"])
    r = equity(Rule.HOLDEM, hands("2c3d", "AhAd", "7c7d"), board)
    assert r.ties == (1, 1, 1) and r.wins == (0, 0, 0)
    assert r.equities == pytest.approx((1 / 3, 1 / 3, 1 / 3))


def test_monte_carlo_is_within_its_error_of_exact() -> None:
    hs = hands("AsAh", "KsKh")
    exact = equity(Rule.HOLDEM, hs).equities[0]
    n = 400_000
    mc = equity(Rule.HOLDEM, hs, iterations=n, seed=12345)
    assert not mc.exact and mc.samples == n
    sigma = math.sqrt(exact * (1 - exact) / n)
    assert abs(mc.equities[0] - exact) < 5 * sigma
    assert sum(mc.equities) == pytest.approx(1.0)


def test_monte_carlo_multiway_omaha_within_error() -> None:
    hs = hands("AhAsKhKs", "QdQcJdJc", "9s8s7d6d")
    exact = equity(Rule.OMAHA, hs)
    assert exact.exact
    n = 200_000
    mc = equity(Rule.OMAHA, hs, iterations=n, seed=99)
    assert not mc.exact
    for e, m in zip(exact.equities, mc.equities, strict=True):
        assert abs(e - m) < 5 * math.sqrt(max(e * (1 - e), 1e-9) / n)


def test_seed_makes_monte_carlo_reproducible() -> None:
    hs = hands("AsKs", "7c7d")
    a = equity(Rule.HOLDEM, hs, iterations=50_000, seed=7)
    b = equity(Rule.HOLDEM, hs, iterations=50_000, seed=7)
    c = equity(Rule.HOLDEM, hs, iterations=50_000, seed=8)
    assert a == b and a != c
    d = equity(Rule.HOLDEM, hs, iterations=50_000)  # seed 0: random
    assert d.samples == 50_000


def test_iterations_above_the_board_count_enumerate_exactly() -> None:
    r = equity(Rule.HOLDEM, hands("AsKs", "7c7d"), parse_cards(["2c", "9h", "Jd"]), iterations=5_000, seed=1)
    assert r.exact and r.samples == math.comb(45, 2)
    assert math.comb(48, 5) <= EXACT_MAX_BOARDS


def test_dead_cards_leave_the_deck() -> None:
    hs, board = hands("AhKh", "QsQd"), parse_cards(["2h", "7h", "Qc", "3s"])
    dead = parse_cards(["4h", "5h", "6h", "8h", "9h", "Th", "Jh"])  # the hearts that would make the flush
    r = equity(Rule.HOLDEM, hs, board, dead)
    assert r.samples == 44 - 7
    full = equity(Rule.HOLDEM, hs, board)
    assert r.equities[0] < full.equities[0]


def test_ten_hands_exact_preflop() -> None:
    ten = hands("AsAh", "KsKh", "QsQh", "JsJh", "TsTh", "9s9h", "8s8h", "7s7h", "6s6h", "5s5h")
    r = equity(Rule.HOLDEM, ten)
    assert r.exact and r.samples == math.comb(32, 5)
    assert sum(r.equities) == pytest.approx(1.0)
    assert r.equities[0] == max(r.equities)


@pytest.mark.parametrize(
    ("kwargs", "field", "reason"),
    [
        ({"hands": hands("AsAh")}, "hands", "TOO_FEW_HANDS"),
        ({"hands": hands(*["2c3c"] * 11)}, "hands", "TOO_MANY_HANDS"),
        ({"hands": hands("AsAh", "KsKhKd")}, "hands", "WRONG_CARD_COUNT"),
        ({"hands": hands("AsAh", "AsKh")}, "hands", "DUPLICATE_CARD"),
        ({"hands": hands("AsAh", "KsKh"), "board": parse_cards(["2c"])}, "board", "WRONG_CARD_COUNT"),
        (
            {"hands": hands("AsAh", "KsKh"), "board": parse_cards(["2c", "3c", "As"])},
            "board",
            "DUPLICATE_CARD",
        ),
        ({"hands": hands("AsAh", "KsKh"), "dead": parse_cards(["Kh"])}, "dead_cards", "DUPLICATE_CARD"),
        ({"hands": [[0, 52], [1, 2]]}, "hands", "UNKNOWN_CARD"),
        ({"hands": hands("AsAh", "KsKh"), "iterations": -1}, "iterations", "BAD_ITERATIONS"),
        ({"hands": hands("AsAh", "KsKh"), "seed": 2**64}, "seed", "BAD_SEED"),
        ({"hands": hands("AsAh", "KsKh"), "dead": list(range(48))}, "dead_cards", "DUPLICATE_CARD"),
    ],
)
def test_invalid_equity_requests(kwargs: dict[str, object], field: str, reason: str) -> None:
    with pytest.raises(InvalidHand) as info:
        equity(Rule.HOLDEM, **kwargs)  # type: ignore[arg-type]
    assert (info.value.field, info.value.reason) == (field, reason)
    assert str(info.value)


def test_not_enough_cards_and_unsupported_rule() -> None:
    ten = hands("AsAh", "KsKh", "QsQh", "JsJh", "TsTh", "9s9h", "8s8h", "7s7h", "6s6h", "5s5h")
    dead = [c for c in range(52) if c not in {x for h in ten for x in h}][:30]
    with pytest.raises(InvalidHand) as info:
        equity(Rule.HOLDEM, ten, dead=dead)
    assert info.value.reason == "NOT_ENOUGH_CARDS"
    with pytest.raises(InvalidHand) as info:
        equity(Rule.THREE_CARD, hands("AsAh", "KsKh"))
    assert (info.value.field, info.value.reason) == ("rule", "UNSUPPORTED_RULE")
