"""Hands at a table: starting the next hand, players' actions, and settling a finished hand.

The betting itself is the engine's (`pokerrules.multiplayer`); this module decides who is dealt in, moves
the button among them (MP-2.1, MP-6.8), keeps the decision clock (NK-7.1) and, when the hand ends, brings
the stacks back to the seats: busted players are sat out (they may watch and re-buy, NK-6.1) and players
who asked to leave mid-hand get their stacks returned.

At a Naiko table every betting action (a player's, a bot's, a time-out's, a leaver's or a blinded-off
player's automatic check or fold) goes through `pokerrules.naiko.act` (`bet`), the deal grants Destellos
and fixes the Carrusel (`pokerrules.naiko.deal`), and a voided hand gives back the Destellos spent in it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pokerrules import naiko as nk
from pokerrules.multiplayer import Action, IllegalAction, apply, next_button, start_hand, timeout_action
from pokerrules.multiplayer.actions import LegalActions
from pokerrules.multiplayer.events import Event
from pokerrules.multiplayer.state import Ranker
from pokerrules.table import errors as e
from pokerrules.table.events import ChipsReturned, PlayerBusted, PlayerLeft, PlayerSatOut
from pokerrules.table.fairness import Unrevealed
from pokerrules.table.policy import Bust
from pokerrules.table.state import TableState, Transition


def start_next_hand(
    state: TableState, deck: Sequence[int], rank: Ranker, now: int, carrusel: int | None = None
) -> Transition:
    """Deal the next hand to every active seat (at least two); the button moves to the next one of them.
    At a Naiko table `carrusel` is the dealer's draw for the hand (NK-5.4): the Carrusel it selects and
    +1 Destello for every seat dealt in (NK-5.1), right after the engine's deal."""
    if state.hand_in_progress:
        raise e.TableError(e.HAND_IN_PROGRESS, "a hand is being played")
    active = state.active_seats()
    if len(active) < 2:
        raise e.TableError(e.NOT_ENOUGH_PLAYERS, "a hand needs two active players", active=len(active))
    if not state.can_start_hand():
        raise e.TableError(e.HANDS_HELD, "the director has not released the next hand")
    naiko = state.naiko
    if naiko is not None and (type(carrusel) is not int or not 0 <= carrusel < nk.CARRUSEL_OUTCOMES):
        raise e.TableError(
            e.INVALID_CONFIG, "a Naiko hand is dealt with its Carrusel draw", carrusel=carrusel
        )
    button = next_button(active, state.button)
    game = state.config.game_at(state.blinds)
    try:
        started = start_hand(game, {n: state.seats[n].stack for n in active}, button, deck, rank)
    except IllegalAction as refusal:  # a bad deck from the caller
        raise e.TableError(refusal.reason, refusal.message, **refusal.details) from refusal
    events = list(started.events)
    if naiko is not None:
        assert carrusel is not None
        dealt = nk.deal(naiko, started.state, nk.carrusel_from_draw(carrusel), carrusel)
        naiko = dealt.naiko
        events.extend(dealt.events)
    new = replace(state, button=button, hand=started.state, hand_number=state.hand_number + 1, naiko=naiko)
    return advance(new, events, now)


def bet(state: TableState, seat: int, action: Action, now: int) -> tuple[TableState, list[Event]]:
    """One betting action on the hand in progress (the engine refuses an illegal one, nothing changed):
    through `pokerrules.naiko.act` at a Naiko table (a target acting inside its window has declined to
    shield: the cap applies first, and the action is judged under it)."""
    hand = state.hand
    assert hand is not None
    if state.naiko is None:
        moved = apply(hand, seat, action)
        return replace(state, hand=moved.state), list(moved.events)
    out = nk.act(state.naiko, hand, seat, action, now)
    return replace(state, hand=out.hand, naiko=out.naiko), list(out.events)


def legal_actions(state: TableState) -> LegalActions | None:
    """The legal actions of the player to act, as `bet` judges them (a Naiko target inside its window
    sees the capped maximum)."""
    hand = state.hand
    if hand is None or hand.finished:
        return None
    return nk.legal_actions(state.naiko, hand)


def decision_deadline(state: TableState) -> int | None:
    """When the current decision times out: its clock start + the decision time + the actor's time bank."""
    hand = state.hand
    if hand is None or hand.finished or state.turn_started_at is None:
        return None
    seat = hand.seat_to_act
    if seat is None:
        return None
    return state.turn_started_at + state.config.timers.decision_ms + state.seats[seat].time_bank_ms


