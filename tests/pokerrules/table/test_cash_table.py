"""Cash and private tables across hands (NK-6.1, NK-6.2, NK-7.6, MP-2.1, MP-6.8): seats, buy-in, top-up,
re-buy, sitting out and in, leaving, busted players watching, the button, and when a hand may start."""

from __future__ import annotations

import random

import pytest
from pokerrules.cards import parse_cards
from pokerrules.multiplayer import Action, IllegalAction, Limit, Variant
from pokerrules.multiplayer.decks import deck_dealing
from pokerrules.multiplayer.events import HandStarted, PlayerActed
from pokerrules.multiplayer.ranking import ranker_for
from pokerrules.table import (
    Mode,
    PrivateAccess,
    TableConfig,
    TableError,
    TableState,
    Transition,
    act,
    invite,
    leave,
    sit,
    sit_in,
    sit_out,
    start_next_hand,
    table_view,
    top_up,
    void_hand,
)
from pokerrules.table.events import BuyInRequested, ChipsReturned, LeaveScheduled, PlayerLeft, PlayerSatOut

RANK = ranker_for(Variant.HOLDEM)


def cash(seats: int = 6, **kw: object) -> TableConfig:
    return TableConfig(Mode.HOLDEM, 50, 100, 2_000, 10_000, seats=seats, **kw)  # type: ignore[arg-type]


def seated(players: dict[int, int], config: TableConfig | None = None) -> TableState:
    state = TableState.create(config or cash())
    for number, stack in players.items():
        state = sit(state, f"p{number}", number, stack).state
    return state


def deck(seed: int = 1) -> list[int]:
    cards = list(range(52))
    random.Random(seed).shuffle(cards)
    return cards


def check_down(t: Transition, now: int = 0) -> Transition:
    """Everyone calls or checks to the end of the hand."""
    while t.state.hand is not None:
        legal = t.state.hand.legal_actions()
        assert legal is not None
        player = t.state.seats[legal.seat].player
        t = act(t.state, player, Action.check() if legal.can_check else Action.call(), now)
    return t


def conserved(state: TableState) -> bool:
    return state.chips_bought_in == state.chips_on_table() + state.chips_returned


def refused(reason: str, command: object, *args: object, **kw: object) -> None:
    with pytest.raises(TableError) as info:
        command(*args, **kw)  # type: ignore[operator]
    assert info.value.reason == reason


# ---------------------------------------------------------------------------- configuration


@pytest.mark.parametrize("seats", [1, 11])
def test_a_table_has_two_to_ten_seats(seats: int) -> None:
    refused("INVALID_CONFIG", cash, seats)
    assert cash(2).seats == 2 and cash(10).seats == 10


def test_buy_in_range_and_blinds_are_checked() -> None:
    refused("INVALID_CONFIG", TableConfig, Mode.HOLDEM, 50, 100, 5_000, 4_000)
    refused("INVALID_CONFIG", TableConfig, Mode.HOLDEM, 50, 100, 50, 4_000)  # below one big blind
    refused("INVALID_CONFIG", TableConfig, Mode.HOLDEM, 100, 50, 5_000, 10_000)


@pytest.mark.parametrize(("small", "big"), [(100, 100), (70, 100), (50, 150)])
def test_mp_2_3_the_big_blind_is_twice_the_small_blind(small: int, big: int) -> None:
    """MP-2.3: SB pays half the big blind; 100/100 or 70/100 tables are refused."""
    refused("INVALID_CONFIG", TableConfig, Mode.HOLDEM, small, big, 5_000, 10_000)
    assert TableConfig(Mode.HOLDEM, 50, 100, 5_000, 10_000).game.big_blind == 100


