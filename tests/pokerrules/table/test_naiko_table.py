"""Naiko mode at a table (issue 11, at the tables): the table core holds the powers' state, grants
Destellos and fixes the Carrusel at the deal, takes `UsePower` / `RespondToAnchor`, runs every betting
action through the powers' `act`, times the shield window on the table clock and voids a hand with its
Destellos returned. Rules NK-5.1 to NK-5.4, NK-A2, NK-EX-8, NK-9.2, NK-12.8, NK-13.3, NK-13.5, NK-13.6."""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from pokerrules.bots import BotProfile, bot_move, bot_power_move
from pokerrules.multiplayer import Action, ActionKind, IllegalAction
from pokerrules.multiplayer.events import HandStarted, HandVoided, PlayerActed
from pokerrules.naiko import ACTIVATIONS_PER_ROUND, CARRUSELS, MAX_DESTELLOS, Power, anchor_targets
from pokerrules.naiko.events import (
    ACTED,
    PASSED,
    SHIELDED,
    TIMED_OUT,
    AnchorDeclared,
    AnchorResolved,
    BoardCardPeeked,
    CarruselDrawn,
    DestellosGranted,
    DestellosReturned,
    PowerUsed,
)
from pokerrules.table import (
    CASH,
    TOURNAMENT,
    Mode,
    TableConfig,
    TableError,
    TableState,
    TimerConfig,
    Transition,
    decode,
    encode,
    handle,
    legal_actions,
    next_wakeup,
)
from pokerrules.table import commands as c
from pokerrules.table.events import LeaveScheduled, PlayerBusted

PEEK, SWAP, ANCHOR, SHIELD = (
    Power.LIRIKAN_DIAM_DIAM,
    Power.TUKAR_LENGAN_BAJU,
    Power.JANGKAR_PENDEK,
    Power.PERISAI_SEGEL,
)
WITH_SHIELD, NO_SHIELD = (
    1,
    0,
)  # the draws of CARRUSELS[1] (peek, anchor, shield), CARRUSELS[0] (peek, swap, anchor)
TIMERS = TimerConfig(decision_ms=15_000, time_bank_ms=0, reconnect_window_ms=60_000)
BOT = BotProfile(pacing=False, samples=4, iterations=4)


def table(
    players: int = 3, destellos: int | None = None, window_ms: int = 8_000, mode: Mode = Mode.NAIKO
) -> TableState:
    """Players p1..pN in seats 1..N with 1,000 chips each; `destellos`: their balances before the deal."""
    config = TableConfig(mode, 5, 10, 200, 1_000, seats=6, timers=TIMERS, shield_window_ms=window_ms)
    state = TableState.create(config)
    for k in range(1, players + 1):
        state = handle(state, c.Sit(f"p{k}", k, 1_000), 0).state
    if destellos is not None and state.naiko is not None:
        state = replace(state, naiko=state.naiko.replace(destellos=dict.fromkeys(state.seats, destellos)))
    return state


def deck(seed: int = 1) -> list[int]:
    cards = list(range(52))
    random.Random(seed).shuffle(cards)
    return cards


def deal(state: TableState, carrusel: int | None = WITH_SHIELD, now: int = 0, seed: int = 1) -> Transition:
    cards = deck(seed)
    return handle(state, c.StartHand("shoe", len(cards), carrusel), now, deck=cards)


def refused(state: TableState, command: c.Command, now: int = 0) -> str:
    """The reason `command` is refused; the state given is unchanged (it is a value)."""
    before = (state.seats, state.naiko, state.hand.version if state.hand else None)
    with pytest.raises((TableError, IllegalAction)) as error:
        handle(state, command, now)
    assert (state.seats, state.naiko, state.hand.version if state.hand else None) == before
    return str(error.value.reason)


def balances(state: TableState) -> dict[int, int]:
    assert state.naiko is not None
    return dict(state.naiko.destellos)


