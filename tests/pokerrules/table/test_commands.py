"""Typed table commands through `handle`, logged as they are and replayed to the same table (issue 11,
"the table core, made ready for it"), and the tournament policy (issue 12, NK-6.3 to NK-6.6, NK-7)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from pokerrules.multiplayer import Action, ActionKind, IllegalAction
from pokerrules.multiplayer.events import AntePosted, HandStarted, PlayerActed
from pokerrules.naiko import Power
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
)
from pokerrules.table import commands as c
from pokerrules.table.events import (
    HandsReleased,
    LevelSet,
    PlayerBusted,
    PlayerRemoved,
    PlayerSatOut,
    TableClosed,
)

TIMERS = TimerConfig(decision_ms=1_000, time_bank_ms=0, reconnect_window_ms=5_000)


def tournament(seats: int = 6, mode: Mode = Mode.HOLDEM) -> TableConfig:
    return TableConfig(mode, 50, 100, 0, 0, seats=seats, timers=TIMERS, policy=TOURNAMENT)


def deck(seed: int) -> list[int]:
    cards = list(range(52))
    random.Random(seed).shuffle(cards)
    return cards


def start(state: TableState, now: int = 0, seed: int = 1) -> Transition:
    cards = deck(seed)
    return handle(state, c.StartHand("shoe", len(cards)), now, deck=cards)


def play_out(t: Transition, now: int = 0) -> Transition:
    """Everyone checks or calls to the end of the hand."""
    while t.state.hand_in_progress:
        hand = t.state.hand
        assert hand is not None
        legal = hand.legal_actions()
        assert legal is not None
        action = Action.check() if legal.can_check else Action.call()
        t = handle(t.state, c.Act(t.state.seats[legal.seat].player, action), now)
    return t


# -- the log format ----------------------------------------------------------------------------------------

actions = st.builds(Action, st.sampled_from(list(ActionKind)), st.integers(min_value=0, max_value=10**12))
names = st.text(min_size=0, max_size=12)
commands = st.one_of(
    st.builds(c.Sit, names, st.integers(1, 10), st.integers(0, 10**9), st.booleans(), st.none() | names),
    st.builds(c.TopUp, names, st.integers(0, 10**9)),
    st.builds(c.SitOut, names),
    st.builds(c.SitIn, names),
    st.builds(c.Leave, names, names),
    st.builds(c.Invite, names, st.lists(names, max_size=4).map(tuple)),
    st.builds(c.Act, names, actions),
    st.builds(
        c.UsePower,
        names,
        st.sampled_from(list(Power)),
        st.none() | st.integers(1, 10),
        st.none() | st.integers(0, 51),
    ),
    st.builds(c.RespondToAnchor, names, st.booleans()),
    st.builds(c.Disconnect, names),
    st.builds(c.Reconnect, names),
    st.builds(c.StartHand, names, st.integers(0, 60), st.none() | st.integers(0, 2)),
    st.just(c.ApplyDue()),
    st.just(c.VoidHand()),
    st.builds(c.SeatPlayer, names, st.integers(1, 10), st.integers(0, 10**9), st.booleans()),
    st.builds(c.RemovePlayer, names),
    st.builds(c.SetLevel, st.integers(1, 10**6), st.integers(1, 10**6), st.integers(0, 10**5)),
    st.builds(c.ReleaseHands, st.integers(0, 10**6)),
    st.just(c.CloseTable()),
)


@given(commands)
def test_every_command_is_logged_as_it_is(command: c.Command) -> None:
    """decode(encode(command)) is the command: the log holds the typed command, nothing translated."""
    import json

    op, body = encode(command)
    assert decode(op, json.loads(json.dumps(body))) == command


def test_entries_of_the_old_log_format_are_still_read() -> None:
    """A hand logged before the upgrade resumes after it."""
    assert decode("act", {"player": "ana", "kind": "raise", "amount": 300, "now": 5}) == c.Act(
        "ana", Action.raise_to(300)
    )
    assert decode("start", {"count": 17, "shoe_id": "s1", "now": 0}) == c.StartHand("s1", 17)
    assert decode("invite", {"by": "h", "player": "ben"}) == c.Invite("h", ("ben",))
    assert decode("due", {"now": 3}) == c.ApplyDue()
    with pytest.raises(ValueError):
        decode("teleport", {})


def test_a_replayed_log_rebuilds_the_same_table() -> None:
    """Commands replayed from their log entries give the same state and the same events."""
    state = TableState.create(TableConfig(Mode.HOLDEM, 5, 10, 200, 1_000, seats=4, timers=TIMERS))
    log: list[tuple[str, dict[str, Any], int, list[int] | None]] = []
    rng = random.Random(7)
    events: list[object] = []

    def run(command: c.Command, now: int, cards: list[int] | None = None) -> None:
        nonlocal state
        try:
            t = handle(state, command, now, deck=cards)
        except (TableError, IllegalAction):
            return
        state = t.state
        events.extend(t.events)
        log.append((*encode(command), now, cards))

    for k, player in enumerate(("a", "b", "c")):
        run(c.Sit(player, k + 1, 500), 0)
    for now in range(0, 120_000, 300):
        if state.can_start_hand():
            cards = deck(now)
            run(c.StartHand("s", len(cards)), now, cards)
        elif state.hand is not None and (legal := state.hand.legal_actions()) is not None:
            player = state.seats[legal.seat].player
            kind = rng.choice([ActionKind.CALL, ActionKind.CHECK, ActionKind.FOLD, ActionKind.RAISE])
            amount = legal.min_to if kind is ActionKind.RAISE else 0
            run(c.Act(player, Action(kind, amount)), now)  # sometimes refused: then the clock acts
        for number, seat in state.seats.items():
            if seat.sitting_out:
                run(c.SitIn(seat.player), now)
            if seat.stack == 0 and not state.in_hand(number):
                run(c.TopUp(seat.player, 500), now)
        run(c.ApplyDue(), now)
    assert log and state.hand_number >= 3
    replayed = TableState.create(state.config)
    replayed_events: list[object] = []
    for op, body, now, cards in log:
        t = handle(replayed, decode(op, body), now, deck=cards)
        replayed, replayed_events = t.state, replayed_events + list(t.events)
    assert replayed_events == events
    assert (replayed.seats, replayed.hand_number, replayed.chips_bought_in) == (
        state.seats,
        state.hand_number,
        state.chips_bought_in,
    )


def test_a_closed_table_takes_no_command() -> None:
    state = handle(TableState.create(tournament()), c.SeatPlayer("a", 1, 1_000), 0).state
    closed = handle(state, c.CloseTable(), 0)
    assert [type(e) for e in closed.events] == [PlayerRemoved, TableClosed]
    assert closed.state.chips_returned == 1_000 and not closed.state.seats
    with pytest.raises(TableError) as refused:
        handle(closed.state, c.SeatPlayer("b", 2, 1_000), 0)
    assert refused.value.reason == "TABLE_CLOSED"
    assert handle(closed.state, c.ApplyDue(), 10**9).events == []


# -- the tournament policy -------------------------------------------------------------------------------------


def seated(stacks: dict[int, int], config: TableConfig | None = None) -> TableState:
    state = TableState.create(config or tournament())
    for number, stack in stacks.items():
        state = handle(state, c.SeatPlayer(f"p{number}", number, stack), 0).state
    return state


def test_nk_6_6_tournament_chips_come_from_the_director_not_the_wallet() -> None:
    """NK-6.6: a tournament seat is given its stack; no buy-in is asked of a wallet and nobody leaves
    with chips (only the director removes a player)."""
    state = seated({1: 1_500, 2: 1_500})
    assert state.chips_bought_in == 3_000 and state.chips_on_table() == 3_000
    for command in (c.Sit("x", 3, 1_000), c.TopUp("p1", 100), c.Leave("p1")):
        with pytest.raises(TableError) as refused:
            handle(state, command, 0)
        assert refused.value.reason == "TOURNAMENT_TABLE"
    cash_table = TableState.create(TableConfig(Mode.HOLDEM, 50, 100, 2_000, 10_000, policy=CASH))
    for command in (c.SeatPlayer("x", 1, 10), c.SetLevel(100, 200), c.ReleaseHands(1), c.RemovePlayer("x")):
        with pytest.raises(TableError) as refused:
            handle(cash_table, command, 0)
        assert refused.value.reason == "NOT_TOURNAMENT_TABLE"


def test_the_next_hand_waits_for_the_directors_release() -> None:
    state = seated({1: 1_500, 2: 1_500, 3: 1_500})
    assert not state.can_start_hand()
    with pytest.raises(TableError) as refused:
        start(state)
    assert refused.value.reason == "HANDS_HELD"
    released = handle(state, c.ReleaseHands(1), 0)
    assert released.events == [HandsReleased(1)]
    assert handle(released.state, c.ReleaseHands(1), 0).events == []  # a retry changes nothing
    t = play_out(start(released.state))
    assert t.state.hand_number == 1 and not t.state.can_start_hand()  # one hand released, one played


def test_a_level_applies_from_the_next_hand() -> None:
    state = handle(seated({1: 5_000, 2: 5_000}), c.ReleaseHands(2), 0).state
    t = start(state)
    mid = handle(t.state, c.SetLevel(100, 200), 0)
    assert mid.events == [LevelSet(100, 200, 0)]
    assert mid.state.hand is not None and mid.state.hand.config.big_blind == 100  # this hand keeps its own
    t = start(play_out(mid).state)
    assert t.state.hand is not None and t.state.hand.config.big_blind == 200
    assert handle(t.state, c.SetLevel(100, 200), 0).events == []


def test_a_level_with_an_ante_posts_it_from_the_next_hand() -> None:
    """NK-6.5: blind levels with antes; the big blind posts the table's ante (a big blind ante)."""
    state = handle(seated({1: 5_000, 2: 5_000, 3: 5_000}), c.ReleaseHands(1), 0).state
    state = handle(state, c.SetLevel(100, 200, 200), 0).state
    t = start(state)
    antes = [e for e in t.events if isinstance(e, AntePosted)]
    assert t.state.hand is not None and t.state.hand.config.ante == 200
    assert (
        len(antes) == 1
        and antes[0].seat == t.state.hand.seats[t.state.hand.bb_index]
        and antes[0].amount == 200
    )
    assert t.state.chips_on_table() == 15_000  # dead money is still on the table


