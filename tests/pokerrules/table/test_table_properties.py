"""Hypothesis state machine over a cash table: random legal and illegal commands from random players,
with time passing. Invariants: chips are conserved (stacks + chips in the hand + chips returned == chips
bought in), no stack is negative, a refused command changes nothing, the engine's legal-action view is
consistent (min <= max, a call never exceeds the stack). At Naiko tables players and bots also use
powers and answer windows (every power, legal or not, from anyone): every balance of Destellos stays in
0..3 and belongs to a seated player (NK-5.1, NK-5.3), the round's normal activations never exceed 3
(NK-5.8), each power is used at most once per player per hand (NK-5.6), no card is in two places, and a
refused power changes nothing (NK-5.10)."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from pokerrules.bots import BotProfile, bot_power_move, decide
from pokerrules.multiplayer import Action, ActionKind, IllegalAction, Variant
from pokerrules.multiplayer.events import HandStarted
from pokerrules.multiplayer.ranking import ranker_for
from pokerrules.multiplayer.views import view_for
from pokerrules.naiko import ACTIVATIONS_PER_ROUND, MAX_DESTELLOS, Power
from pokerrules.naiko.events import PowerUsed
from pokerrules.table import (
    Mode,
    TableConfig,
    TableError,
    TableState,
    TimerConfig,
    Transition,
    act,
    apply_due,
    disconnect,
    handle,
    leave,
    legal_actions,
    reconnect,
    respond_to_anchor,
    sit,
    sit_in,
    sit_out,
    start_next_hand,
    top_up,
    use_power,
)

RANK = {
    Mode.HOLDEM: ranker_for(Variant.HOLDEM),
    Mode.OMAHA: ranker_for(Variant.OMAHA),
    Mode.NAIKO: ranker_for(Variant.HOLDEM),
}
BOT = BotProfile(pacing=False, samples=4, iterations=4)
PLAYERS = [f"p{k}" for k in range(8)]
players = st.sampled_from(PLAYERS)
amounts = st.sampled_from([0, 100, 199, 200, 500, 700, 1_000, 1_000, 1_001])


def snapshot(state: TableState) -> tuple[object, ...]:
    hand = state.hand
    return (
        dict(state.seats),
        state.chips_bought_in,
        state.chips_returned,
        None if hand is None else (hand.version, tuple(hand.stacks), tuple(hand.contrib)),
        state.naiko,
    )


class TableMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.mode = Mode.HOLDEM
        self.state = TableState.create(TableConfig(self.mode, 5, 10, 200, 1_000))
        self.now = 0
        self.rng = random.Random(0)
        self.used: Counter[tuple[int, Power]] = Counter()

    @initialize(mode=st.sampled_from(list(Mode)), seats=st.integers(2, 10), seed=st.integers(0, 99))
    def table(self, mode: Mode, seats: int, seed: int) -> None:
        self.mode = mode
        timers = TimerConfig(decision_ms=1_000, time_bank_ms=2_000, reconnect_window_ms=5_000)
        self.state = TableState.create(TableConfig(mode, 5, 10, 200, 1_000, seats=seats, timers=timers))
        self.rng = random.Random(seed)

    def run(self, command: object, *args: object, **kw: object) -> None:
        before = snapshot(self.state)
        try:
            t: Transition = command(*args, **kw)  # type: ignore[operator]
        except (TableError, IllegalAction):
            assert snapshot(self.state) == before  # refused: nothing changed
            return
        if self.state.hand is not None and t.state.hand is None:
            event("a hand was played to its end")
        for ev in t.events:
            if isinstance(ev, HandStarted):
                self.used.clear()
            elif isinstance(ev, PowerUsed):  # NK-5.6: each power once per player per hand
                self.used[(ev.seat, ev.power)] += 1
                assert self.used[(ev.seat, ev.power)] == 1
        self.state = t.state

    @rule(player=players, seat=st.integers(0, 7), amount=amounts)
    def sit(self, player: str, seat: int, amount: int) -> None:
        self.run(sit, self.state, player, seat, amount)

    @rule(player=players, amount=amounts)
    def top_up(self, player: str, amount: int) -> None:
        self.run(top_up, self.state, player, amount)

    @rule(player=players)
    def sit_out(self, player: str) -> None:
        self.run(sit_out, self.state, player)

    @rule(player=players)
    def sit_in(self, player: str) -> None:
        self.run(sit_in, self.state, player)

    @rule(player=players)
    def leave(self, player: str) -> None:
        self.run(leave, self.state, player, self.now)

    @rule(player=players, back=st.booleans())
    def connection(self, player: str, back: bool) -> None:
        self.run(reconnect if back else disconnect, self.state, player, self.now)

    @rule(seed=st.integers(0, 10_000), draw=st.integers(0, 2))
    def start(self, seed: int, draw: int) -> None:
        deck = list(range(52))
        random.Random(seed).shuffle(deck)
        carrusel = draw if self.mode is Mode.NAIKO else None
        self.run(start_next_hand, self.state, deck, RANK[self.mode], self.now, carrusel)

    @rule(
        player=players,
        power=st.sampled_from(list(Power)),
        aim=st.none() | st.integers(0, 10),
        own_card=st.booleans(),
        card=st.integers(0, 52),
        late=st.integers(0, 2_000),
    )
    def power(self, player: str, power: Power, aim: int | None, own_card: bool, card: int, late: int) -> None:
        """Any power from anyone: the player to act most of the time, with a card of their own for a
        swap; refused ones change nothing (NK-5.10)."""
        hand = self.state.hand
        if hand is not None and hand.seat_to_act is not None and self.rng.random() < 0.7:
            player = self.state.seats[hand.seat_to_act].player
        chosen: int | None = card if card < 52 else None
        number = self.state.find_seat(player)
        if hand is not None and number in hand.seats and own_card and power is Power.TUKAR_LENGAN_BAJU:
            chosen = self.rng.choice(hand.hole_cards(number))
        before = sum(self.used.values())
        self.run(use_power, self.state, player, power, aim, chosen, self.now + late)
        if sum(self.used.values()) > before:
            event(f"power used: {power.value}")

    @rule(player=players, shield=st.booleans(), late=st.integers(0, 10_000))
    def respond(self, player: str, shield: bool, late: int) -> None:
        naiko = self.state.naiko
        if naiko is not None and naiko.hand is not None and naiko.hand.windows and self.rng.random() < 0.8:
            target = naiko.hand.windows[0].target
            player = self.state.seats[target].player if target in self.state.seats else player
        self.run(respond_to_anchor, self.state, player, shield, self.now + late)

    @rule(steps=st.integers(1, 8), legal_only=st.booleans())
    def play(self, steps: int, legal_only: bool) -> None:
        for _ in range(steps):
            hand = self.state.hand
            if hand is None:
                return
            legal = legal_actions(self.state)  # at a Naiko table: capped inside an anchor's window
            assert legal is not None
            seat = legal.seat
            if legal_only:
                kind = self.rng.choice([k for k in ActionKind])
                if legal.can_check and kind is ActionKind.FOLD:
                    kind = ActionKind.CHECK
                if not legal.can_check and kind is ActionKind.CHECK:
                    kind = ActionKind.CALL
                amount = self.rng.randint(legal.min_to, legal.max_to) if legal.can_bet_or_raise else 0
                if kind in (ActionKind.BET, ActionKind.RAISE):
                    kind = legal.bet_kind if legal.can_bet_or_raise else ActionKind.ALL_IN
            else:  # anything, from anyone
                kind = self.rng.choice(list(ActionKind))
                amount = self.rng.randint(-10, 3_000)
                seat = self.rng.choice(list(self.state.seats) or [seat])
            player = self.state.seats[seat].player
            self.run(act, self.state, player, Action(kind, amount), self.now + self.rng.randint(0, 500))

    @rule(steps=st.integers(1, 8), seed=st.integers(0, 2**32))
    def bots_play(self, steps: int, seed: int) -> None:
        """The bot strategy on the actor's own view: always legal (NK-7.6), through the table's `act`."""
        for step in range(steps):
            while (power := bot_power_move(self.state, self.now)) is not None:  # Naiko: powers first
                self.state = handle(self.state, power, self.now).state
            hand = self.state.hand
            if hand is None:
                return
            seat = hand.seat_to_act
            assert seat is not None
            view = replace(view_for(hand, seat), legal=legal_actions(self.state))
            action = decide(view, seed + step, BOT).action
            self.state = act(self.state, self.state.seats[seat].player, action, self.now).state

    @rule(ms=st.integers(0, 8_000))
    def time_passes(self, ms: int) -> None:
        self.now += ms
        self.run(apply_due, self.state, self.now)

    @invariant()
    def chips_conserved(self) -> None:
        state = self.state
        assert state.chips_bought_in == state.chips_on_table() + state.chips_returned
        assert all(s.stack >= 0 for s in state.seats.values())
        hand = state.hand
        if hand is not None:
            assert min(hand.stacks) >= 0
            legal = hand.legal_actions()
            if legal is not None:
                assert legal.call_amount <= legal.stack
                assert legal.min_to <= legal.max_to
                assert legal.can_check == (legal.call_amount == 0)

    @invariant()
    def destellos_and_powers(self) -> None:
        naiko = self.state.naiko
        if naiko is None:
            assert self.mode is not Mode.NAIKO
            return
        assert set(naiko.destellos) == set(self.state.seats)
        assert all(0 <= n <= MAX_DESTELLOS for n in naiko.destellos.values())
        hand, nh = self.state.hand, naiko.hand
        if hand is not None and nh is not None:
            assert nh.activations_in(hand.street) <= ACTIVATIONS_PER_ROUND
            assert all(w.target in hand.seats and w.declarer in hand.seats for w in nh.windows)
            cards = [c for seat in hand.seats for c in hand.hole_cards(seat)] + list(hand.board)
            assert len(cards) == len(set(cards))  # no card in two places (NK-1.2)

    @invariant()
    def seats_and_hand_agree(self) -> None:
        state = self.state
        assert all(1 <= n <= state.config.seats for n in state.seats)
        assert len({s.player for s in state.seats.values()}) == len(state.seats)
        if state.hand is not None:
            assert not state.hand.finished and set(state.hand.seats) <= set(state.seats)


TableMachine.TestCase.settings = settings(
    max_examples=200, stateful_step_count=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
test_table_state_machine = TableMachine.TestCase
