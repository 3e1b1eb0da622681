"""Decision timers, time banks and the reconnection window (NK-7.1 to NK-7.5, NK-A4), in virtual time.

Pure functions of (state, now): the service asks `next_wakeup(state)` when to look again and calls
`apply_due(state, now)` then; tests drive the same functions with a virtual clock. Times are integer
milliseconds from any epoch the caller chooses (an injectable clock).

- Each decision has `decision_ms`, then the player's time bank (not refilled) runs; when both are gone the
  server checks if checking is legal, else folds (NK-7.2, NK-A4), and the next decision's clock starts at
  the moment the previous one expired, not when the service happened to look.
- `max_timeouts_in_row` time-outs in a row sit the player out from the next hand.
- A disconnect does not stop the clock (NK-7.3); the seat is kept for `reconnect_window_ms` (NK-7.4) and a
  player back in time continues from the confirmed state (NK-7.5). After the window the player leaves: at
  once between hands, or checking/folding to the hand's end and then paid out.
- Naiko mode: a Jangkar Pendek's response window ends at its absolute deadline (NK-13.5); then the cap
  applies (`pokerrules.naiko.expire`, NK-13.6). Deadlines are table-clock times in the state, so a table
  rebuilt from its log after a restart resumes a window where it was.
"""

from __future__ import annotations

from dataclasses import replace

from pokerrules import naiko as nk
from pokerrules.multiplayer import timeout_action
from pokerrules.multiplayer.events import Event
from pokerrules.table import errors as e
from pokerrules.table.events import PlayerDisconnected, PlayerReconnected, PlayerSatOut, TimedOut
from pokerrules.table.play import advance, bet, decision_deadline
from pokerrules.table.policy import Absence
from pokerrules.table.seating import leave
from pokerrules.table.state import TableState, Transition

__all__ = ["apply_due", "decision_deadline", "disconnect", "next_wakeup", "reconnect"]


def disconnect(state: TableState, player: str, now: int) -> Transition:
    number = state.seat_of(player)
    seat = state.seats[number]
    if not seat.connected:
        raise e.TableError(e.ALREADY_DISCONNECTED, "the player is already disconnected")
    return Transition(
        state.with_seat(number, replace(seat, disconnected_at=now)), [PlayerDisconnected(number)]
    )


def reconnect(state: TableState, player: str, now: int) -> Transition:
    """Back within the window: the seat and the confirmed state are there (NK-7.4, NK-7.5)."""
    number = state.seat_of(player)
    seat = state.seats[number]
    if seat.disconnected_at is None:
        raise e.TableError(e.ALREADY_CONNECTED, "the player is connected")
    if now >= seat.disconnected_at + state.config.timers.reconnect_window_ms:
        # The service should have applied the expiry; refuse rather than resurrect the seat.
        raise e.TableError(e.TIME_EXPIRED, "the reconnection window is over")
    return Transition(
        state.with_seat(number, replace(seat, disconnected_at=None)), [PlayerReconnected(number)]
    )


def _reconnect_expiries(state: TableState) -> list[tuple[int, int]]:
    window = state.config.timers.reconnect_window_ms
    blinded_off = state.config.policy.absence is Absence.BLINDED_OFF
    return sorted(
        (s.disconnected_at + window, n)
        for n, s in state.seats.items()
        if s.disconnected_at is not None and not s.leaving and not (blinded_off and s.sitting_out)
    )


def shield_deadline(state: TableState) -> int | None:
    """The earliest open Jangkar Pendek response window's deadline (Naiko mode), if any."""
    if state.naiko is None or not state.hand_in_progress:
        return None
    return state.naiko.next_deadline()


def next_wakeup(state: TableState) -> int | None:
    """The earliest time something falls due (a decision time-out, a reconnection window's end or a
    shield window's end)."""
    times = [t for t, _ in _reconnect_expiries(state)]
    for deadline in (decision_deadline(state), shield_deadline(state)):
        if deadline is not None:
            times.append(deadline)
    return min(times) if times else None


def apply_due(state: TableState, now: int) -> Transition:
    """Everything due at or before `now`, in time order: reconnection windows, shield windows (the cap
    applies) and decision time-outs."""
    events: list[Event] = []
    while True:
        deadline = decision_deadline(state)
        shield = shield_deadline(state)
        expiries = [(t, n) for t, n in _reconnect_expiries(state) if t <= now]
        due = [t for t in (deadline, shield) if t is not None]
        if expiries and (not due or expiries[0][0] <= min(due)):
            at, number = expiries[0]
            moved = _window_expired(state, number, at)
        elif shield is not None and shield <= now and (deadline is None or shield <= deadline):
            moved = _shield_window_over(state, shield)
        elif deadline is not None and deadline <= now:
            moved = _time_out(state, deadline)
        else:
            return Transition(state, events)
        state = moved.state
        events.extend(moved.events)


def _shield_window_over(state: TableState, at: int) -> Transition:
    """NK-13.6: no answer in time: the Jangkar Pendek's cap applies; the target pays nothing."""
    assert state.naiko is not None and state.hand is not None
    out = nk.expire(state.naiko, state.hand, at)
    return Transition(replace(state, naiko=out.naiko, hand=out.hand), list(out.events))


def _window_expired(state: TableState, number: int, at: int) -> Transition:
    """NK-7.4: the seat was kept for the window. A cash player leaves now (or at the hand's end); a
    tournament player stays and is blinded off: sat out, their decisions taken at once."""
    seat = state.seats[number]
    if state.config.policy.absence is Absence.BLINDED_OFF:
        sat_out = state.with_seat(number, replace(seat, sitting_out=True))
        return advance(sat_out, [PlayerSatOut(number, "DISCONNECTED")], at, acted=False)
    return leave(state, seat.player, at, reason="RECONNECT_WINDOW_EXPIRED")


def _time_out(state: TableState, at: int) -> Transition:
    hand = state.hand
    assert hand is not None
    legal = hand.legal_actions()
    assert legal is not None
    number = legal.seat
    seat = state.seats[number]
    in_a_row = seat.timeouts_in_row + 1
    events: list[Event] = [TimedOut(number, in_a_row)]
    seat = replace(seat, time_bank_ms=0, timeouts_in_row=in_a_row)
    if in_a_row >= state.config.timers.max_timeouts_in_row and not seat.sitting_out:
        seat = replace(seat, sitting_out=True)
        events.append(PlayerSatOut(number, "TIMEOUTS"))
    # NK-7.2 / NK-A4: check if legal, else fold
    moved, acted = bet(state.with_seat(number, seat), number, timeout_action(legal), at)
    return advance(moved, [*events, *acted], at)