@pytest.mark.parametrize(
    ("mode", "variant", "limit"),
    [
        (Mode.HOLDEM, Variant.HOLDEM, Limit.NO_LIMIT),
        (Mode.OMAHA, Variant.OMAHA, Limit.POT_LIMIT),
        (Mode.NAIKO, Variant.HOLDEM, Limit.NO_LIMIT),
    ],
)
def test_nk_6_2_mode_sets_the_game(mode: Mode, variant: Variant, limit: Limit) -> None:
    """NK-6.2 mode; NK-A1: Hold'em and Naiko mode are No-Limit; Omaha is Pot-Limit."""
    game = TableConfig(mode, 5, 10, 200, 1_000).game
    assert (game.variant, game.limit, game.small_blind, game.big_blind) == (variant, limit, 5, 10)


# ---------------------------------------------------------------------------- buy-in and seats


def test_nk_6_1_buy_in_between_min_and_max_requests_the_chips() -> None:
    """NK-6.1: you sit down with a buy-in; the core asks the service to move it (no money moves here)."""
    state = TableState.create(cash())
    t = sit(state, "ana", 3, 2_000)
    assert t.events[1] == BuyInRequested(3, "ana", 2_000, "buy_in")
    assert t.state.seats[3].stack == 2_000 and t.state.chips_bought_in == 2_000
    refused("BUY_IN_BELOW_MIN", sit, state, "ana", 3, 1_999)
    refused("BUY_IN_ABOVE_MAX", sit, state, "ana", 3, 10_001)
    assert sit(state, "ana", 3, 10_000).state.seats[3].stack == 10_000
    assert state.seats == {}  # refusals and successes leave the old state as it was


def test_seat_refusals() -> None:
    state = seated({1: 5_000})
    refused("SEAT_TAKEN", sit, state, "bob", 1, 5_000)
    refused("ALREADY_SEATED", sit, state, "p1", 2, 5_000)
    refused("NO_SUCH_SEAT", sit, state, "bob", 7, 5_000)
    refused("NO_SUCH_SEAT", sit, state, "bob", 0, 5_000)
    refused("NOT_SEATED", top_up, state, "bob", 100)


def test_nk_6_1_top_up_up_to_the_maximum_between_hands() -> None:
    state = seated({1: 5_000, 2: 5_000})
    t = top_up(state, "p1", 5_000)
    assert t.events == [BuyInRequested(1, "p1", 5_000, "top_up")] and t.state.seats[1].stack == 10_000
    refused("BUY_IN_ABOVE_MAX", top_up, state, "p1", 5_001)
    refused("INVALID_AMOUNT", top_up, state, "p1", 0)
    playing = start_next_hand(state, deck(), RANK, 0).state
    refused("IN_HAND", top_up, playing, "p1", 100)  # chips in play wait for the hand's end
    assert conserved(t.state)


def _bust_seat_2() -> Transition:
    """Heads-up, seat 2 all-in with 72o against seat 1's aces on a board of nothing for seat 2."""
    state = seated({1: 5_000, 2: 2_000}, cash(2))
    holes = {1: parse_cards("As Ad"), 2: parse_cards("7c 2d")}
    cards = deck_dealing([1, 2], 1, holes, parse_cards("Kh Qs 9c 4h 3s"))
    t = start_next_hand(state, cards, RANK, 0)  # button 1 posts the small blind and acts first (NK-2.2)
    t = act(t.state, "p1", Action.call(), 0)
    t = act(t.state, "p2", Action.all_in(), 0)
    return act(t.state, "p1", Action.call(), 0)


def test_nk_6_1_busted_player_keeps_the_seat_to_watch_and_may_reload() -> None:
    """NK-6.1: if your chips run out you can watch and reload voluntarily; the table keeps running."""
    t = _bust_seat_2()
    state = t.state
    assert state.hand is None and PlayerSatOut(2, "BUSTED") in t.events
    assert state.seats[2].stack == 0 and state.seats[2].sitting_out and state.seats[1].stack == 7_000
    view = table_view(state, "p2")  # still seated and watching: sees the finished hand and the seats
    assert view.hand is not None and [s.seat for s in view.seats] == [1, 2]
    refused("NOT_ENOUGH_PLAYERS", start_next_hand, state, deck(), RANK, 0)
    refused("NO_CHIPS", sit_in, state, "p2")
    refused("BUY_IN_BELOW_MIN", top_up, state, "p2", 1_000)  # a re-buy is a buy-in: min..max
    again = top_up(state, "p2", 3_000)
    assert again.events[0] == BuyInRequested(2, "p2", 3_000, "rebuy")
    assert not again.state.seats[2].sitting_out  # reloading sits the player back in
    assert start_next_hand(again.state, deck(), RANK, 0).state.hand is not None
    assert conserved(again.state) and again.state.chips_bought_in == 10_000


