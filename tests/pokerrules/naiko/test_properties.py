"""Hypothesis state machine: powers mixed with betting over many hands at one Naiko table.

Invariants after every step: chips conserved; Destellos in 0..3 and equal to the deal's grant minus what
was paid this hand; no card dealt twice (a discarded card never comes back, NK-1.2); at most 3 normal
activations per round (NK-5.8) and each power at most once per player per hand (NK-5.6); every window's
target was anchored this round and has not acted; each viewer's events show only cards they may know.
Every refused command (power, answer or bet) leaves the very same state objects behind (NK-5.10).
"""

from __future__ import annotations

import random

import hypothesis
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from pokerrules.multiplayer import GameConfig, IllegalAction, start_hand
from pokerrules.multiplayer.bots import random_legal_action
from pokerrules.multiplayer.config import Variant
from pokerrules.multiplayer.events import (
    BoardDealt,
    CardsShown,
    Event,
    HoleCardsDealt,
    HoleCardSwapped,
    visible_to,
)
from pokerrules.multiplayer.ranking import ranker_for
from pokerrules.naiko import (
    ACTIVATIONS_PER_ROUND,
    CARRUSELS,
    MAX_DESTELLOS,
    NaikoTable,
    Power,
    act,
    deal,
    expire,
    legal_actions,
    respond_to_anchor,
    seated,
    usable_powers,
    use_power,
    void,
)
from pokerrules.naiko.events import AnchorResolved, BoardCardPeeked, DestellosReturned, PowerUsed

RANK = ranker_for(Variant.HOLDEM)
REASONS = {
    "HAND_OVER",
    "NOT_IN_HAND",
    "NOT_IN_CARRUSEL",
    "POWER_ALREADY_USED",
    "NOT_ENOUGH_DESTELLOS",
    "NOT_YOUR_TURN",
    "ONE_POWER_PER_TURN",
    "WRONG_STREET",
    "ALREADY_ACTED",
    "ACTIVATION_LIMIT_REACHED",
    "INVALID_TARGET",
    "TARGET_ALREADY_ACTED",
    "TARGET_ALREADY_ANCHORED",
    "INVALID_CARD",
    "NO_ANCHOR_WINDOW",
    "ANCHOR_WINDOW_EXPIRED",
    "DECK_EXHAUSTED",
}


def cards_in(event: Event) -> set[int]:
    out: set[int] = set()
    for name in ("cards", "card", "discarded", "received"):
        value = getattr(event, name, None)
        if isinstance(value, tuple):
            out.update(value)
        elif isinstance(value, int) and not isinstance(value, bool):
            out.add(value)
    return out


