"""The functional face of the engine: `state + command -> new state + events`, and the button's move.

`apply` never mutates its input (copy-on-write: one shallow copy of a few small lists per command), so the
table service can keep the confirmed state and swap in the new one only once the events are persisted.
Hot loops that own their state (simulations, benchmarks) may call `HandState.act` directly instead.
The Naiko powers' effects on a hand (`cap_raises_to_pot`, `swap_hole_card`) copy the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from pokerrules.multiplayer.actions import Action, LegalActions
from pokerrules.multiplayer.config import GameConfig
from pokerrules.multiplayer.events import Event
from pokerrules.multiplayer.state import HandState, Ranker


class Transition(NamedTuple):
    """A new state and its events. A named tuple: as immutable as a frozen dataclass and about three
    times cheaper to build, which every `apply` does."""

    state: HandState
    events: list[Event]


# `apply` builds its Transition with tuple.__new__ and both fields given: the same value as the class call,
# without the named tuple's Python-level __new__ (about 0.3 us of the 5 us an action costs).
_new = tuple.__new__


def start_hand(
    config: GameConfig, stacks: Mapping[int, int], button: int, deck: Sequence[int], rank: Ranker
) -> Transition:
    """A new hand: blinds posted, hole cards dealt, the first player to act known."""
    state, events = HandState.start(config, stacks, button, tuple(deck), rank)
    return Transition(state, events)


def apply(state: HandState, seat: int, action: Action) -> Transition:
    """Apply one action to a copy of `state`; raises IllegalAction (and copies nothing) if refused."""
    new = state.copy()
    events = new.act(seat, action)
    return _new(Transition, (new, events))


def cap_raises_to_pot(state: HandState, seat: int) -> Transition:
    """Jangkar Pendek's effect (NK-12.2) on a copy of `state`: the seat's bets and raises this round are
    capped at the pot-size amount (NK-3.7), never below the legal minimum nor above its stack (NK-12.6);
    the cap expires with the round (NK-12.7). No engine event: the powers module reports it."""
    new = state.copy()
    new.cap_raises_to_pot(seat)
    return Transition(new, [])


def swap_hole_card(state: HandState, seat: int, card: int) -> Transition:
    """Tukar Lengan Baju's effect (NK-11.2) on a copy of `state`: `card` is discarded (dead, NK-1.2) and the
    seat receives the card the next street would have started with (NK-10.5, NK-EX-15). The event
    (`HoleCardSwapped`) is private to the seat. IllegalAction (and nothing copied) if refused."""
    new = state.copy()
    events = new.swap_hole_card(seat, card)
    return Transition(new, events)


def replay(
    config: GameConfig,
    stacks: Mapping[int, int],
    button: int,
    deck: Sequence[int],
    rank: Ranker,
    actions: Iterable[tuple[int, Action]],
) -> Transition:
    """Rebuild a hand from its inputs and logged commands (the engine is deterministic given the cards):
    how a restarted table service recovers a hand in progress. Returns the final state and all events."""
    state, events = HandState.start(config, stacks, button, tuple(deck), rank)
    for seat, action in actions:
        events.extend(state.act(seat, action))
    return Transition(state, events)


def timeout_action(legal: LegalActions) -> Action:
    """NK-7.2 / NK-A4: when the decision timer runs out the server checks if it can, else folds."""
    return Action.check() if legal.can_check else Action.fold()


def next_button(seats_in_next_hand: Sequence[int], previous_button: int | None) -> int:
    """MP-2.1 / MP-6.8: the button moves one seat clockwise each hand, to the next seat dealt in.

    Seats are numbered clockwise, so that is the smallest seat above the previous button, wrapping round.
    The first hand at a table (no previous button) starts at the lowest seat.
    """
    ordered = sorted(seats_in_next_hand)
    if not ordered:
        raise ValueError("no seats")
    if previous_button is None:
        return ordered[0]
    for seat in ordered:
        if seat > previous_button:
            return seat
    return ordered[0]
