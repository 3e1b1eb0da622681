"""What one viewer may see of a hand (for GetTableView): their own cards only, others' at showdown.

MP-1.2: a player sees only their own hole cards; NK-4.4: at showdown the cards of every player still in
are shown. Observers (viewer None) see no hole cards before the showdown. Never the deck.
"""

from __future__ import annotations

from dataclasses import dataclass

from pokerrules.multiplayer.actions import LegalActions
from pokerrules.multiplayer.state import HandState


@dataclass(frozen=True, slots=True)
class SeatView:
    seat: int
    stack: int
    round_bet: int
    committed: int  # chips put in this hand so far
    folded: bool
    all_in: bool
    hole_cards: tuple[int, ...] | None  # None when this viewer may not see them


@dataclass(frozen=True, slots=True)
class HandView:
    version: int  # the `expected_version` a client sends back with its action
    button: int
    street: int
    board: tuple[int, ...]
    pot: int
    current_bet: int
    seat_to_act: int | None
    seats: tuple[SeatView, ...]
    legal: LegalActions | None  # only for the viewer whose turn it is
    finished: bool


def view_for(state: HandState, viewer: int | None) -> HandView:
    shown = state.showdown
    seats = []
    for j, seat in enumerate(state.seats):
        visible = seat == viewer or (shown and not state.folded[j])
        seats.append(
            SeatView(
                seat=seat,
                stack=state.stacks[j],
                round_bet=state.bets[j],
                committed=state.contrib[j],
                folded=state.folded[j],
                all_in=state.stacks[j] == 0 and not state.folded[j],
                hole_cards=state.holes[j] if visible else None,
            )
        )
    legal = state.legal_actions()
    return HandView(
        version=state.version,
        button=state.button,
        street=state.street,
        board=tuple(state.board),
        pot=state.pot,
        current_bet=state.current_bet,
        seat_to_act=state.seat_to_act,
        seats=tuple(seats),
        legal=legal if legal is not None and legal.seat == viewer else None,
        finished=state.finished,
    )
