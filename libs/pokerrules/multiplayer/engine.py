"""The functional face of the engine: `state + command -> new state + events`, and the button's move.

`apply` never mutates its input (copy-on-write: one shallow copy of a few small lists per command), so the
table service can keep the confirmed state and swap in the new one only once the events are persisted.
Hot loops that own their state (simulations, benchmarks) may call `HandState.act` directly instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pokerrules.multiplayer.actions import Action, LegalActions
from pokerrules.multiplayer.config import GameConfig
from pokerrules.multiplayer.events import Event
from pokerrules.multiplayer.state import HandState, Ranker


@dataclass(frozen=True, slots=True)
class Transition:
    state: HandState
    events: list[Event]


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
