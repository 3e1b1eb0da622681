"""Places of players eliminated together (NK-6.3: places by elimination order).

- Players busted **in the same hand at one table** are ranked by their stacks at the start of that hand:
  the bigger stack finishes higher; equal stacks share the places and their prizes (TDA practice).
- Players eliminated **in the same hand-for-hand round at different tables** share the place and its
  prizes. Combined with the rule above when one table loses several players in that round: each table's
  busted players are ranked among themselves as above, and players of equal rank at different tables
  share (the best of each table together, then the second best of each, ...).

A group of `k` players eliminated while `r` entries were still without a place takes places r-k+1 .. r:
its best tier the best of those places.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Bust:
    table: str
    entry: str
    starting_stack: int  # the stack at the start of the hand in which the player busted


def rank_tiers(busts: Sequence[Bust]) -> list[list[Bust]]:
    """Tiers of players eliminated together, best first; the players of one tier share places."""
    by_table: dict[str, list[Bust]] = {}
    for bust in busts:
        by_table.setdefault(bust.table, []).append(bust)
    depth: dict[str, int] = {}
    for group in by_table.values():
        for bust in group:
            # The number of players busted at the same table who started the hand with more chips.
            depth[bust.entry] = sum(1 for other in group if other.starting_stack > bust.starting_stack)
    tiers: dict[int, list[Bust]] = {}
    for bust in busts:
        tiers.setdefault(depth[bust.entry], []).append(bust)
    return [tiers[d] for d in sorted(tiers)]


def places_of(tiers: Sequence[Sequence[Bust]], unplaced: int) -> list[tuple[int, ...]]:
    """The places each tier occupies when `unplaced` entries had no place before this group."""
    size = sum(len(t) for t in tiers)
    first = unplaced - size + 1
    out: list[tuple[int, ...]] = []
    for tier in tiers:
        out.append(tuple(range(first, first + len(tier))))
        first += len(tier)
    return out