class NaikoTableMachine(RuleBasedStateMachine):
    @initialize(players=st.integers(2, 6), seed=st.integers(0, 2**32))
    def start(self, players: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seats = list(range(1, players + 1))
        self.stacks = {s: self.rng.randint(3, 60) * 50 for s in self.seats}
        self.total = sum(self.stacks.values())
        naiko = NaikoTable()
        for s in self.seats:
            naiko = seated(naiko, s)
        # players who have been here a while: any balance from 0 to 3 before the first deal
        self.naiko = naiko.replace(destellos={s: self.rng.randint(0, MAX_DESTELLOS) for s in self.seats})
        self.button: int = self.seats[-1]
        self.now = 0
        self.hands = 0
        self.deal_next()
        self.settle_if_over()

    # -- hands -------------------------------------------------------------------------------------

    def deal_next(self) -> None:
        in_play = {s: n for s, n in self.stacks.items() if n > 0}
        if len(in_play) < 2:  # re-buy everyone busted so the table keeps playing
            for s in self.seats:
                if self.stacks[s] == 0:
                    self.stacks[s] = 1000
                    self.total += 1000
            in_play = dict(self.stacks)
        order = sorted(in_play)
        self.button = next((s for s in order if s > self.button), order[0])
        deck = list(range(52))
        self.rng.shuffle(deck)
        started = start_hand(GameConfig.nlhe(25, 50), in_play, self.button, deck, RANK)
        out = deal(self.naiko, started.state, CARRUSELS[self.rng.randrange(3)])
        assert out.naiko is not None
        self.naiko, self.hand = out.naiko, out.hand
        self.events: list[Event] = list(started.events) + out.events
        self.round_powers = 0
        self.street = 0
        self.hands += 1

    def settle_if_over(self) -> None:
        while self.hand.finished:  # (a new hand can end at once: everyone all-in on the blinds)
            for s in self.hand.seats:
                self.stacks[s] = self.hand.stack_of(s)
            self.deal_next()

    def take(self, naiko: NaikoTable | None, hand: object, events: list[Event]) -> None:
        assert naiko is not None
        for ev in events:
            if isinstance(ev, PowerUsed):
                hypothesis.event(f"used {ev.power.value}")
            elif isinstance(ev, AnchorResolved):
                hypothesis.event(f"anchor {ev.outcome}")
        self.naiko, self.hand = naiko, hand  # type: ignore[assignment]
        self.events.extend(events)
        if self.hand.street != self.street:
            self.street, self.round_powers = self.hand.street, 0
        self.round_powers += sum(1 for ev in events if isinstance(ev, PowerUsed) and ev.power.normal)

    def expect_unchanged(self, call: object) -> None:
        naiko, hand, version = self.naiko, self.hand, self.hand.version
        try:
            out = call()  # type: ignore[operator]
        except IllegalAction as refusal:
            assert refusal.reason in REASONS or refusal.reason.isupper()
            assert self.naiko is naiko and self.hand is hand and hand.version == version
            return
        self.take(out.naiko, out.hand, out.events)

    # -- rules -------------------------------------------------------------------------------------

    @rule(pick=st.integers(0, 2**32))
    def bet(self, pick: int) -> None:
        legal = legal_actions(self.naiko, self.hand)
        assert legal is not None
        action = random_legal_action(legal, random.Random(pick))
        out = act(self.naiko, self.hand, legal.seat, action, self.now)
        self.take(out.naiko, out.hand, out.events)
        self.settle_if_over()

    @rule(
        who=st.integers(0, 9),
        power=st.sampled_from(list(Power)),
        aim=st.one_of(st.none(), st.integers(0, 9)),
        card=st.one_of(st.none(), st.integers(0, 3)),
        to_act=st.integers(0, 3),
    )
    def power(self, who: int, power: Power, aim: int | None, card: int | None, to_act: int) -> None:
        seats = self.hand.seats
        actor = self.hand.seat_to_act
        seat = actor if to_act and actor is not None else seats[who % len(seats)]
        target_seat = None if aim is None else seats[aim % len(seats)]
        hole = self.hand.hole_cards(seat)
        code = None if card is None else (hole[card % 2] if card < 2 else self.rng.randrange(52))
        if power is Power.JANGKAR_PENDEK and target_seat is None and self.rng.random() < 0.7:
            target_seat = seats[self.rng.randrange(len(seats))]
        self.expect_unchanged(
            lambda: use_power(self.naiko, self.hand, seat, power, self.now, target_seat, code)
        )

    @rule(pick=st.integers(0, 2**32))
    def usable_power(self, pick: int) -> None:
        """A power the query says is usable now (with a valid target or card) is accepted and paid."""
        seat = self.hand.seat_to_act
        if seat is None:
            return
        rng = random.Random(pick)
        options = [o for o in usable_powers(self.naiko, self.hand, seat, self.now) if o.usable]
        if not options:
            return
        option = rng.choice(options)
        target = rng.choice(option.targets) if option.targets else None
        card = rng.choice(self.hand.hole_cards(seat)) if option.power is Power.TUKAR_LENGAN_BAJU else None
        before = self.naiko.balance(seat)
        out = use_power(self.naiko, self.hand, seat, option.power, self.now, target, card)
        assert out.naiko is not None and out.naiko.balance(seat) == before - option.cost
        self.take(out.naiko, out.hand, out.events)

    @precondition(lambda self: bool(self.naiko.hand and self.naiko.hand.windows) or self.rng.random() < 0.05)
    @rule(who=st.integers(0, 9), shield=st.booleans())
    def respond(self, who: int, shield: bool) -> None:
        nh = self.naiko.hand
        seats = self.hand.seats
        seat = nh.windows[0].target if nh is not None and nh.windows and who < 7 else seats[who % len(seats)]
        self.expect_unchanged(lambda: respond_to_anchor(self.naiko, self.hand, seat, shield, self.now))

    @rule(ms=st.integers(0, 9_000))
    def tick(self, ms: int) -> None:
        self.now += ms
        out = expire(self.naiko, self.hand, self.now)
        self.take(out.naiko, out.hand, out.events)

    @precondition(lambda self: self.hands > 0)
    @rule()
    def void_hand(self) -> None:
        if self.rng.random() > 0.03:
            return
        voided = self.hand.copy()
        naiko, more = void(self.naiko, self.hand)
        events = voided.void()
        assert naiko is not None and naiko.hand is not None
        for seat, granted in naiko.hand.granted.items():
            assert naiko.balance(seat) == granted  # every Destello spent in the hand is back
        self.take(naiko, voided, events + more)
        self.settle_if_over()

    # -- invariants --------------------------------------------------------------------------------

    @invariant()
    def chips_are_conserved(self) -> None:
        outside = sum(n for s, n in self.stacks.items() if s not in self.hand.seats)
        inside = self.hand.total_chips()
        assert outside + inside == self.total
        assert min(self.hand.stacks) >= 0

    @invariant()
    def destellos_stay_in_range_and_match_what_was_paid(self) -> None:
        nh = self.naiko.hand
        assert nh is not None
        for seat in self.seats:
            assert 0 <= self.naiko.balance(seat) <= MAX_DESTELLOS
        paid: dict[int, int] = {}
        for ev in self.events:
            if isinstance(ev, PowerUsed):
                paid[ev.seat] = paid.get(ev.seat, 0) + ev.cost
        voided = any(isinstance(ev, DestellosReturned) for ev in self.events)
        for seat, granted in nh.granted.items():
            assert self.naiko.balance(seat) == granted - (0 if voided else paid.get(seat, 0))

    @invariant()
    def no_card_is_dealt_twice(self) -> None:
        holes = [c for s in self.hand.seats for c in self.hand.hole_cards(s)]
        dealt = holes + list(self.hand.board)
        assert len(set(dealt)) == len(dealt)
        discarded = {ev.discarded for ev in self.events if isinstance(ev, HoleCardSwapped)}
        assert discarded.isdisjoint(dealt)

    @invariant()
    def activation_limit_and_once_per_hand(self) -> None:
        nh = self.naiko.hand
        assert nh is not None
        activations = nh.activations_in(self.hand.street)
        assert activations <= ACTIVATIONS_PER_ROUND and self.round_powers <= ACTIVATIONS_PER_ROUND
        if not nh.finished and not self.hand.finished:
            assert activations == self.round_powers
        uses = [(ev.seat, ev.power) for ev in self.events if isinstance(ev, PowerUsed)]
        assert len(uses) == len(set(uses))
        assert set(uses) == set(nh.used)

    @invariant()
    def windows_belong_to_anchored_targets_who_have_not_acted(self) -> None:
        nh = self.naiko.hand
        assert nh is not None
        for window in nh.windows:
            assert window.target in nh.anchored_in(self.hand.street)
            assert not self.hand.has_acted_this_round(window.target)

    @invariant()
    def each_viewer_sees_only_cards_they_may_know(self) -> None:
        board = set(self.hand.board)
        shown = {c for ev in self.events if isinstance(ev, CardsShown) for c in ev.cards}
        for viewer in [None, *self.hand.seats]:
            own: set[int] = set()
            if viewer is not None:
                for ev in self.events:
                    if (
                        isinstance(ev, HoleCardsDealt | HoleCardSwapped | BoardCardPeeked)
                        and ev.private_to == viewer
                    ):
                        own |= cards_in(ev)
            seen = {c for ev in self.events if visible_to(ev, viewer) for c in cards_in(ev)}
            assert seen <= own | board | shown
        public = {c for ev in self.events if ev.private_to is None for c in cards_in(ev)}
        boards = {c for ev in self.events if isinstance(ev, BoardDealt) for c in ev.cards}
        assert public <= boards | shown


NaikoTableMachine.TestCase.settings = settings(max_examples=80, stateful_step_count=80, deadline=None)
TestNaikoTable = NaikoTableMachine.TestCase