def anchored_preflop(window_ms: int = 8_000) -> Transition:
    """Three-handed, button seat 1 (first to act pre-flop), every balance 3 after the deal: seat 1
    declares Jangkar Pendek on the big blind (seat 3) at 1,000 ms; the window is open."""
    t = deal(table(destellos=2, window_ms=window_ms))
    assert t.state.hand is not None and t.state.hand.seat_to_act == 1
    return handle(t.state, c.UsePower("p1", ANCHOR, 3), 1_000)


# -- Destellos and the Carrusel at the table -------------------------------------------------------------------


def test_nk_a2_nk_ex_8_destellos_from_sitting_down_to_leaving() -> None:
    """0 on sitting down, +1 at each deal the seat is dealt into, spent on a power, left behind on
    leaving; the same player sitting down again starts at 0 (NK-5.1, NK-5.3, NK-A2, NK-EX-8)."""
    state = table(players=2)
    assert balances(state) == {1: 0, 2: 0}
    t = deal(state, NO_SHIELD)
    assert balances(t.state) == {1: 1, 2: 1}
    assert [e for e in t.events if isinstance(e, CarruselDrawn)] == [CarruselDrawn(CARRUSELS[0], 0)]
    assert [e.granted for e in t.events if isinstance(e, DestellosGranted)] == [(1, 2)]
    t = handle(t.state, c.UsePower("p1", PEEK), 10)  # heads-up: the button (seat 1) acts first
    assert balances(t.state) == {1: 0, 2: 1}
    t = handle(t.state, c.Act("p1", Action.fold()), 20)
    assert t.state.hand is None and balances(t.state) == {1: 0, 2: 1}
    t = handle(t.state, c.Leave("p1"), 30)
    assert balances(t.state) == {2: 1}
    t = handle(t.state, c.Sit("p1", 1, 1_000), 40)
    assert balances(t.state) == {1: 0, 2: 1}


def test_nk_5_1_the_grant_never_goes_above_3_and_skips_seats_not_dealt_in() -> None:
    state = handle(table(players=3, destellos=3), c.SitOut("p3"), 0).state
    t = deal(state)
    assert balances(t.state) == {1: 3, 2: 3, 3: 3}  # at 3 the grant is lost; p3 sat out: none
    granted = next(e for e in t.events if isinstance(e, DestellosGranted))
    assert granted.granted == () and dict(granted.balances) == {1: 3, 2: 3}


def test_a_player_leaving_mid_hand_keeps_the_balance_until_the_hands_end() -> None:
    t = deal(table(players=3, destellos=1))
    t = handle(t.state, c.Leave("p2"), 10)  # not to act: leaves after the hand
    assert 2 in balances(t.state)
    while t.state.hand_in_progress:
        legal = legal_actions(t.state)
        assert legal is not None
        t = handle(t.state, c.Act(t.state.seats[legal.seat].player, Action.fold()), 20)
    assert 2 not in balances(t.state) and 2 not in t.state.seats


def test_nk_5_4_a_naiko_hand_is_dealt_with_its_carrusel_draw() -> None:
    state = table()
    for draw in (None, 3, -1):
        with pytest.raises(TableError) as error:
            deal(state, draw)
        assert error.value.reason == "INVALID_CONFIG"
    for draw, carrusel in enumerate(CARRUSELS):
        t = deal(state, draw)
        assert t.state.naiko is not None and t.state.naiko.hand is not None
        assert t.state.naiko.hand.carrusel == carrusel
    holdem = deal(table(mode=Mode.HOLDEM), None)
    assert holdem.state.naiko is None and not any(isinstance(e, CarruselDrawn) for e in holdem.events)


