"""Plain-English description of a best hand ("Two Pair, Kings and Sevens, Ace kicker")."""

from __future__ import annotations

from collections.abc import Sequence

from handeval.values import Category, Rule

_NAMES = (
    "Deuce",
    "Three",
    "Four",
    "Five",
    "Six",
    "Seven",
    "Eight",
    "Nine",
    "Ten",
    "Jack",
    "Queen",
    "King",
    "Ace",
)
_PLURALS = (
    "Deuces",
    "Threes",
    "Fours",
    "Fives",
    "Sixes",
    "Sevens",
    "Eights",
    "Nines",
    "Tens",
    "Jacks",
    "Queens",
    "Kings",
    "Aces",
)


def _kickers(ranks: Sequence[int]) -> str:
    if not ranks:
        return ""
    word = "kicker" if len(ranks) == 1 else "kickers"
    return ", " + "-".join(_NAMES[r] for r in ranks) + " " + word


def describe(rule: Rule, category: Category, best: Sequence[int]) -> str:
    """Describe `best` (canonical strongest-first order, as evaluate() returns it)."""
    r = [c >> 2 for c in best]
    names = "-".join(_NAMES[x] for x in r)
    three = rule is Rule.THREE_CARD
    if category is Category.ROYAL_FLUSH:
        return "Mini Royal Flush" if three else "Royal Flush"
    if category is Category.STRAIGHT_FLUSH:
        return f"Straight Flush, {_NAMES[r[0]]} high"
    if category is Category.FOUR_OF_A_KIND:
        return f"Four of a Kind, {_PLURALS[r[0]]}{_kickers(r[4:])}"
    if category is Category.FULL_HOUSE:
        return f"Full House, {_PLURALS[r[0]]} full of {_PLURALS[r[3]]}"
    if category is Category.FLUSH:
        return f"Flush, {names}"
    if category is Category.STRAIGHT:
        return f"Straight, {_NAMES[r[0]]} high"
    if category is Category.THREE_OF_A_KIND:
        return f"Three of a Kind, {_PLURALS[r[0]]}{_kickers(r[3:])}"
    if category is Category.TWO_PAIR:
        return f"Two Pair, {_PLURALS[r[0]]} and {_PLURALS[r[2]]}{_kickers(r[4:])}"
    if category is Category.PAIR:
        return f"Pair of {_PLURALS[r[0]]}{_kickers(r[2:])}"
    return f"High Card, {names}"
