"""The exact Hold'em main-game enumeration (docs/game-math.md): its pieces checked against brute force."""

from __future__ import annotations

import itertools
from math import comb
from pathlib import Path

import handeval
import numpy as np
import pytest
from handeval import Category
from pokerrules.casino.gamemath import holdem_main as hm
from pokerrules.casino.gamemath.enumeration import evaluate, suit_symmetric_sets


def test_flop_classes_cover_every_flop_once() -> None:
    classes = hm.flop_classes()
    assert len(classes) == 1_755
    images = [image for c in classes for image, _ in c.images]
    assert len(images) == len(set(images)) == comb(52, 3)
    for c in classes[:50]:
        for image, perm in c.images:
            assert tuple(sorted(hm._permute(card, perm) for card in c.cards)) == image


def test_ch_5_2_qualification_is_a_strength_threshold() -> None:
    """CH-5.2: pair of 4s or better ⇔ strength ≥ that of 4-4-5-3-2, over all 2,598,960 five-card hands."""
    sets = suit_symmetric_sets(5)
    strengths, categories = evaluate("HOLDEM", sets.cards)
    ranks = sets.cards >> 2
    counts = np.stack([(ranks == r).sum(axis=1) for r in range(13)], axis=1)
    pair_rank = np.where(counts == 2, np.arange(13), -1).max(axis=1)
    qualifies = (categories >= Category.TWO_PAIR) | ((categories == Category.PAIR) & (pair_rank >= 2))
    threshold = hm._qualifying_strength(handeval)
    assert np.array_equal(qualifies, strengths >= threshold)


@pytest.mark.slow
def test_one_flop_against_brute_force() -> None:
    """For one Flop and a few holdings, the inclusion–exclusion counts equal a direct enumeration of every
    Turn, River and Dealer holding (CH Call value; THB River decisions and Flop-node value)."""
    flop = (5, 22, 47)
    result = hm.evaluate_flop(flop)
    rest = [c for c in range(52) if c not in flop]
    threshold = hm._qualifying_strength(handeval)
    odds = {10: 100, 9: 20, 8: 10, 7: 3, 6: 2}
    # Two-card sets of the 47 live cards (by position), in itertools.combinations order, and for each
    # one the sets that share no card with it: the Dealer's 990 holdings for that Turn and River.
    pairs47 = np.array(list(itertools.combinations(range(47), 2)), dtype=np.intp)
    first, second = pairs47[:, None, :], pairs47[None, :, :]
    apart = (first[..., :1] != second).all(axis=2) & (first[..., 1:] != second).all(axis=2)
    _, dealer_pairs = np.nonzero(apart)  # row by row, each row's sets in combinations order
    for pair in (0, 300, 777):
        a, c = (rest[i] for i in hm.PAIRS49[pair])
        live = [x for x in rest if x not in (a, c)]
        live_cards = np.array(live, dtype=np.uint8)
        turn_river = live_cards[pairs47]  # every (Turn, River), as itertools.combinations(live, 2)
        rows = np.empty((len(turn_river), 7), dtype=np.uint8)
        rows[:, :2], rows[:, 2:5], rows[:, 5:] = (a, c), flop, turn_river
        dealer_rows = np.empty((len(dealer_pairs), 7), dtype=np.uint8)
        dealer_rows[:, :2], dealer_rows[:, 2:5] = live_cards[pairs47[dealer_pairs]], flop
        dealer_rows[:, 5:] = np.repeat(turn_river, hm.DEALER_HOLDINGS, axis=0)
        p_s, p_c = evaluate("HOLDEM", rows)
        d_s, _ = evaluate("HOLDEM", dealer_rows)
        d_s = d_s.reshape(len(rows), hm.DEALER_HOLDINGS)
        p = p_s[:, None]
        ante = np.array([odds.get(int(x), 1) for x in p_c])[:, None]
        not_qualified = d_s < threshold
        net = np.where(not_qualified, ante, np.where(p > d_s, ante + 2, np.where(p == d_s, 0, -3)))
        assert int(net.sum()) == int(result.ch_call[pair])
        # THB: per Turn card, wins and losses over River and Dealer.
        wins = (p > d_s).sum(axis=1)
        losses = (p < d_s).sum(axis=1)
        straight = np.where(p_c >= Category.STRAIGHT, wins, 0)
        turns: dict[int, list[int]] = {}
        for (t, r), w, lo, s in zip(itertools.combinations(live, 2), wins, losses, straight, strict=True):
            for turn in (t, r):
                acc = turns.setdefault(turn, [0, 0, 0])
                acc[0] += int(w)
                acc[1] += int(lo)
                acc[2] += int(s)
        value = sum(s + 2 * w - 3 * lo + max(w - lo, 0) for w, lo, s in turns.values())
        edge = sum(w - lo for w, lo, _ in turns.values())
        assert value + max(edge, 0) == int(result.thb_value[pair])
        for turn, (w, lo, _) in turns.items():
            assert bool(result.thb_river_sign[pair, rest.index(turn)]) == (w > lo)


