"""Decision timers, time banks and reconnection (NK-7.1 to NK-7.5, NK-A4, NK-EX-16), in virtual time:
every call gets `now` from the test, nothing sleeps."""

from __future__ import annotations

import random

import pytest
from pokerrules.multiplayer import Action, ActionKind, Variant
from pokerrules.multiplayer.events import PlayerActed
from pokerrules.multiplayer.ranking import ranker_for
from pokerrules.table import (
    Mode,
    TableConfig,
    TableError,
    TableState,
    TimerConfig,
    Transition,
    act,
    apply_due,
    decision_deadline,
    disconnect,
    leave,
    next_wakeup,
    reconnect,
    sit,
    start_next_hand,
)
from pokerrules.table.events import ChipsReturned, PlayerLeft, PlayerSatOut, TimedOut

RANK = ranker_for(Variant.HOLDEM)
TIMERS = TimerConfig(
    decision_ms=10_000, time_bank_ms=5_000, reconnect_window_ms=30_000, max_timeouts_in_row=2
)


def table(players: int = 3) -> TableState:
    state = TableState.create(TableConfig(Mode.HOLDEM, 50, 100, 2_000, 10_000, seats=6, timers=TIMERS))
    for k in range(1, players + 1):
        state = sit(state, f"p{k}", k, 5_000).state
    return state


def deal(state: TableState, now: int = 0, seed: int = 7) -> Transition:
    deck = list(range(52))
    random.Random(seed).shuffle(deck)
    return start_next_hand(state, deck, RANK, now)


def actions(t: Transition) -> list[tuple[int, ActionKind]]:
    return [(ev.seat, ev.kind) for ev in t.events if isinstance(ev, PlayerActed)]


def test_nk_7_1_each_decision_has_a_limit_plus_the_time_bank() -> None:
    """NK-7.1: the decision times out after the decision time plus what is left of the player's bank."""
    t = deal(table(), now=1_000)  # button 1, blinds 2 and 3: seat 1 to act
    assert decision_deadline(t.state) == 1_000 + 10_000 + 5_000 == next_wakeup(t.state)
    assert apply_due(t.state, 15_999).events == []  # nothing due yet
    assert act(t.state, "p1", Action.call(), 15_999).state.hand is not None
    with pytest.raises(TableError) as info:
        act(t.state, "p1", Action.call(), 16_000)  # at the deadline the time-out is due, not the action
    assert info.value.reason == "TIME_EXPIRED"
    assert TimedOut(1, 1) in apply_due(t.state, 16_000).events


def test_nk_7_1_overtime_comes_out_of_the_time_bank_which_is_not_refilled() -> None:
    t = deal(table(), now=0)
    t = act(t.state, "p1", Action.call(), 13_000)  # 3 s into the bank
    assert t.state.seats[1].time_bank_ms == 2_000
    assert t.state.turn_started_at == 13_000  # the next decision's clock starts now
    assert decision_deadline(t.state) == 13_000 + 10_000 + 5_000  # seat 2 still has a full bank
    t = act(t.state, "p2", Action.call(), 14_000)
    assert t.state.seats[2].time_bank_ms == 5_000


def test_nk_ex_16_time_out_facing_a_bet_folds() -> None:
    """NK-EX-16 / NK-7.2 / NK-A4: the timer expires while facing a bet -> automatic fold."""
    t = deal(table(), now=0)
    due = apply_due(t.state, 15_000)
    assert due.events[0] == TimedOut(1, 1)
    assert actions(due)[0] == (1, ActionKind.FOLD)
    assert due.state.seats[1].time_bank_ms == 0


def test_nk_ex_16_time_out_with_no_bet_pending_checks() -> None:
    """NK-EX-16: the timer expires with no bet pending -> automatic check (the big blind's option)."""
    t = deal(table(), now=0)
    t = act(t.state, "p1", Action.call(), 0)
    t = act(t.state, "p2", Action.call(), 0)
    assert t.state.hand is not None and t.state.hand.seat_to_act == 3
    due = apply_due(t.state, 15_000)
    assert actions(due)[0] == (3, ActionKind.CHECK)
    assert due.state.hand is not None and due.state.hand.street == 1  # the flop is out


def test_the_next_clock_starts_when_the_previous_decision_expired() -> None:
    """A service that looks late costs nobody time: each time-out happens at its own deadline."""
    t = deal(table(4), now=0)  # button 1, blinds 2 and 3, seat 4 first to act
    due = apply_due(t.state, 15_000 + 15_000 + 3_000)  # seat 4 at 15 s, seat 1 at 30 s
    assert [ev.seat for ev in due.events if isinstance(ev, TimedOut)] == [4, 1]
    assert due.state.turn_started_at == 30_000


