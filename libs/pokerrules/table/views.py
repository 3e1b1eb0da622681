"""The table as one viewer may see it: seats (bots marked, NK-7.6), the hand through the engine's
`view_for` (own hole cards only, others' at showdown), and the decision deadline."""

from __future__ import annotations

from dataclasses import dataclass

from pokerrules.multiplayer.views import HandView, view_for
from pokerrules.table.play import decision_deadline
from pokerrules.table.state import TableState


@dataclass(frozen=True, slots=True)
class SeatInfo:
    seat: int
    player: str
    is_bot: bool
    stack: int
    sitting_out: bool
    connected: bool
    leaving: bool
    in_hand: bool


@dataclass(frozen=True, slots=True)
class TableView:
    hand_number: int
    button: int | None
    seats: tuple[SeatInfo, ...]
    hand: HandView | None  # the hand in progress, else the last finished one
    deadline: int | None  # when the current decision times out


def table_view(state: TableState, viewer: str | None) -> TableView:
    """`viewer` is a player id (seated or watching) or None for an observer."""
    seat = state.shown_hand_seat(viewer)
    hand = state.hand if state.hand is not None else state.last_hand
    seats = tuple(
        SeatInfo(
            n, s.player, s.is_bot, state.stack_of(n), s.sitting_out, s.connected, s.leaving, state.in_hand(n)
        )
        for n, s in sorted(state.seats.items())
    )
    return TableView(
        hand_number=state.hand_number,
        button=state.button,
        seats=seats,
        hand=view_for(hand, seat) if hand is not None else None,
        deadline=decision_deadline(state),
    )