def test_sit_out_and_sit_in_take_effect_from_the_next_hand() -> None:
    state = seated({1: 5_000, 2: 5_000, 3: 5_000})
    t = start_next_hand(state, deck(), RANK, 0)
    t = sit_out(t.state, "p3")  # mid-hand: still plays this hand
    assert t.state.hand is not None and 3 in t.state.hand.seats
    refused("ALREADY_SITTING_OUT", sit_out, t.state, "p3")
    t = check_down(t)
    nxt = start_next_hand(t.state, deck(2), RANK, 0)
    assert nxt.state.hand is not None and nxt.state.hand.seats == (1, 2)
    back = sit_in(check_down(nxt).state, "p3")
    refused("NOT_SITTING_OUT", sit_in, back.state, "p3")
    third = start_next_hand(back.state, deck(3), RANK, 0)
    assert third.state.hand is not None and third.state.hand.seats == (1, 2, 3)


def test_leaving_between_hands_returns_the_stack() -> None:
    state = seated({1: 5_000, 2: 4_000})
    t = leave(state, "p2", 0)
    assert t.events == [ChipsReturned(2, "p2", 4_000), PlayerLeft(2, "p2", "LEFT")]
    assert 2 not in t.state.seats and t.state.chips_returned == 4_000 and conserved(t.state)


def test_leaving_mid_hand_folds_and_leaves_at_the_hands_end() -> None:
    """Mid-hand a leaver folds when facing a bet (checks when free: the engine refuses a free fold,
    MP-A5) and is paid out when the hand ends."""
    state = seated({1: 5_000, 2: 5_000, 3: 5_000})
    t = start_next_hand(state, deck(), RANK, 0)  # button 1, SB 2, BB 3, seat 1 to act
    assert t.state.hand is not None and t.state.hand.seat_to_act == 1
    t = leave(t.state, "p1", 0)
    assert isinstance(t.events[0], LeaveScheduled)
    folded = [ev for ev in t.events if isinstance(ev, PlayerActed)]
    assert folded and folded[0].seat == 1 and folded[0].kind.value == "fold"
    refused("LEAVING", leave, t.state, "p1", 0)
    assert 1 in t.state.seats and conserved(t.state)
    end = check_down(t)
    assert 1 not in end.state.seats and ChipsReturned(1, "p1", 5_000) in end.events
    assert conserved(end.state) and end.state.chips_returned == 5_000


def test_mp_2_1_button_moves_one_seat_each_hand_among_players_dealt_in() -> None:
    """MP-2.1 / MP-6.8: the button moves clockwise one seat each hand; empty and sitting-out seats are
    skipped (seats are numbered clockwise)."""
    state = seated({2: 5_000, 4: 5_000, 5: 5_000, 7: 5_000}, cash(9))
    state = sit_out(state, "p5").state
    buttons = []
    for k in range(5):
        t = start_next_hand(state, deck(k), RANK, 0)
        started = [ev for ev in t.events if isinstance(ev, HandStarted)]
        buttons.append(started[0].button)
        state = check_down(t).state
        assert state.button == started[0].button
    assert buttons == [2, 4, 7, 2, 4]


def test_a_hand_needs_two_active_players_and_one_at_a_time() -> None:
    state = seated({1: 5_000})
    refused("NOT_ENOUGH_PLAYERS", start_next_hand, state, deck(), RANK, 0)
    state = sit(state, "p2", 2, 5_000).state
    assert state.can_start_hand()
    playing = start_next_hand(state, deck(), RANK, 0).state
    assert not playing.can_start_hand()
    refused("HAND_IN_PROGRESS", start_next_hand, playing, deck(), RANK, 0)
    refused("NO_HAND_IN_PROGRESS", act, state, "p1", Action.check(), 0)


