"""Exact math of every side bet, by complete enumeration with suit symmetry (see `enumeration`)."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from functools import cache
from math import comb

import numpy as np
from handeval import Category

from pokerrules.casino.cards import ACE, KING, QUEEN
from pokerrules.casino.config import (
    CH_AA_BONUS_PAYTABLE,
    TCP_PAIR_PLUS_PAYTABLE,
    TCP_PROGRESSIVE_PAYTABLE,
    TCP_SIX_CARD_PAYTABLE,
    THB_BONUS_PAYTABLE,
    ProgressiveLine,
)
from pokerrules.casino.gamemath.enumeration import evaluate, rank_count, suit_symmetric_sets
from pokerrules.casino.gamemath.tables import BetMath, Line
from pokerrules.casino.paylines import thb_bonus_line

LOSS = Fraction(-1)


def _lines(paytable: Mapping[str, int], counts: dict[str, int], losing: int) -> tuple[Line, ...]:
    rows = [Line(name, counts.get(name, 0), Fraction(odds)) for name, odds in paytable.items()]
    return (*rows, Line("NO_WINNING_ROW", losing, LOSS))


def thb_bonus(paytable: Mapping[str, int] = THB_BONUS_PAYTABLE) -> BetMath:
    """THB-6.2 on the player's two hole cards; the 1000 to 1 row needs the Dealer's two hole cards to be
    the other two aces (THB-A5): 1 of the C(50, 2) Dealer holdings."""
    sets = suit_symmetric_sets(2)
    dealer_holdings = comb(50, 2)
    counts: dict[str, int] = {}
    losing = 0
    no_aces = (0, 1)  # any non-ace Dealer holding stands for "Dealer not A-A"
    for cards, weight in zip(sets.cards.tolist(), sets.weights.tolist(), strict=True):
        line = thb_bonus_line(cards, no_aces)
        if line is None:
            losing += weight * dealer_holdings
        elif line == "AA":
            counts["AA_PLAYER_AND_DEALER"] = counts.get("AA_PLAYER_AND_DEALER", 0) + weight
            counts["AA"] = counts.get("AA", 0) + weight * (dealer_holdings - 1)
        else:
            counts[line] = counts.get(line, 0) + weight * dealer_holdings
    bet = BetMath(
        "Texas Hold'em Bonus",
        "Bonus",
        _lines(paytable, counts, losing),
        comb(52, 2) * dealer_holdings,
        (
            "Settled at the result stage on hole cards that were played (THB-A2: a Fold forfeits it); "
            "the figure assumes no hand of a paying row is folded.",
        ),
    )
    bet.check()
    return bet


@cache
def _aa_bonus_counts() -> tuple[int, int]:
    sets = suit_symmetric_sets(5)
    _, categories = evaluate("HOLDEM", sets.cards)
    aces = rank_count(sets.cards, ACE)
    flush_or_higher = categories >= Category.FLUSH
    aces_to_straight = ~flush_or_higher & (
        (categories >= Category.TWO_PAIR) | ((categories == Category.PAIR) & (aces >= 2))
    )
    return int(sets.weights[flush_or_higher].sum()), int(sets.weights[aces_to_straight].sum())


def ch_aa_bonus(paytable: Mapping[str, int] = CH_AA_BONUS_PAYTABLE) -> BetMath:
    """CH-4.2 / CH-A3 on the player's 2 cards + the Flop: every 5-card set is equally likely."""
    flush_or_higher, aces_to_straight = _aa_bonus_counts()
    counts = {"FLUSH_OR_HIGHER": flush_or_higher, "ACES_TO_STRAIGHT": aces_to_straight}
    losing = comb(52, 5) - sum(counts.values())
    bet = BetMath(
        "Casino Hold'em",
        "AA Bonus",
        _lines(paytable, counts, losing),
        comb(52, 5),
        (
            "Holds when the AA Bonus stands on a fold (configuration), and when a fold forfeits it "
            "(CH-4.3) for a player who calls on every AA Bonus win: the document's side-bet optimal row.",
        ),
    )
    bet.check()
    return bet