def act(state: TableState, player: str, action: Action, now: int) -> Transition:
    """A player's own action; the engine refuses illegal ones (`IllegalAction`), and a late one is refused
    with TIME_EXPIRED (the service then applies the time-out, NK-7.2)."""
    hand = state.hand
    if hand is None or hand.finished:
        raise e.TableError(e.NO_HAND_IN_PROGRESS, "no hand is being played")
    number = state.seat_of(player)
    deadline = decision_deadline(state)
    if deadline is not None and hand.seat_to_act == number and now >= deadline:
        raise e.TableError(e.TIME_EXPIRED, "the decision timer ran out", deadline=deadline)
    moved, events = bet(state, number, action, now)
    seat = state.seats[number]
    # Time beyond the decision time comes out of the time bank (NK-7.1); it is not refilled.
    started = state.turn_started_at if state.turn_started_at is not None else now
    overtime = max(0, now - started - state.config.timers.decision_ms)
    seat = replace(seat, time_bank_ms=max(0, seat.time_bank_ms - overtime), timeouts_in_row=0)
    return advance(moved.with_seat(number, seat), events, now)


def advance(state: TableState, events: list[Event], now: int, *, acted: bool = True) -> Transition:
    """After a change to the hand: seats that are leaving check or fold at once (NK-A4's rule; the engine
    refuses a fold when checking is free), a finished hand is settled, and when a decision was made
    (`acted`) the next decision's clock starts at `now`; otherwise the running clock keeps running."""
    while True:
        hand = state.hand
        if hand is None:
            return Transition(state, events)
        if hand.finished:
            return settle(state, events)
        legal = hand.legal_actions()
        if legal is None:  # the engine runs out the board itself; unreachable in a live hand
            return Transition(replace(state, turn_started_at=None), events)
        if not state.acts_for(state.seats[legal.seat]):
            return Transition(replace(state, turn_started_at=now) if acted else state, events)
        state, moved = bet(state, legal.seat, timeout_action(legal), now)
        events.extend(moved)
        acted = True


def void_hand(state: TableState) -> Transition:
    """Void the hand in progress (e.g. a restarted service that cannot resume it): every chip committed to
    it goes back to its owner (`HandVoided`), then the hand is settled like any other (leavers paid out).
    At a Naiko table every Destello spent in the hand comes back too (`DestellosReturned`)."""
    hand = state.hand
    if hand is None or hand.finished:
        raise e.TableError(e.NO_HAND_IN_PROGRESS, "no hand is being played")
    naiko, events = nk.void(state.naiko, hand)
    voided = hand.copy()
    events = [*voided.void(), *events]
    return settle(replace(state, hand=voided, naiko=naiko), events)


def settle(state: TableState, events: list[Event]) -> Transition:
    """The hand is over: stacks go back to the seats, leavers are paid out, busted players sit out (cash)
    or are eliminated (tournament)."""
    hand = state.hand
    assert hand is not None and hand.finished
    seats = dict(state.seats)
    returned = 0
    gone = []
    unrevealed = state.unrevealed
    if state.dealt_shoe:  # dealt with client seeds: its seed goes to its players once revealed
        players = tuple(seats[n].player for n in sorted(hand.seats) if n in seats)
        unrevealed = Unrevealed(state.hand_number, state.dealt_shoe, players)
    for number in hand.seats:
        seats[number] = replace(seats[number], stack=hand.stack_of(number))
    for number in sorted(seats):
        seat = seats[number]
        if seat.leaving:
            events.append(ChipsReturned(number, seat.player, seat.stack))
            events.append(PlayerLeft(number, seat.player, "LEFT"))
            returned += seat.stack
            gone.append(number)
        elif seat.stack == 0 and state.config.policy.bust is Bust.ELIMINATE:
            # NK-6.3: out of the tournament; the seat is free for the director's next move.
            events.append(PlayerBusted(number, seat.player))
            gone.append(number)
        elif seat.stack == 0 and not seat.sitting_out:
            # NK-6.1: a busted player keeps the seat to watch and may reload; dealt in again after a re-buy.
            seats[number] = replace(seat, sitting_out=True)
            events.append(PlayerSatOut(number, "BUSTED"))
    new = replace(
        replace(state, seats=seats).without_seats(gone),
        hand=None,
        last_hand=hand,
        turn_started_at=None,
        chips_returned=state.chips_returned + returned,
        unrevealed=unrevealed,
    )
    return Transition(new, events)