def test_tournament_naiko_tables_seat_and_eliminate_with_destellos() -> None:
    """The director's SeatPlayer starts a balance at 0; a removed or eliminated player's stays behind."""
    config = TableConfig(Mode.NAIKO, 5, 10, 0, 0, seats=6, timers=TIMERS, policy=TOURNAMENT)
    state = TableState.create(config)
    for k, stack in ((1, 1_000), (2, 1_000), (3, 10)):
        state = handle(state, c.SeatPlayer(f"p{k}", k, stack), 0).state
    state = handle(state, c.ReleaseHands(5), 0).state
    assert balances(state) == {1: 0, 2: 0, 3: 0}
    t = deal(state)  # p3 posts the big blind all-in for 10
    assert balances(t.state) == {1: 1, 2: 1, 3: 1}
    while t.state.hand_in_progress:
        legal = legal_actions(t.state)
        assert legal is not None
        action = Action.call() if legal.call_amount else Action.check()
        t = handle(t.state, c.Act(t.state.seats[legal.seat].player, action), 10)
    busted = {e.seat for e in t.events if isinstance(e, PlayerBusted)}
    assert set(balances(t.state)) == set(t.state.seats) == {1, 2, 3} - busted
    t = handle(t.state, c.RemovePlayer("p2"), 20)
    assert 2 not in balances(t.state)
    t = handle(t.state, c.CloseTable(), 30)
    assert balances(t.state) == {}


# -- the power commands -----------------------------------------------------------------------------------------


def test_nk_1_5_powers_are_refused_outside_naiko_mode() -> None:
    t = deal(table(mode=Mode.HOLDEM), None)
    assert refused(t.state, c.UsePower("p1", PEEK)) == "NOT_NAIKO_MODE"
    assert refused(t.state, c.RespondToAnchor("p1", True)) == "NOT_NAIKO_MODE"


def test_refused_power_commands_change_nothing_and_name_the_reason() -> None:
    """NK-5.10: a refused attempt costs nothing; each refusal names its reason."""
    state = table(destellos=2)
    assert refused(state, c.UsePower("p1", PEEK)) == "HAND_OVER"  # between hands
    t = deal(state, NO_SHIELD)
    assert refused(t.state, c.UsePower("nobody", PEEK)) == "NOT_SEATED"
    assert refused(t.state, c.UsePower("p2", PEEK)) == "NOT_YOUR_TURN"
    assert refused(t.state, c.UsePower("p1", SHIELD)) == "NOT_IN_CARRUSEL"
    assert refused(t.state, c.RespondToAnchor("p3", False)) == "NO_ANCHOR_WINDOW"
    assert refused(t.state, c.UsePower("p1", ANCHOR, 1)) == "INVALID_TARGET"
    assert refused(t.state, c.UsePower("p1", SWAP, None, 99)) == "INVALID_CARD"
    assert balances(t.state) == {1: 3, 2: 3, 3: 3}


def test_nk_9_2_a_power_does_not_end_the_turn_nor_restart_its_clock() -> None:
    t = deal(table(destellos=0), NO_SHIELD, now=0)
    wake = next_wakeup(t.state)
    peeked = handle(t.state, c.UsePower("p1", PEEK), 5_000)
    assert peeked.state.hand is not None and peeked.state.hand.seat_to_act == 1
    assert next_wakeup(peeked.state) == wake == 15_000  # the decision clock runs on
    assert [type(e) for e in peeked.events] == [PowerUsed, BoardCardPeeked]
    assert refused(peeked.state, c.UsePower("p1", ANCHOR, 3), 6_000) == "NOT_ENOUGH_DESTELLOS"


def test_nk_5_7_a_power_after_the_decision_time_is_refused() -> None:
    t = deal(table(destellos=2), NO_SHIELD, now=0)
    assert refused(t.state, c.UsePower("p1", PEEK), 15_000) == "TIME_EXPIRED"


def test_nk_11_2_a_swap_at_the_table_changes_the_hole_card_privately() -> None:
    t = deal(table(destellos=2), NO_SHIELD)
    assert t.state.hand is not None
    held = t.state.hand.hole_cards(1)
    swapped = handle(t.state, c.UsePower("p1", SWAP, None, held[1]), 10)
    assert swapped.state.hand is not None
    assert swapped.state.hand.hole_cards(1)[0] == held[0]
    assert swapped.state.hand.hole_cards(1)[1] != held[1]
    private = [e for e in swapped.events if e.private_to is not None]
    assert [e.private_to for e in private] == [1]  # the swapper alone learns the card received
    assert balances(swapped.state)[1] == 1


