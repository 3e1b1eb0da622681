"""The tournament director's commands at a table (NK-6.3 to NK-6.6): seat a player with tournament chips,
take one off between hands, set the blind level, release the next hands, close the table.

Tournament chips never come from a wallet (NK-6.6): the chips a director seats are counted in
`chips_bought_in` and those it takes away in `chips_returned`, so the table's invariant
`chips_bought_in == chips_on_table() + chips_returned` holds for tournament tables as for cash ones.
Every command is idempotent in effect where the director retries (a release through a hand already
released, a level already set, change nothing).
"""

from __future__ import annotations

from dataclasses import replace

from pokerrules.multiplayer.events import Event
from pokerrules.table import errors as e
from pokerrules.table.config import Blinds
from pokerrules.table.events import (
    ChipsReturned,
    HandsReleased,
    LevelSet,
    PlayerLeft,
    PlayerRemoved,
    PlayerSeated,
    TableClosed,
)
from pokerrules.table.state import Seat, TableState, Transition


def _tournament_only(state: TableState) -> None:
    if state.config.policy.is_cash:
        raise e.TableError(e.NOT_TOURNAMENT_TABLE, "only a tournament table takes the director's commands")


def _between_hands(state: TableState) -> None:
    if state.hand_in_progress:
        raise e.TableError(e.HAND_IN_PROGRESS, "the director changes a table between hands only")


def seat_player(
    state: TableState, player: str, number: int, stack: int, *, is_bot: bool = False
) -> Transition:
    """A tournament player sits with `stack` tournament chips; dealt in from the next hand."""
    _tournament_only(state)
    if not 1 <= number <= state.config.seats:
        raise e.TableError(e.NO_SUCH_SEAT, "no such seat", seat=number, seats=state.config.seats)
    if number in state.seats:
        raise e.TableError(e.SEAT_TAKEN, "the seat is taken", seat=number)
    if state.find_seat(player) is not None:
        raise e.TableError(e.ALREADY_SEATED, "the player already has a seat here", player=player)
    if stack <= 0:
        raise e.TableError(e.INVALID_AMOUNT, "a tournament player sits with chips", amount=stack)
    seat = Seat(
        player=player,
        stack=stack,
        is_bot=is_bot,
        time_bank_ms=state.config.timers.time_bank_ms,
        seated_after=state.hand_number,
    )
    new = replace(state.with_seat(number, seat), chips_bought_in=state.chips_bought_in + stack)
    return Transition(new, [PlayerSeated(number, player, is_bot)])


def remove_player(state: TableState, player: str) -> Transition:
    """Between hands: the player leaves this table with their stack (moved by the director, or done)."""
    _tournament_only(state)
    _between_hands(state)
    number = state.seat_of(player)
    stack = state.seats[number].stack
    new = replace(state.with_seat(number, None), chips_returned=state.chips_returned + stack)
    return Transition(new, [PlayerRemoved(number, player, stack)])


def set_level(state: TableState, blinds: Blinds) -> Transition:
    """The blinds and ante of the hands from the next one on (a hand in play keeps its own)."""
    _tournament_only(state)
    if blinds == state.blinds:
        return Transition(state, [])
    event = LevelSet(blinds.small_blind, blinds.big_blind, blinds.ante)
    return Transition(replace(state, level=blinds), [event])


def release_hands(state: TableState, through_hand: int) -> Transition:
    """Let the table deal up to hand number `through_hand` (Pace.DIRECTOR); a lower number changes nothing."""
    _tournament_only(state)
    if through_hand <= state.released_through:
        return Transition(state, [])
    return Transition(replace(state, released_through=through_hand), [HandsReleased(through_hand)])


def close_table(state: TableState) -> Transition:
    """Between hands: every seat is emptied — a cash player's stack returned to the wallet, a tournament
    player's taken by the director — and the table deals no more."""
    _between_hands(state)
    events: list[Event] = []
    returned = 0
    for number, seat in sorted(state.seats.items()):
        returned += seat.stack
        if state.config.policy.is_cash:
            events += [
                ChipsReturned(number, seat.player, seat.stack),
                PlayerLeft(number, seat.player, "CLOSED"),
            ]
        else:
            events.append(PlayerRemoved(number, seat.player, seat.stack))
    events.append(TableClosed())
    emptied = state.without_seats(list(state.seats))
    new = replace(emptied, closed=True, chips_returned=state.chips_returned + returned)
    return Transition(new, events)