def test_players_join_while_a_hand_is_played_and_are_dealt_next_hand() -> None:
    """NK-6.1: the table keeps running as players come and go."""
    state = seated({1: 5_000, 2: 5_000})
    t = start_next_hand(state, deck(), RANK, 0)
    t = sit(t.state, "late", 5, 3_000)
    assert t.state.hand is not None and 5 not in t.state.hand.seats and conserved(t.state)
    t = start_next_hand(check_down(t).state, deck(1), RANK, 0)
    assert t.state.hand is not None and 5 in t.state.hand.seats


def test_only_the_seated_player_acts_for_a_seat() -> None:
    state = seated({1: 5_000, 2: 5_000, 3: 5_000})
    t = start_next_hand(state, deck(), RANK, 0)
    with pytest.raises(IllegalAction) as info:
        act(t.state, "p2", Action.call(), 0)
    assert info.value.reason == "NOT_YOUR_TURN"
    refused("NOT_SEATED", act, t.state, "stranger", Action.call(), 0)


# ---------------------------------------------------------------------------- private tables and bots


def private(bots: bool = False) -> TableConfig:
    access = PrivateAccess("host", frozenset({"friend"}), code="FELT42")
    return TableConfig(Mode.OMAHA, 5, 10, 200, 1_000, seats=4, bots_allowed=bots, private=access)


def test_nk_6_2_only_invited_players_sit_at_a_private_table() -> None:
    state = TableState.create(private())
    assert sit(state, "host", 1, 500).state.seats[1].player == "host"
    assert sit(state, "friend", 1, 500).state.seats[1].player == "friend"
    refused("NOT_INVITED", sit, state, "stranger", 1, 500)
    refused("NOT_INVITED", sit, state, "stranger", 1, 500, code="WRONG")
    assert sit(state, "stranger", 1, 500, code="FELT42").state.seats[1].player == "stranger"
    refused("NOT_HOST", invite, state, "friend", "stranger")
    invited = invite(state, "host", "stranger").state
    assert sit(invited, "stranger", 2, 500).state.seats[2].player == "stranger"
    refused("NOT_HOST", invite, TableState.create(cash()), "host", "x")  # public tables have no invites


def test_nk_7_6_bots_sit_only_where_allowed_and_are_marked_in_every_view() -> None:
    refused("BOTS_NOT_ALLOWED", sit, TableState.create(private(bots=False)), "bot-1", 1, 500, is_bot=True)
    state = sit(TableState.create(private(bots=True)), "bot-1", 1, 500, is_bot=True).state
    state = sit(state, "host", 2, 500).state
    for viewer in (None, "host", "bot-1"):
        marks = {s.player: s.is_bot for s in table_view(state, viewer).seats}
        assert marks == {"bot-1": True, "host": False}


def test_a_hand_that_cannot_resume_is_voided_with_every_committed_chip_returned() -> None:
    """The issue's persistence rule: a voided hand returns all chips committed to it; stacks are those the
    hand started with, and a player who asked to leave is paid out."""
    state = seated({1: 5_000, 2: 4_000, 3: 3_000})
    t = start_next_hand(state, deck(), RANK, 0)
    t = act(t.state, "p1", Action.raise_to(400), 0)
    t = leave(t.state, "p2", 0)  # the small blind, leaving: folds at once
    assert t.state.hand is not None and t.state.hand.pot == 400 + 50 + 100
    v = void_hand(t.state)
    assert v.state.hand is None and {n: s.stack for n, s in v.state.seats.items()} == {1: 5_000, 3: 3_000}
    assert ChipsReturned(2, "p2", 4_000) in v.events and conserved(v.state)
    refused("NO_HAND_IN_PROGRESS", void_hand, v.state)


def test_free_seats() -> None:
    assert seated({2: 5_000, 5: 5_000}, cash(6)).free_seats() == [1, 3, 4, 6]
