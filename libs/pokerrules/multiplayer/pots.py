"""Main and side pots built from contributions, and pot splitting with odd chips (MP section 6, NK-4)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Pot:
    amount: int
    eligible: tuple[int, ...]  # player indices still in the hand who contributed at least this level


def build_pots(
    contributions: Sequence[int], live: Sequence[bool], dead: int = 0, dead_from: int = -1
) -> list[Pot]:
    """MP-6.4: each pot takes, from every player who reached a level, the difference to the level below.

    Levels are the distinct contributions of players still in the hand; folded players' chips fill the
    levels they reached and then stay in the pot (MP-4.3). Chips above the highest live level (possible
    only before uncalled bets are returned) go to the last pot.

    `dead` chips of player `dead_from`'s contribution (the big blind ante) are dead money: they make no
    level of their own and go to the main pot, which every player still in may win (as PokerKit's dead
    antes). So a big blind all-in on the ante can win the whole ante back, and nobody else's side pot.
    """
    if dead:
        contributions = list(contributions)
        contributions[dead_from] -= dead
        with_dead = build_pots(contributions, live)
        with_dead[0] = Pot(with_dead[0].amount + dead, with_dead[0].eligible)
        return with_dead
    levels = sorted({c for c, alive in zip(contributions, live, strict=True) if alive and c > 0})
    if len(levels) == 1 and max(contributions) <= levels[0]:
        # The common case, nobody all-in for less: one pot that every player still in may win.
        return [Pot(sum(contributions), tuple(i for i, alive in enumerate(live) if alive))]
    pots: list[Pot] = []
    previous = 0
    n = len(contributions)
    for k, level in enumerate(levels):
        top = k == len(levels) - 1
        amount = 0
        for i in range(n):
            c = contributions[i]
            amount += (c if top else min(c, level)) - min(c, previous) if c > previous else 0
        eligible = tuple(i for i in range(n) if live[i] and contributions[i] >= level)
        if pots and pots[-1].eligible == eligible:
            pots[-1] = Pot(pots[-1].amount + amount, eligible)
        else:
            pots.append(Pot(amount, eligible))
        previous = level
    return pots


def split_pot(amount: int, winners_from_button: Sequence[int]) -> list[tuple[int, int]]:
    """MP-6.2/MP-6.3, NK-4.6: equal shares; odd chips one at a time starting with the winner closest to
    the left of the button. `winners_from_button` must already be in that clockwise order."""
    count = len(winners_from_button)
    share, odd = divmod(amount, count)
    return [(w, share + (1 if k < odd else 0)) for k, w in enumerate(winners_from_button)]