@pytest.mark.slow
def test_suit_relabelling_maps_any_flop_onto_its_class() -> None:
    """The derived strategies read a (hand, Flop) off its class representative: same values as the Flop
    itself evaluated directly."""
    from types import SimpleNamespace

    classes = hm.flop_classes()
    lookup = {image: (k, perm) for k, c in enumerate(classes) for image, perm in c.images}
    strategies = hm.DerivedStrategies(SimpleNamespace(flop_lookup=lookup))  # type: ignore[arg-type]
    flop = (6, 29, 50)  # not a representative
    k, _ = lookup[flop]
    assert classes[k].cards != flop
    direct, via_class = hm.evaluate_flop(flop), hm.evaluate_flop(classes[k].cards)
    rest = [c for c in range(52) if c not in flop]
    for pair in (3, 500, 1100):
        hole = tuple(rest[i] for i in hm.PAIRS49[pair])
        _, positions = strategies._to_representative(flop, hole)
        mapped = strategies._pair(positions)
        assert direct.ch_call[pair] == via_class.ch_call[mapped]
        assert direct.thb_value[pair] == via_class.thb_value[mapped]


@pytest.mark.slow
def test_strategy_files_list_every_hand_and_flop_class(tmp_path: Path) -> None:
    """`felt math --strategy-out`: one row per (Flop class, hole cards) and per pre-flop holding (slow: two
    files of 2.06 million rows each, 9 s on the CI machine)."""
    from types import SimpleNamespace

    n = len(hm.flop_classes())
    fake = SimpleNamespace(
        ch_decisions=np.ones((n, hm.N_PAIRS), dtype=bool),
        thb_turn_bets=np.zeros((n, hm.N_PAIRS), dtype=bool),
        thb_preflop_play=np.ones(len(hm.HOLDINGS52), dtype=bool),
    )
    ch, turn, pre = hm.write_strategies(fake, str(tmp_path))  # type: ignore[arg-type]
    assert len(Path(ch).read_text().splitlines()) == 1 + n * hm.N_PAIRS
    assert len(Path(turn).read_text().splitlines()) == 1 + n * hm.N_PAIRS
    lines = Path(pre).read_text().splitlines()
    assert lines[0] == "hole_cards,decision" and len(lines) == 1 + 1326 and lines[1] == "2c 2d,FLOP"


def test_ranks_count_the_smaller_and_the_smaller_or_equal_elements_of_each_row() -> None:
    """The per-row counts the inclusion–exclusion starts from, against a direct count, ties included."""
    rng = np.random.default_rng(7)
    for rows, size, top in ((5, 46, 10), (3, 1_081, 7_462), (4, 46, 1)):
        values = rng.integers(0, top, (rows, size)).astype(np.int32)
        packed = hm._ranks(values).reshape(rows, size)
        less = (values[:, None, :] < values[:, :, None]).sum(axis=2)
        leq = (values[:, None, :] <= values[:, :, None]).sum(axis=2)
        assert np.array_equal(packed & 0xFFFF, less)
        assert np.array_equal(packed >> 16, leq)
