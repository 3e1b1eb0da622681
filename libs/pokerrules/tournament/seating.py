"""Where players sit: the blinds of a table's next hand, fair seats for a newcomer, the worst position.

The director models each table's button the way the table deals (`pokerrules.multiplayer.next_button`,
MP-2.1 / MP-6.8): every seated player is dealt in (absent ones too, blinded off, NK-7), the button moves to
the next seat dealt in, the two seats after it post the blinds (heads-up: the button posts the small
blind, NK-2.2). There is no dead button, so "where a newcomer sits" decides the next hand's blinds:

- a newcomer seated after the last hand's button and before the next small blind would take the button or
  the small blind of the next hand (and make the last hand's big blind post it again): TDA "never dealt in
  between the small blind and the button". So a seat is **fair** for a newcomer when, with the newcomer
  there, the last hand's big blind does not post the big blind again and (three or more players) the
  newcomer is neither the button (a free orbit) nor the small blind (a skipped big blind) of the next hand,
  nor pushes there another player seated since the last hand (going from heads-up to three players moves
  the blinds). Heads-up the newcomer posts a blind either way; only the first condition applies. A player
  who has just posted the big blind at a broken table is not seated into the next big blind either;
- balancing (TDA): the player due the big blind next moves to the **worst position** at the new table, the
  fair seat whose big blind comes soonest: the big blind of the next hand when that seat is free.

All functions take seats as numbers and return seat numbers; they never draw randomness themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TypeVar

from pokerrules.multiplayer.engine import next_button

T = TypeVar("T")
Draw = Callable[[int], int]
"""draw(n) -> a uniform integer in [0, n): the dealer's verifiable draw, or a seeded one in simulations."""


@dataclass(frozen=True, slots=True)
class Roles:
    button: int
    small_blind: int
    big_blind: int


def coming_roles(seats: Collection[int], last_button: int | None) -> Roles:
    """The button and blinds of the next hand dealt to `seats` (at least two), as the table deals it."""
    ordered = sorted(seats)
    n = len(ordered)
    if n < 2:
        raise ValueError("a hand needs two players")
    button = next_button(ordered, last_button)
    b = ordered.index(button)
    if n == 2:
        return Roles(button, button, ordered[(b + 1) % 2])
    return Roles(button, ordered[(b + 1) % n], ordered[(b + 2) % n])


def is_fair_seat(
    occupied: Collection[int],
    seat: int,
    last_button: int | None,
    last_big_blind: int | None,
    fresh: Collection[int] = (),
    posted_big_blind: bool = False,
) -> bool:
    """Whether a newcomer may be dealt in at `seat` from the next hand (module docstring).

    `last_big_blind` is the seat of the last hand's big blind if that player still sits there, else None;
    `fresh` are the seats of players seated since the last hand (not dealt here yet): like the newcomer
    they must not end up on the button or in the small blind. A newcomer who `posted_big_blind` in their
    last hand (at another table) must not post it again in the next.
    """
    if last_button is None or not occupied:
        return True  # a table that has not dealt yet: every seat is fair
    with_newcomer = [*occupied, seat]
    roles = coming_roles(with_newcomer, last_button)
    if last_big_blind is not None and roles.big_blind == last_big_blind:
        return False
    if posted_big_blind and roles.big_blind == seat:
        return False
    if len(with_newcomer) < 3:
        return True  # heads-up the newcomer posts a blind either way
    # Not the button (a free orbit) nor the small blind (a skipped big blind), for the newcomer or for a
    # player seated since the last hand, whose place the newcomer would shift.
    return (
        roles.button != seat
        and roles.small_blind != seat
        and not {roles.button, roles.small_blind} & set(fresh)
    )


def hands_until_big_blind(occupied: Collection[int], seat: int, last_button: int | None) -> int:
    """How many hands a player at `seat` (one of `occupied`) plays before posting the big blind, if
    nobody joins or leaves: 0 when they post it in the next hand."""
    ordered = sorted(occupied)
    if len(ordered) < 2:
        return 0
    big = coming_roles(ordered, last_button).big_blind
    return (ordered.index(seat) - ordered.index(big)) % len(ordered)


def fair_open_seats(
    occupied: Collection[int],
    seats_per_table: int,
    last_button: int | None,
    last_big_blind: int | None,
    fresh: Collection[int] = (),
    posted_big_blind: bool = False,
) -> list[int]:
    taken = set(occupied)
    return [
        s
        for s in range(1, seats_per_table + 1)
        if s not in taken and is_fair_seat(taken, s, last_button, last_big_blind, fresh, posted_big_blind)
    ]


def least_unfair_seats(
    occupied: Collection[int],
    seats_per_table: int,
    last_button: int | None,
    last_big_blind: int | None,
    fresh: Collection[int] = (),
    posted_big_blind: bool = False,
) -> list[int]:
    """The free seats for a newcomer who may wait no longer when none is fair (a heads-up table, where a
    third never has a fair seat; a player who already waited a whole hand there): those that break the
    fewest of `is_fair_seat`'s conditions, the other players' first. In that order of weight: another
    player posts the big blind again or is pushed onto the button or small blind; the newcomer skips the
    big blind (the small blind) or posts it twice in a row; the newcomer gets the button (a free hand)."""
    taken = set(occupied)
    free = [s for s in range(1, seats_per_table + 1) if s not in taken]
    if last_button is None or not taken:
        return free
    pushed = set(fresh)

    def cost(seat: int) -> tuple[bool, bool, bool]:
        roles = coming_roles([*taken, seat], last_button)
        others = roles.big_blind == last_big_blind or bool({roles.button, roles.small_blind} & pushed)
        mine = roles.small_blind == seat or (posted_big_blind and roles.big_blind == seat)
        return others, mine, roles.button == seat

    costs = {seat: cost(seat) for seat in free}
    best = min(costs.values(), default=None)
    return [seat for seat in free if costs[seat] == best]


def worst_position(occupied: Collection[int], candidates: Sequence[int], last_button: int | None) -> int:
    """TDA balancing: among `candidates` (fair open seats), the one whose big blind comes soonest (the next
    big blind itself when it is free; never the small blind, which `is_fair_seat` already excludes)."""
    if not candidates:
        raise ValueError("no seat to choose from")
    taken = list(occupied)
    return min(candidates, key=lambda s: (hands_until_big_blind([*taken, s], s, last_button), s))


def shuffled(items: Sequence[T], draw: Draw) -> list[T]:
    """A uniformly random order (Fisher–Yates) driven by `draw`."""
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = draw(i + 1)
        out[i], out[j] = out[j], out[i]
    return out