def test_players_who_keep_timing_out_are_sat_out() -> None:
    """The issue: a player who keeps timing out is sat out; here after 2 in a row (TimerConfig)."""
    state = table(2)
    now = 0
    t = deal(state, now)
    t = apply_due(t.state, now + 15_000)  # p1 (button, small blind) times out: fold
    assert t.state.hand is None and t.state.seats[1].timeouts_in_row == 1
    t = deal(t.state, 20_000)  # button 2 now; p2 small blind acts first, p1 in the big blind
    t = act(t.state, "p2", Action.call(), 20_000)
    t = apply_due(t.state, 20_000 + 10_000)  # p1 with no bank left: check
    assert TimedOut(1, 2) in t.events and PlayerSatOut(1, "TIMEOUTS") in t.events
    assert t.state.seats[1].sitting_out


def test_a_voluntary_action_resets_the_time_out_count() -> None:
    t = deal(table(2), 0)
    t = apply_due(t.state, 15_000)
    assert t.state.seats[1].timeouts_in_row == 1
    t = deal(t.state, 20_000)
    t = act(t.state, "p2", Action.call(), 20_000)
    t = act(t.state, "p1", Action.check(), 21_000)
    assert t.state.seats[1].timeouts_in_row == 0


def test_nk_7_3_a_disconnect_does_not_stop_the_clock_or_cancel_bets() -> None:
    """NK-7.3: losing the connection does not reset the timer and does not cancel bets."""
    t = deal(table(), 0)
    t = act(t.state, "p1", Action.raise_to(300), 1_000)
    t = disconnect(t.state, "p2", 2_000)
    assert decision_deadline(t.state) == 1_000 + 15_000
    due = apply_due(t.state, 16_000)
    assert actions(due)[0] == (2, ActionKind.FOLD)
    assert due.state.hand is not None and due.state.hand.pot == 300 + 50 + 100  # the raise stays in


def test_nk_7_4_nk_7_5_reconnecting_in_time_keeps_the_seat_and_the_confirmed_state() -> None:
    """NK-7.4: the seat is kept during the window; NK-7.5: back in time, the player continues from the
    state the server confirmed."""
    t = deal(table(), 0)
    t = disconnect(t.state, "p1", 0)
    assert t.state.seats[1].connected is False
    assert next_wakeup(t.state) == 15_000  # the decision expires before the window (30 s)
    back = reconnect(t.state, "p1", 5_000)
    assert back.state.seats[1].connected and back.state.hand is t.state.hand
    assert act(back.state, "p1", Action.call(), 6_000).state.hand is not None
    with pytest.raises(TableError) as info:
        reconnect(back.state, "p1", 6_000)
    assert info.value.reason == "ALREADY_CONNECTED"


def test_after_the_reconnection_window_a_player_between_hands_leaves_with_the_stack() -> None:
    state = disconnect(table(), "p3", 0).state
    assert next_wakeup(state) == 30_000
    assert apply_due(state, 29_999).events == []
    due = apply_due(state, 30_000)
    assert due.events == [ChipsReturned(3, "p3", 5_000), PlayerLeft(3, "p3", "RECONNECT_WINDOW_EXPIRED")]
    with pytest.raises(TableError) as info:
        reconnect(state, "p3", 30_000)
    assert info.value.reason == "TIME_EXPIRED"


def test_after_the_window_mid_hand_the_player_checks_or_folds_and_leaves_at_the_end() -> None:
    t = deal(table(), 0)
    t = act(t.state, "p1", Action.call(), 0)  # seat 2 (small blind) to act
    t = disconnect(t.state, "p3", 0)
    t = act(t.state, "p2", Action.call(), 1_000)
    # The big blind's decision expires at 16 s (check), before the window at 30 s; then p3 is leaving.
    due = apply_due(t.state, 31_000)
    assert (3, ActionKind.CHECK) in actions(due)
    state = due.state
    assert state.seats[3].leaving
    total = state.chips_bought_in
    while state.hand is not None:  # the others play on; p3 checks/folds automatically
        legal = state.hand.legal_actions()
        assert legal is not None and legal.seat != 3
        state = act(
            state,
            state.seats[legal.seat].player,
            Action.bet(200) if legal.can_check else Action.call(),
            31_000,
        ).state
    assert 3 not in state.seats
    assert total == state.chips_on_table() + state.chips_returned


def test_a_whole_hand_plays_itself_out_in_virtual_time() -> None:
    """Nobody acts: every decision times out in turn and the hand ends with the blinds won."""
    t = deal(table(), 0)
    t = apply_due(t.state, 10**9)
    assert t.state.hand is None and t.state.last_hand is not None and t.state.last_hand.finished
    assert t.state.chips_bought_in == t.state.chips_on_table() == 15_000


def test_nk_7_1_another_player_leaving_does_not_restart_the_clock_of_the_player_to_act() -> None:
    t = deal(table(4), 0)  # seat 4 to act, its clock started at 0
    t = leave(t.state, "p2", 9_000)  # p2 (small blind) schedules a leave: seat 4 is still to act
    assert t.state.turn_started_at == 0 and decision_deadline(t.state) == 15_000
    t = act(t.state, "p4", Action.call(), 10_000)  # seat 1 now; then p2, leaving, folds at once
    t = act(t.state, "p1", Action.call(), 11_000)
    assert t.state.hand is not None and t.state.hand.seat_to_act == 3
    assert t.state.turn_started_at == 11_000
