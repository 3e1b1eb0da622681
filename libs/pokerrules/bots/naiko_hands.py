"""Naiko hands played by bots through the pure cores (no network): `felt simulate --game naiko`, the
engine benchmark's Naiko row, and the tests of the bots' power policy.

Each hand: the engine deals, a Carrusel is drawn (here from the seeded generator; at a real table from
the dealer's `carrusel` draw), `naiko.deal` grants Destellos; then until the hand is over the bot to act
may use a power (`powers.bot_power`: its own cards and public information), answers any window aimed
at it (`powers.bot_shields`), and bets with `bet` on the legal actions `naiko.legal_actions` shows it.
Time is virtual (one second per decision), so windows can run out. Seeded: the same seed plays the same
hands.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from pokerrules.bots.powers import bot_power, bot_shields
from pokerrules.multiplayer.actions import Action, LegalActions
from pokerrules.multiplayer.bots import random_legal_action
from pokerrules.multiplayer.config import GameConfig
from pokerrules.multiplayer.engine import next_button, start_hand
from pokerrules.multiplayer.events import Event
from pokerrules.multiplayer.state import HandState, Ranker
from pokerrules.naiko import rules
from pokerrules.naiko.powers import CARRUSELS
from pokerrules.naiko.state import NaikoTable

Bet = Callable[[LegalActions, random.Random], Action]
DECISION_MS = 1_000  # virtual time a decision takes


@dataclass(frozen=True, slots=True)
class NaikoHand:
    number: int
    config: GameConfig
    events: list[Event]
    state: HandState
    naiko: NaikoTable


def play_naiko_hands(
    config: GameConfig,
    seats: int,
    hands: int,
    seed: int,
    rank: Ranker,
    bet: Bet = random_legal_action,
    starting_stack: int | None = None,
) -> Iterator[NaikoHand]:
    if not 2 <= seats <= 10:
        raise ValueError("seats must be 2..10")
    rng = random.Random(seed)
    buy_in = starting_stack if starting_stack is not None else 100 * config.big_blind
    stacks = dict.fromkeys(range(1, seats + 1), buy_in)
    naiko = NaikoTable()
    for seat in stacks:
        naiko = rules.seated(naiko, seat)
    button: int | None = None
    deck = list(range(52))
    now = 0
    for number in range(1, hands + 1):
        for seat, stack in stacks.items():
            if stack == 0:
                stacks[seat] = buy_in
        button = next_button(list(stacks), button)
        rng.shuffle(deck)
        started = start_hand(config, stacks, button, deck, rank)
        out = rules.deal(naiko, started.state, CARRUSELS[rng.randrange(3)])
        events = started.events + out.events
        hand = out.hand
        assert out.naiko is not None
        naiko = out.naiko
        while not hand.finished:
            now += DECISION_MS
            deadline = naiko.next_deadline()
            if deadline is not None and now >= deadline:  # a table's timer for the window
                out = rules.expire(naiko, hand, now)
                events.extend(out.events)
                assert out.naiko is not None
                naiko, hand = out.naiko, out.hand
            actor = hand.seat_to_act
            assert actor is not None
            nh = naiko.hand
            if nh is not None and nh.windows and nh.window_of(actor) is not None:
                out = rules.respond_to_anchor(naiko, hand, actor, bot_shields(naiko, hand, actor, now), now)
                events.extend(out.events)
                assert out.naiko is not None
                naiko, hand = out.naiko, out.hand
            choice = bot_power(naiko, hand, actor, now)
            if choice is not None:
                out = rules.use_power(naiko, hand, actor, choice.power, now, choice.target, choice.card)
                events.extend(out.events)
                assert out.naiko is not None
                naiko, hand = out.naiko, out.hand
            legal = rules.legal_actions(naiko, hand)
            assert legal is not None
            out = rules.act(naiko, hand, actor, bet(legal, rng), now)
            events.extend(out.events)
            assert out.naiko is not None
            naiko, hand = out.naiko, out.hand
        stacks = dict(zip(hand.seats, hand.stacks, strict=True))
        yield NaikoHand(number, config, events, hand, naiko)