@cache
def _three_card_lines() -> tuple[dict[str, int], int]:
    sets = suit_symmetric_sets(3)
    _, categories = evaluate("THREE_CARD", sets.cards)
    suits = sets.cards & 3
    ranks = np.sort(sets.cards >> 2, axis=1)
    mini_royal = (suits.min(axis=1) == suits.max(axis=1)) & (ranks[:, 0] == QUEEN) & (ranks[:, 2] == ACE)
    mini_royal &= ranks[:, 1] == KING
    names = {
        Category.STRAIGHT_FLUSH: "STRAIGHT_FLUSH",
        Category.ROYAL_FLUSH: "STRAIGHT_FLUSH",  # only reached if the evaluator names A-K-Q suited royal
        Category.THREE_OF_A_KIND: "THREE_OF_A_KIND",
        Category.STRAIGHT: "STRAIGHT",
        Category.FLUSH: "FLUSH",
        Category.PAIR: "PAIR",
    }
    counts: dict[str, int] = {"MINI_ROYAL_FLUSH": int(sets.weights[mini_royal].sum())}
    for category, name in names.items():
        mask = (categories == category) & ~mini_royal
        counts[name] = counts.get(name, 0) + int(sets.weights[mask].sum())
    losing = comb(52, 3) - sum(counts.values())
    return counts, losing


def tcp_pair_plus(paytable: Mapping[str, int] = TCP_PAIR_PLUS_PAYTABLE) -> BetMath:
    """TCP-5.1 on the player's three cards (TCP-5.3: one row only)."""
    counts, losing = dict(_three_card_lines()[0]), _three_card_lines()[1]
    bet = BetMath(
        "Three Card Poker",
        "Pair Plus",
        _lines(paytable, counts, losing),
        comb(52, 3),
        (
            "Lost on a fold (TCP-3.2); every paying hand (a pair or better) is played by the optimal "
            "strategy, so the figure holds for it.",
        ),
    )
    bet.check()
    return bet


@cache
def _six_card_categories() -> dict[Category, int]:
    sets = suit_symmetric_sets(6)
    _, categories = evaluate("HOLDEM", sets.cards)
    return {c: int(sets.weights[categories == c].sum()) for c in Category}


def tcp_six_card_bonus(paytable: Mapping[str, int] = TCP_SIX_CARD_PAYTABLE) -> BetMath:
    """TCP-5.2 on the best five of the player's 3 + the P/D's 3 cards: every 6-card set equally likely."""
    by_category = _six_card_categories()
    counts = {name: by_category[Category[name]] for name in paytable}
    losing = comb(52, 6) - sum(counts.values())
    bet = BetMath(
        "Three Card Poker",
        "6-Card Bonus",
        _lines(paytable, counts, losing),
        comb(52, 6),
        ("Stays in action on a fold (TCP-3.2): independent of the strategy.",),
    )
    bet.check()
    return bet


def tcp_progressive(pool: int, paytable: Mapping[str, ProgressiveLine] = TCP_PROGRESSIVE_PAYTABLE) -> BetMath:
    """TCP-2.5 with the configured default paytable, for a 1-chip stake and a pool of `pool` chips."""
    counts = _three_card_lines()[0]
    lines = []
    paid = 0
    for name, pay in paytable.items():
        net = (
            Fraction(pool * pay.pool_basis_points // 10_000) if pay.pool_basis_points else Fraction(pay.odds)
        )
        lines.append(Line(name, counts[name], net))
        paid += counts[name]
    bet = BetMath(
        "Three Card Poker",
        f"Progressive (pool {pool})",
        (*lines, Line("NO_WINNING_ROW", comb(52, 3) - paid, LOSS)),
        comb(52, 3),
        (
            "Return before the pool contribution; the pool gets exactly its share of all stakes in whole"
            " chips (the fraction of a chip is carried from round to round).",
        ),
    )
    bet.check()
    return bet