def test_nk_6_3_busting_eliminates_and_frees_the_seat() -> None:
    """NK-6.3: a player with no tournament chips left is eliminated (not sat out, as at a cash table)."""
    state = handle(seated({1: 100, 2: 5_000, 3: 5_000}), c.ReleaseHands(5), 0).state
    for seed in range(1, 40):
        t = start(state, seed=seed)
        t = handle(t.state, c.Act(t.state.seats[t.state.hand.seat_to_act].player, Action.all_in()), 0)  # type: ignore[union-attr]
        t = play_out(t)
        busted = [e for e in t.events if isinstance(e, PlayerBusted)]
        if busted:
            assert all(e.seat not in t.state.seats for e in busted)
            assert t.state.chips_on_table() + t.state.chips_returned == t.state.chips_bought_in
            return
        state = handle(seated({1: 100, 2: 5_000, 3: 5_000}), c.ReleaseHands(5), 0).state
    raise AssertionError("no seed busted the short stack")


def test_nk_7_2_a_tournament_player_who_times_out_is_folded_and_stays_in() -> None:
    """Issue 12: a player who times out is folded and stays in, blinded off while absent: dealt into
    every hand, their decisions taken at once once they are sat out (nobody waits out their clock again)."""
    state = handle(seated({1: 5_000, 2: 5_000, 3: 5_000}), c.ReleaseHands(10), 0).state
    now, waits, events = 0, [], []
    for _ in range(5):
        t = start(state, now)
        events += t.events
        waited = 0
        while t.state.hand_in_progress:
            hand = t.state.hand
            assert hand is not None and hand.seat_to_act is not None
            player = t.state.seats[hand.seat_to_act].player
            if player == "p1":  # absent: only the clock acts for them
                now += TIMERS.decision_ms
                waited += 1
                t = handle(t.state, c.ApplyDue(), now)
            else:
                legal = hand.legal_actions()
                assert legal is not None
                t = handle(t.state, c.Act(player, Action.check() if legal.can_check else Action.call()), now)
            events += t.events
        state = t.state
        waits.append(waited)
        assert state.active_seats() == [1, 2, 3]  # dealt into every hand
    assert PlayerSatOut(1, "TIMEOUTS") in events
    assert waits[-1] == 0 and waits[-2] == 0  # sat out: folded at once, the others wait for nobody
    assert sum(isinstance(e, PlayerActed) and e.seat == 1 for e in events) >= 5  # folded or checked each hand


