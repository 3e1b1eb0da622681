"""Three Card Poker Ante/Play under the optimal strategy, exactly: every player hand (up to suit relabelling)
against every P/D hand from the other 49 cards, with the Play / Fold choice of higher expected value."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from math import comb

import numpy as np
import numpy.typing as npt
from handeval import Category

from pokerrules.casino.cards import QUEEN, RANKS
from pokerrules.casino.config import TcpAnteRule
from pokerrules.casino.gamemath.enumeration import all_sets, evaluate, suit_symmetric_sets
from pokerrules.casino.gamemath.tables import BetMath, Line

DEALER_HANDS = comb(49, 3)

OUTCOMES = (
    "FOLD",
    "PD_NOT_QUALIFIED_PLAYER_HIGHER",
    "PD_NOT_QUALIFIED_PLAYER_EQUAL_OR_LOWER",
    "PLAYER_WINS",
    "TIE",
    "PD_WINS",
)


@dataclass(frozen=True)
class TcpMain:
    ante_rule: TcpAnteRule
    math: BetMath  # per ante, outcome rows with their net in antes
    play_probability: Fraction
    decisions: dict[frozenset[int], bool]  # representative hand -> play?

    @property
    def edge_per_total_wagered(self) -> Fraction:
        return self.math.house_edge / (1 + self.play_probability)


def _masks(cards: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint64]:
    one = np.uint64(1)
    masks: npt.NDArray[np.uint64] = np.bitwise_or.reduce(one << cards.astype(np.uint64), axis=1)
    return masks


@cache
def tcp_main(ante_rule: TcpAnteRule = TcpAnteRule.LITERAL) -> TcpMain:
    dealer = all_sets(3)
    d_strength, d_category = evaluate("THREE_CARD", dealer)
    d_qualifies = (d_category > Category.HIGH_CARD) | ((dealer >> 2).max(axis=1) >= QUEEN)
    d_mask = _masks(dealer)
    players = suit_symmetric_sets(3)
    p_strength, _ = evaluate("THREE_CARD", players.cards)
    p_mask = _masks(players.cards)
    counts = dict.fromkeys(OUTCOMES, 0)
    plays = 0
    decisions: dict[frozenset[int], bool] = {}
    for i in range(len(players.cards)):
        live = (d_mask & p_mask[i]) == 0
        s, q = d_strength[live], d_qualifies[live]
        higher, equal = p_strength[i] > s, p_strength[i] == s
        n = {
            "PD_NOT_QUALIFIED_PLAYER_HIGHER": int((~q & higher).sum()),
            "PD_NOT_QUALIFIED_PLAYER_EQUAL_OR_LOWER": int((~q & ~higher).sum()),
            "PLAYER_WINS": int((q & higher).sum()),
            "TIE": int((q & equal).sum()),
        }
        n["PD_WINS"] = DEALER_HANDS - sum(n.values())
        ante_when_not_qualified = 1 if ante_rule == TcpAnteRule.STANDARD else 0
        play_total = (
            n["PD_NOT_QUALIFIED_PLAYER_HIGHER"]
            + ante_when_not_qualified * n["PD_NOT_QUALIFIED_PLAYER_EQUAL_OR_LOWER"]
            + 2 * n["PLAYER_WINS"]
            - 2 * n["PD_WINS"]
        )
        play = play_total > -DEALER_HANDS  # fold loses the Ante: -1 on every P/D hand; a tie folds
        decisions[frozenset(players.cards[i].tolist())] = play
        weight = int(players.weights[i])
        if play:
            plays += weight
            for name, c in n.items():
                counts[name] += weight * c
        else:
            counts["FOLD"] += weight * DEALER_HANDS
    not_q_other = Fraction(ante_when_not_qualified)
    nets = {
        "FOLD": Fraction(-1),
        "PD_NOT_QUALIFIED_PLAYER_HIGHER": Fraction(1),
        "PD_NOT_QUALIFIED_PLAYER_EQUAL_OR_LOWER": not_q_other,
        "PLAYER_WINS": Fraction(2),
        "TIE": Fraction(0),
        "PD_WINS": Fraction(-2),
    }
    math = BetMath(
        "Three Card Poker",
        f"Ante + Play ({ante_rule.value.lower()} TCP-A3 reading)",
        tuple(Line(name, counts[name], nets[name]) for name in OUTCOMES),
        comb(52, 3) * DEALER_HANDS,
        ("Per Ante: the net of Ante and Play together, in Antes.",),
    )
    math.check()
    return TcpMain(ante_rule, math, Fraction(plays, comb(52, 3)), decisions)


def canonical(cards: tuple[int, ...] | list[int]) -> frozenset[int]:
    """The enumerated representative of a hand: suits relabelled so their counts do not increase."""
    by_suit: dict[int, list[int]] = {}
    for c in cards:
        by_suit.setdefault(c & 3, []).append(c >> 2)
    # Suits ordered by count (largest first); among equal counts the enumeration holds every rank split, so
    # any order gives an enumerated representative with the same value.
    order = sorted(by_suit, key=lambda s: (-len(by_suit[s]), s))
    return frozenset(4 * r + new for new, s in enumerate(order) for r in by_suit[s])


def _ranks(hand: frozenset[int]) -> tuple[int, int, int]:
    high, mid, low = sorted((c >> 2 for c in hand), reverse=True)
    return high, mid, low


def _text(ranks: tuple[int, ...]) -> str:
    return "-".join(RANKS[r] for r in ranks)


def strategy_table(result: TcpMain) -> list[str]:
    """The strategy in words: which hands play. Pair or better always; high cards from a threshold."""
    played_categories: dict[str, set[bool]] = {}
    high_card: dict[tuple[int, int, int], set[bool]] = {}
    hands = list(result.decisions)
    _, categories = evaluate("THREE_CARD", np.array([sorted(h) for h in hands], dtype=np.uint8))
    for hand, category in zip(hands, categories.tolist(), strict=True):
        play = result.decisions[hand]
        if category == Category.HIGH_CARD:
            high_card.setdefault(_ranks(hand), set()).add(play)
        else:
            played_categories.setdefault(Category(category).name, set()).add(play)
    lines = []
    for name in ("PAIR", "FLUSH", "STRAIGHT", "THREE_OF_A_KIND", "STRAIGHT_FLUSH", "ROYAL_FLUSH"):
        if name in played_categories:
            verdict = played_categories[name]
            lines.append(
                f"| {name} | {'PLAY' if verdict == {True} else 'FOLD' if verdict == {False} else 'MIXED'} |"
            )
    ordered = sorted(high_card)
    always = [r for r in ordered if high_card[r] == {True}]
    never = [r for r in ordered if high_card[r] == {False}]
    mixed = [r for r in ordered if len(high_card[r]) == 2]
    if always:
        lines.append(f"| HIGH_CARD, weakest always played | {_text(min(always))} |")
    if never:
        lines.append(f"| HIGH_CARD, strongest always folded | {_text(max(never))} |")
    non_monotone = [r for r in always if any(n > r for n in never)]
    lines.append(
        f"| HIGH_CARD played only with some suits | {', '.join(_text(r) for r in mixed) or 'none'} |"
    )
    lines.append(f"| HIGH_CARD out of rank order | {', '.join(_text(r) for r in non_monotone) or 'none'} |")
    return lines
