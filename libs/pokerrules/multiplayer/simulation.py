"""Bot hands played through the engine, hand after hand at one table (no network): `felt simulate`.

Each hand starts every seat that has chips; a busted seat re-buys the starting stack before the next hand
(like a voluntary re-buy at a cash table, NK-6.1) so the table stays full. Decks come from a seeded
`random.Random`: simulations must be reproducible; real deals come from the dealer service's CSPRNG.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from pokerrules.multiplayer.actions import Action, LegalActions
from pokerrules.multiplayer.bots import preset_bot_action
from pokerrules.multiplayer.config import GameConfig
from pokerrules.multiplayer.engine import next_button
from pokerrules.multiplayer.events import Event
from pokerrules.multiplayer.state import HandState, Ranker

Bot = Callable[[LegalActions, random.Random], Action]


@dataclass(frozen=True, slots=True)
class PlayedHand:
    number: int
    config: GameConfig
    events: list[Event]
    state: HandState


def play_hands(
    config: GameConfig,
    seats: int,
    hands: int,
    seed: int,
    rank: Ranker,
    bot: Bot = preset_bot_action,
    starting_stack: int | None = None,
) -> Iterator[PlayedHand]:
    if not 2 <= seats <= 10:
        raise ValueError("seats must be 2..10")
    rng = random.Random(seed)
    buy_in = starting_stack if starting_stack is not None else 100 * config.big_blind
    stacks = dict.fromkeys(range(1, seats + 1), buy_in)
    button: int | None = None
    deck = list(range(52))
    for number in range(1, hands + 1):
        for seat, stack in stacks.items():
            if stack == 0:
                stacks[seat] = buy_in
        button = next_button(list(stacks), button)
        rng.shuffle(deck)
        state, events = HandState.start(config, stacks, button, tuple(deck), rank)
        while not state.finished:
            legal = state.legal_actions()
            assert legal is not None
            events.extend(state.act(legal.seat, bot(legal, rng)))
        stacks = dict(zip(state.seats, state.stacks, strict=True))
        yield PlayedHand(number, config, events, state)
