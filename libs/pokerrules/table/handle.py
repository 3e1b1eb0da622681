"""`handle(state, command, now)`: the one entry of the table core. Every change to a table, live or
replayed from its log, is a typed command through here; a refused command raises (TableError, or the
engine's IllegalAction) and the state it was given is unchanged (states are immutable)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from pokerrules.multiplayer.ranking import ranker_for
from pokerrules.multiplayer.state import Ranker
from pokerrules.table import commands as c
from pokerrules.table import errors as e
from pokerrules.table import fairness
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
    c.GiveSeed: lambda s, m, now: _give_seed(s, m, now),
    c.CommitShoe: lambda s, m, now: _commit_shoe(s, m, now),
    c.RecordReveal: lambda s, m, now: _record_reveal(s, m),
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
        # A table closed after its last hand still owes that hand's server seed to its players (docs/
        # fairness.md section 11; the clock reveals it once no deal did): refused, the clock retried it
        # every second, forever, and the seed never came out.
        if not isinstance(command, c.RecordReveal):
            raise e.TableError(e.TABLE_CLOSED, "the table is closed")
    if isinstance(command, c.StartHand):
        if deck is None or len(deck) != command.cards:
            raise e.TableError(e.INVALID_CONFIG, "a hand is dealt from the shoe's cards", cards=command.cards)
        ranker = rank if rank is not None else ranker_for(state.config.game.variant)
        return _start_hand(state, command, deck, ranker, now)
    handler = _HANDLERS.get(type(command))
    if handler is None:
        raise TypeError(f"not a table command: {command!r}")
    return handler(state, command, now)


def _start_hand(
    state: TableState, command: c.StartHand, deck: Sequence[int], rank: Ranker, now: int
) -> Transition:
    """The next hand; dealt with client seeds (docs/fairness.md section 11), it also reveals the previous
    hand's server seed to that hand's players and publishes the next hand's commitment. The new events
    come after the hand's own, so the hand's events keep their order."""
    if not command.client_seeds:  # a hand logged before client seeds: dealt as it was
        return start_next_hand(replace(state, dealt_shoe=""), deck, rank, now, command.carrusel)
    given = tuple(fairness.Contribution.of(v) for v in command.client_seeds)
    fairness.check_contributions(state, command.shoe_id, given)
    revealed = fairness.reveal(
        state.unrevealed, command.revealed_hand, command.revealed_shoe_id, command.revealed_seed
    )
    unrevealed = None if revealed or command.revealed_shoe_id else state.unrevealed
    following, announced = None, []
    if command.next_shoe_id:
        following, event = fairness.commit(
            replace(state, hand_number=state.hand_number + 1),
            state.hand_number + 2,
            command.next_shoe_id,
            command.next_commitment,
            now,
        )
        announced.append(event)
    ready = replace(state, commitment=following, unrevealed=unrevealed, dealt_shoe=command.shoe_id)
    t = start_next_hand(ready, deck, rank, now, command.carrusel)
    return Transition(t.state, [*t.events, *revealed, *announced])


def _give_seed(state: TableState, command: c.GiveSeed, now: int) -> Transition:
    commitment, events = fairness.give_seed(state, command.player, command.hand, command.seed, now)
    return Transition(replace(state, commitment=commitment), events)


def _commit_shoe(state: TableState, command: c.CommitShoe, now: int) -> Transition:
    if state.hand_in_progress:
        raise e.TableError(e.HAND_IN_PROGRESS, "a hand is being played: its deal commits the next shoe")
    commitment, event = fairness.commit(state, command.hand, command.shoe_id, command.commitment, now)
    return Transition(replace(state, commitment=commitment), [event])


def _record_reveal(state: TableState, command: c.RecordReveal) -> Transition:
    held = state.unrevealed
    if held is None or (held.hand, held.shoe_id) != (command.hand, command.shoe_id):
        return Transition(state, [])  # revealed already (by the next deal): nothing to do
    events = fairness.reveal(held, command.hand, command.shoe_id, command.server_seed)
    return Transition(replace(state, unrevealed=None), events)
