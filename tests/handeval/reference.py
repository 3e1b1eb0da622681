"""An independent, deliberately simple five-card ranking used to check the C core.

It shares no code or tables with handeval: categories by counting, tie-breaks by sorted rank tuples.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import combinations


def _straight_top(ranks: set[int]) -> int | None:
    for top in range(12, 3, -1):
        if all(r in ranks for r in range(top - 4, top + 1)):
            return top
    if {12, 0, 1, 2, 3} <= ranks:
        return 3  # the wheel: five high
    return None


def rank5(cards: Sequence[int]) -> tuple[int, ...]:
    """Comparable key of exactly five cards: (category 1..9, tie-break ranks...)."""
    ranks = [c >> 2 for c in cards]
    suits = {c & 3 for c in cards}
    counts = Counter(ranks)
    # ranks ordered by (count, rank), strongest first
    groups = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    ordered = tuple(r for r, _ in groups)
    shape = sorted(counts.values(), reverse=True)
    flush = len(suits) == 1
    top = _straight_top(set(ranks)) if len(counts) == 5 else None
    if flush and top is not None:
        return (9, top)
    if shape[0] == 4:
        return (8, *ordered)
    if shape == [3, 2]:
        return (7, *ordered)
    if flush:
        return (6, *sorted(ranks, reverse=True))
    if top is not None:
        return (5, top)
    if shape[0] == 3:
        return (4, *ordered)
    if shape == [2, 2, 1]:
        return (3, *ordered)
    if shape[0] == 2:
        return (2, *ordered)
    return (1, *sorted(ranks, reverse=True))


def best_of(cards: Iterable[int]) -> tuple[int, ...]:
    """Best five-card key among all five-card subsets."""
    return max(rank5(s) for s in combinations(list(cards), 5))


def omaha_best(hole: Sequence[int], board: Sequence[int]) -> tuple[int, ...]:
    """NK-1.4: exactly two hole cards and three board cards."""
    return max(rank5(h + b) for h in combinations(hole, 2) for b in combinations(board, 3))


def rank3(cards: Sequence[int]) -> tuple[int, ...]:
    """TCP-4.1 three-card key: high 1, pair 2, flush 3, straight 4, trips 5, straight flush 6."""
    ranks = sorted((c >> 2 for c in cards), reverse=True)
    flush = len({c & 3 for c in cards}) == 1
    counts = Counter(ranks)
    top = None
    if len(counts) == 3:
        if ranks[0] - ranks[2] == 2:
            top = ranks[0]
        elif ranks == [12, 1, 0]:
            top = 1  # A-2-3: the ace plays low (TCP-4.2)
    if len(counts) == 1:
        return (5, ranks[0])
    if top is not None:
        return (6 if flush else 4, top)
    if flush:
        return (3, *ranks)
    if len(counts) == 2:
        pair = next(r for r, n in counts.items() if n == 2)
        return (2, pair, next(r for r in ranks if r != pair))
    return (1, *ranks)