# -- the shield window on the table clock --------------------------------------------------------------------------


def test_nk_13_5_the_window_is_a_table_setting_on_the_table_clock() -> None:
    t = anchored_preflop(window_ms=3_000)
    declared = next(e for e in t.events if isinstance(e, AnchorDeclared))
    assert declared.deadline == 4_000
    assert next_wakeup(t.state) == 4_000  # before the decision's deadline (15,000)
    assert handle(t.state, c.ApplyDue(), 3_999).events == []
    due = handle(t.state, c.ApplyDue(), 4_000)
    assert [e for e in due.events if isinstance(e, AnchorResolved)] == [AnchorResolved(1, 3, TIMED_OUT)]
    assert due.state.hand is not None and due.state.hand.pot_capped[2]
    assert balances(due.state)[3] == 3  # silence costs the target nothing (NK-13.6)
    assert next_wakeup(due.state) == 15_000


def test_nk_13_3_shield_off_turn_or_pass() -> None:
    t = anchored_preflop()
    shielded = handle(t.state, c.RespondToAnchor("p3", True), 2_000)  # p1 is still to act
    assert [e for e in shielded.events if isinstance(e, AnchorResolved)][-1].outcome == SHIELDED
    assert balances(shielded.state) == {1: 1, 2: 3, 3: 2}  # both costs paid (NK-13.7)
    assert refused(shielded.state, c.RespondToAnchor("p3", True), 2_500) == "POWER_ALREADY_USED"
    assert refused(shielded.state, c.RespondToAnchor("p3", False), 2_500) == "NO_ANCHOR_WINDOW"
    passed = handle(t.state, c.RespondToAnchor("p3", False), 2_000)
    assert [e for e in passed.events if isinstance(e, AnchorResolved)][-1].outcome == PASSED
    assert balances(passed.state) == {1: 1, 2: 3, 3: 3}
    late = refused(t.state, c.RespondToAnchor("p3", True), 9_000)
    assert late == "ANCHOR_WINDOW_EXPIRED"


def test_a_targets_time_out_inside_its_window_is_its_betting_action() -> None:
    """The window outlasts the decision: the server's check for the target declines the shield (ACTED)."""
    t = anchored_preflop(window_ms=60_000)
    t = handle(t.state, c.Act("p1", Action.call()), 1_500)
    t = handle(t.state, c.Act("p2", Action.call()), 2_000)
    assert t.state.hand is not None and t.state.hand.seat_to_act == 3
    wake = next_wakeup(t.state)
    assert wake == 17_000
    due = handle(t.state, c.ApplyDue(), wake)
    resolved = [e for e in due.events if isinstance(e, AnchorResolved)]
    assert resolved == [AnchorResolved(1, 3, ACTED)]
    acted = [e for e in due.events if isinstance(e, PlayerActed)]
    assert acted[0].seat == 3 and acted[0].kind.value == "check"


def test_a_leavers_automatic_action_goes_through_the_powers() -> None:
    t = anchored_preflop()
    t = handle(t.state, c.Act("p1", Action.call()), 1_500)
    t = handle(t.state, c.Act("p2", Action.call()), 2_000)
    left = handle(t.state, c.Leave("p3"), 2_500)  # the target leaves on its turn: it checks at once
    kinds = [type(e) for e in left.events]
    assert kinds[:3] == [LeaveScheduled, AnchorResolved, PlayerActed]