def test_nk_7_4_a_disconnected_tournament_player_keeps_playing_their_stack_down() -> None:
    """NK-7.3, NK-7.4: the window ends and the player is blinded off, not removed (issue 12)."""
    state = handle(seated({1: 5_000, 2: 5_000}), c.Disconnect("p1"), 0).state
    later = handle(state, c.ApplyDue(), TIMERS.reconnect_window_ms)
    assert later.events == [PlayerSatOut(1, "DISCONNECTED")]
    assert 1 in later.state.seats and later.state.active_seats() == [1, 2]
    assert handle(later.state, c.ApplyDue(), 10 * TIMERS.reconnect_window_ms).events == []


def test_the_director_removes_a_player_between_hands_only() -> None:
    state = handle(seated({1: 5_000, 2: 5_000, 3: 5_000}), c.ReleaseHands(1), 0).state
    t = start(state)
    with pytest.raises(TableError) as refused:
        handle(t.state, c.RemovePlayer("p3"), 0)
    assert refused.value.reason == "HAND_IN_PROGRESS"
    after = play_out(t).state
    stack = after.seats[3].stack
    moved = handle(after, c.RemovePlayer("p3"), 0)
    assert moved.events == [PlayerRemoved(3, "p3", stack)]
    assert moved.state.chips_on_table() + moved.state.chips_returned == moved.state.chips_bought_in


