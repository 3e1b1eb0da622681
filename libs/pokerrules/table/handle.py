"""`handle(state, command, now)`: the one entry of the table core. Every change to a table, live or
replayed from its log, is a typed command through here; a refused command raises (TableError, or the
engine's IllegalAction) and the state it was given is unchanged (states are immutable)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pokerrules.multiplayer.ranking import ranker_for
from pokerrules.multiplayer.state import Ranker
from pokerrules.table import commands as c
from pokerrules.table import errors as e
from pokerrules.table.config import Blinds
from pokerrules.table.director import close_table, release_hands, remove_player, seat_player, set_level
from pokerrules.table.play import act, start_next_hand, void_hand
from pokerrules.table.powers import respond_to_anchor, use_power
from pokerrules.table.seating import invite, leave, sit, sit_in, sit_out, top_up
from pokerrules.table.state import TableState, Transition
from pokerrules.table.timers import apply_due, disconnect, reconnect

Handler = Callable[[TableState, Any, int], Transition]

_HANDLERS: dict[type, Handler] = {
    c.Sit: lambda s, m, now: sit(s, m.player, m.seat, m.buy_in, is_bot=m.is_bot, code=m.code),
    c.TopUp: lambda s, m, now: top_up(s, m.player, m.amount),
    c.SitOut: lambda s, m, now: sit_out(s, m.player),
    c.SitIn: lambda s, m, now: sit_in(s, m.player),
    c.Leave: lambda s, m, now: leave(s, m.player, now, m.reason),
    c.Invite: lambda s, m, now: invite(s, m.by, m.players),
    c.Act: lambda s, m, now: act(s, m.player, m.action, now),
    c.UsePower: lambda s, m, now: use_power(s, m.player, m.power, m.target_seat, m.hole_card, now),
    c.RespondToAnchor: lambda s, m, now: respond_to_anchor(s, m.player, m.shield, now),
    c.Disconnect: lambda s, m, now: disconnect(s, m.player, now),
    c.Reconnect: lambda s, m, now: reconnect(s, m.player, now),
    c.ApplyDue: lambda s, m, now: apply_due(s, now),
    c.VoidHand: lambda s, m, now: void_hand(s),
    c.SeatPlayer: lambda s, m, now: seat_player(s, m.player, m.seat, m.stack, is_bot=m.is_bot),
    c.RemovePlayer: lambda s, m, now: remove_player(s, m.player),
    c.SetLevel: lambda s, m, now: set_level(s, Blinds(m.small_blind, m.big_blind, m.ante)),
    c.ReleaseHands: lambda s, m, now: release_hands(s, m.through_hand),
    c.CloseTable: lambda s, m, now: close_table(s),
}


def handle(
    state: TableState,
    command: c.Command,
    now: int,
    *,
    deck: Sequence[int] | None = None,
    rank: Ranker | None = None,
) -> Transition:
    """Apply one command at time `now` (integer ms of the table's clock). `deck` (the hand's cards from
    the dealer, in order) is needed by StartHand only; `rank` defaults to the variant's evaluator."""
    if state.closed:
        if isinstance(command, c.ApplyDue):
            return Transition(state, [])
        raise e.TableError(e.TABLE_CLOSED, "the table is closed")
    if isinstance(command, c.StartHand):
        if deck is None or len(deck) != command.cards:
            raise e.TableError(e.INVALID_CONFIG, "a hand is dealt from the shoe's cards", cards=command.cards)
        ranker = rank if rank is not None else ranker_for(state.config.game.variant)
        return start_next_hand(state, deck, ranker, now, command.carrusel)
    handler = _HANDLERS.get(type(command))
    if handler is None:
        raise TypeError(f"not a table command: {command!r}")
    return handler(state, command, now)