def test_a_voided_hand_returns_every_destello_spent_in_it() -> None:
    """Destellos spent in a voided hand come back; the deal's grant stands (NK-A2; CH malfunction)."""
    t = anchored_preflop()
    t = handle(t.state, c.RespondToAnchor("p3", True), 2_000)
    assert balances(t.state) == {1: 1, 2: 3, 3: 2}
    voided = handle(t.state, c.VoidHand(), 3_000)
    assert [type(e) for e in voided.events][:2] == [HandVoided, DestellosReturned]
    returned = next(e for e in voided.events if isinstance(e, DestellosReturned))
    assert sorted(returned.refunds) == [(1, 2), (3, 1)]
    assert balances(voided.state) == {1: 3, 2: 3, 3: 3}
    assert {n: s.stack for n, s in voided.state.seats.items()} == {1: 1_000, 2: 1_000, 3: 1_000}


# -- the log ------------------------------------------------------------------------------------------------------


def test_naiko_commands_are_logged_as_they_are() -> None:
    for command in (
        c.UsePower("ana", ANCHOR, 4),
        c.UsePower("ana", SWAP, None, 51),
        c.UsePower("ana", PEEK),
        c.RespondToAnchor("ana", True),
        c.StartHand("s", 20, 2),
    ):
        op, body = encode(command)
        assert decode(op, json.loads(json.dumps(body))) == command
    assert decode("StartHand", {"shoe_id": "s", "cards": 20}) == c.StartHand("s", 20)  # before Naiko


def test_a_replayed_log_resumes_a_window_where_it_was() -> None:
    """Every command replayed from its log entry (with the hand's cards) rebuilds the same Destellos,
    Carrusel and open window, deadline included: a restart resumes the window (NK-13.5)."""
    log: list[tuple[str, dict[str, Any], int]] = []
    state = table(destellos=2)
    base = state
    cards = deck(1)

    def run(command: c.Command, now: int) -> None:
        nonlocal state
        state = handle(state, command, now, deck=cards).state
        log.append((*encode(command), now))

    run(c.StartHand("shoe", len(cards), WITH_SHIELD), 0)
    run(c.UsePower("p1", ANCHOR, 3), 1_000)
    run(c.Act("p1", Action.call()), 1_500)
    replayed = base
    for op, body, now in log:
        replayed = handle(replayed, decode(op, json.loads(json.dumps(body))), now, deck=cards).state
    assert replayed.naiko == state.naiko
    assert replayed.naiko is not None and replayed.naiko.next_deadline() == 9_000
    assert replayed.hand is not None and state.hand is not None
    assert (replayed.hand.version, replayed.hand.stacks) == (state.hand.version, state.hand.stacks)
    assert next_wakeup(replayed) == 9_000


# -- a state machine over Naiko tables ----------------------------------------------------------------------------


def hand_key(state: TableState) -> object:
    hand = state.hand
    if hand is None:
        return None
    return (hand.version, tuple(hand.stacks), tuple(hand.contrib), tuple(hand.holes), tuple(hand.board))