# -- a state machine over tournament tables -------------------------------------------------------------------


class TournamentTable(RuleBasedStateMachine):
    """Random director and player commands, and time, at a tournament table. Invariants: chips conserved,
    none negative, a refused command changes nothing, every accepted command survives its log entry."""

    def __init__(self) -> None:
        super().__init__()
        self.state = TableState.create(tournament())
        self.now = 0
        self.rng = random.Random(0)

    @initialize(seats=st.integers(2, 10), seed=st.integers(0, 99), naiko=st.booleans())
    def table(self, seats: int, seed: int, naiko: bool) -> None:
        self.state = TableState.create(tournament(seats, Mode.NAIKO if naiko else Mode.HOLDEM))
        self.rng = random.Random(seed)

    def run(self, command: c.Command, cards: list[int] | None = None) -> None:
        before = self.state
        op, body = encode(command)
        assert decode(op, body) == command
        try:
            t = handle(self.state, command, self.now, deck=cards)
        except (TableError, IllegalAction):
            assert self.state is before
            return
        self.state = t.state
        if any(isinstance(e, HandStarted) for e in t.events):
            event("a hand was dealt")
        if any(isinstance(e, PlayerBusted) for e in t.events):
            event("a player was eliminated")

    @rule(seat=st.integers(1, 10), stack=st.integers(-5, 3_000), who=st.integers(0, 12))
    def seat_player(self, seat: int, stack: int, who: int) -> None:
        self.run(c.SeatPlayer(f"p{who}", seat, stack))

    @rule(who=st.integers(0, 12))
    def remove(self, who: int) -> None:
        self.run(c.RemovePlayer(f"p{who}"))

    @rule(small=st.integers(1, 200))
    def level(self, small: int) -> None:
        self.run(c.SetLevel(small, 2 * small))

    @rule(extra=st.integers(0, 3))
    def release(self, extra: int) -> None:
        self.run(c.ReleaseHands(self.state.hand_number + extra))

    @rule()
    def deal(self) -> None:
        cards = deck(self.rng.randrange(10**6))
        carrusel = self.rng.randrange(3) if self.state.naiko is not None else None
        self.run(c.StartHand("s", len(cards), carrusel), cards)

    @rule(power=st.sampled_from(list(Power)), aim=st.integers(1, 10))
    def use_power(self, power: Power, aim: int) -> None:
        """Naiko tournament tables: the player to act tries a power (refused ones change nothing)."""
        hand = self.state.hand
        if hand is None or hand.seat_to_act is None:
            return
        card = hand.hole_cards(hand.seat_to_act)[0] if power is Power.TUKAR_LENGAN_BAJU else None
        target = aim if power is Power.JANGKAR_PENDEK else None
        self.run(c.UsePower(self.state.seats[hand.seat_to_act].player, power, target, card))

    @rule(kind=st.sampled_from(list(ActionKind)), fraction=st.floats(0, 1))
    def act(self, kind: ActionKind, fraction: float) -> None:
        if (legal := legal_actions(self.state)) is None:
            return
        amount = legal.min_to + int((legal.max_to - legal.min_to) * fraction) if legal.max_to else 0
        self.run(c.Act(self.state.seats[legal.seat].player, Action(kind, amount)))

    @rule(ms=st.integers(0, 3_000))
    def time_passes(self, ms: int) -> None:
        self.now += ms
        self.run(c.ApplyDue())

    @rule(who=st.integers(0, 12), on=st.booleans())
    def connection(self, who: int, on: bool) -> None:
        self.run(c.Reconnect(f"p{who}") if on else c.Disconnect(f"p{who}"))

    @rule(who=st.integers(0, 12), out=st.booleans())
    def sitting(self, who: int, out: bool) -> None:
        self.run(c.SitOut(f"p{who}") if out else c.SitIn(f"p{who}"))

    @invariant()
    def chips_conserved(self) -> None:
        s = self.state
        assert s.chips_bought_in == s.chips_on_table() + s.chips_returned
        assert all(seat.stack >= 0 for seat in s.seats.values())
        if s.hand is not None:
            assert min(s.hand.stacks) >= 0
        if s.naiko is not None:  # NK-5.1, NK-5.3: 0..3, held by the seated players only
            assert set(s.naiko.destellos) == set(s.seats)
            assert all(0 <= n <= 3 for n in s.naiko.destellos.values())


TestTournamentTable = TournamentTable.TestCase
TestTournamentTable.settings = settings(
    max_examples=100, stateful_step_count=80, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