class NaikoTableMachine(RuleBasedStateMachine):
    """Cash and tournament Naiko tables: players and bots bet, use every power (legal or not, on turn or
    off), answer windows, leave, sit out, time out and have hands voided, on a virtual clock.

    Invariants: chips conserved and none negative; every balance of Destellos in 0..3 and held by a
    seated player (NK-5.1, NK-5.3); at most 3 normal activations a round (NK-5.8); each power once per
    player per hand (NK-5.6); no card in two places (NK-1.2); a refused command changes nothing (NK-5.10);
    every accepted command survives its log entry, and the commands since the last hand's start, replayed
    on the table as it was then, rebuild the same hand, Destellos, Carrusel and windows (a restart)."""

    def __init__(self) -> None:
        super().__init__()
        self.state = table()
        self.now = 0
        self.rng = random.Random(0)
        self.used: Counter[tuple[int, Power]] = Counter()
        self.base = self.state
        self.log: list[tuple[str, dict[str, Any], int, list[int] | None]] = []
        self.voided_at: dict[int, int] | None = None

    @initialize(
        players=st.integers(2, 6),
        destellos=st.sampled_from([0, 2, 3, 3]),
        window_ms=st.sampled_from([1_000, 8_000, 30_000]),
        tournament=st.booleans(),
        seed=st.integers(0, 99),
    )
    def setup(self, players: int, destellos: int, window_ms: int, tournament: bool, seed: int) -> None:
        policy = TOURNAMENT if tournament else CASH
        low = 0 if tournament else 200
        config = TableConfig(
            Mode.NAIKO, 5, 10, low, low * 5, 6, not tournament, None, TIMERS, policy, window_ms
        )
        state = TableState.create(config)
        for k in range(1, players + 1):
            seat = c.SeatPlayer(f"p{k}", k, 600, k > 2) if tournament else c.Sit(f"p{k}", k, 600, k > 2)
            state = handle(state, seat, 0).state
        if tournament:
            state = handle(state, c.ReleaseHands(10**6), 0).state
        assert state.naiko is not None
        self.state = replace(
            state, naiko=state.naiko.replace(destellos=dict.fromkeys(state.seats, destellos))
        )
        self.base = self.state
        self.rng = random.Random(seed)

    def run(
        self, command: c.Command, now: int | None = None, cards: list[int] | None = None
    ) -> Transition | None:
        at = self.now if now is None else now
        op, body = encode(command)
        assert decode(op, json.loads(json.dumps(body))) == command
        before = (self.state.seats, self.state.naiko, hand_key(self.state))
        try:
            t = handle(self.state, command, at, deck=cards)
        except (TableError, IllegalAction):
            assert (self.state.seats, self.state.naiko, hand_key(self.state)) == before
            return None
        for ev in t.events:
            if isinstance(ev, HandStarted):
                self.used.clear()
                event("a hand was dealt")
            elif isinstance(ev, PowerUsed):  # NK-5.6
                self.used[(ev.seat, ev.power)] += 1
                assert self.used[(ev.seat, ev.power)] == 1
                event(f"power: {ev.power.value}")
            elif isinstance(ev, AnchorResolved):
                event(f"window: {ev.outcome}")
        if not self.state.hand_in_progress:
            self.base, self.log = self.state, []
        self.log.append((op, body, at, cards))
        self.state = t.state
        if not self.state.hand_in_progress:
            self.base, self.log = self.state, []
        return t

    def player(self, who: int) -> str:
        hand = self.state.hand
        if hand is not None and hand.seat_to_act is not None and self.rng.random() < 0.75:
            return self.state.seats[hand.seat_to_act].player
        return f"p{who}"

    @precondition(lambda self: not self.state.hand_in_progress)
    @rule(seed=st.integers(0, 10**6), draw=st.integers(0, 2))
    def deal(self, seed: int, draw: int) -> None:
        cards = deck(seed)
        self.run(c.StartHand("shoe", len(cards), draw), cards=cards)

    @precondition(lambda self: self.state.hand_in_progress)
    @rule(kind=st.sampled_from(list(ActionKind)), fraction=st.floats(0, 1), who=st.integers(1, 6))
    def bet(self, kind: ActionKind, fraction: float, who: int) -> None:
        legal = legal_actions(self.state)
        amount = legal.min_to + int((legal.max_to - legal.min_to) * fraction) if legal and legal.max_to else 0
        self.run(c.Act(self.player(who), Action(kind, amount)), self.now + self.rng.randrange(1_000))

    @precondition(lambda self: self.state.hand_in_progress)
    @rule(
        power=st.sampled_from(list(Power)),
        aim=st.none() | st.integers(1, 6),
        card=st.none() | st.integers(0, 51),
        who=st.integers(1, 6),
    )
    def power(self, power: Power, aim: int | None, card: int | None, who: int) -> None:
        player = self.player(who)
        number = self.state.find_seat(player)
        hand = self.state.hand
        naiko = self.state.naiko
        if hand is not None and number in hand.seats and self.rng.random() < 0.8:
            if power is SWAP:
                card = self.rng.choice(hand.hole_cards(number))
            elif power is ANCHOR and naiko is not None and (targets := anchor_targets(naiko, hand, number)):
                aim = self.rng.choice(targets)
        self.run(c.UsePower(player, power, aim, card), self.now + self.rng.randrange(1_000))

    @rule(shield=st.booleans(), who=st.integers(1, 6), late=st.integers(0, 40_000))
    def respond(self, shield: bool, who: int, late: int) -> None:
        naiko = self.state.naiko
        player = f"p{who}"
        if naiko is not None and naiko.hand is not None and naiko.hand.windows:
            player = self.state.seats[naiko.hand.windows[0].target].player
        self.run(c.RespondToAnchor(player, shield), self.now + late)

    @precondition(lambda self: self.state.hand_in_progress)
    @rule(steps=st.integers(1, 10), seed=st.integers(0, 2**32))
    def bots(self, steps: int, seed: int) -> None:
        """Bots (seats 3 and up) by their policy, on their own views (NK-7.6); people check or call."""
        for step in range(steps):
            power = bot_power_move(self.state, self.now)
            if power is not None:
                assert self.run(power) is not None  # the bots' powers are legal
                continue
            move = bot_move(self.state, seed + step, BOT)
            legal = legal_actions(self.state)
            if legal is None:
                return
            if move is not None:
                assert self.run(c.Act(move.player, move.decision.action)) is not None
            else:
                action = Action.check() if legal.can_check else Action.call()
                self.run(c.Act(self.state.seats[legal.seat].player, action))

    @rule(ms=st.sampled_from([0, 500, 2_000, 7_000, 16_000, 40_000]))
    def time_passes(self, ms: int) -> None:
        self.now += ms
        self.run(c.ApplyDue())

    @rule(who=st.integers(1, 6), what=st.sampled_from(["leave", "sit", "out", "in", "away", "back"]))
    def seat(self, who: int, what: str) -> None:
        player = f"p{who}"
        tournament = not self.state.config.policy.is_cash
        commands: dict[str, c.Command] = {
            "leave": c.RemovePlayer(player) if tournament else c.Leave(player),
            "sit": c.SeatPlayer(player, who, 600) if tournament else c.Sit(player, who, 600),
            "out": c.SitOut(player),
            "in": c.SitIn(player),
            "away": c.Disconnect(player),
            "back": c.Reconnect(player),
        }
        self.run(commands[what])

    @rule(often=st.integers(0, 9))
    def void(self, often: int) -> None:
        if often:
            return  # a hand is voided now and then only: most are played to their end
        naiko = self.state.naiko
        assert naiko is not None
        granted = dict(naiko.hand.granted) if naiko.hand is not None else {}
        t = self.run(c.VoidHand())
        if t is not None:
            assert t.state.naiko is not None
            for seat, balance in t.state.naiko.destellos.items():
                assert balance == granted.get(seat, balance)  # every spent Destello came back
            event("a hand was voided")

    @invariant()
    def chips_and_destellos(self) -> None:
        s = self.state
        assert s.chips_bought_in == s.chips_on_table() + s.chips_returned
        assert all(seat.stack >= 0 for seat in s.seats.values())
        naiko = s.naiko
        assert naiko is not None
        assert set(naiko.destellos) == set(s.seats)
        assert all(0 <= n <= MAX_DESTELLOS for n in naiko.destellos.values())
        hand, nh = s.hand, naiko.hand
        if hand is not None and nh is not None:
            assert nh.activations_in(hand.street) <= ACTIVATIONS_PER_ROUND
            cards = [card for seat in hand.seats for card in hand.hole_cards(seat)] + list(hand.board)
            assert len(cards) == len(set(cards))

    @invariant()
    def the_log_rebuilds_the_table(self) -> None:
        replayed = self.base
        for op, body, now, cards in self.log:
            replayed = handle(replayed, decode(op, body), now, deck=cards).state
        assert replayed.naiko == self.state.naiko
        assert hand_key(replayed) == hand_key(self.state)
        assert next_wakeup(replayed) == next_wakeup(self.state)


TestNaikoTableMachine = NaikoTableMachine.TestCase
TestNaikoTableMachine.settings = settings(
    max_examples=150, stateful_step_count=80, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
