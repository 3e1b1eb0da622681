"""Helpers for the betting-engine tests: start a hand with chosen cards and play scripted actions."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pytest
from pokerrules.multiplayer import Action, GameConfig, HandState, apply, start_hand
from pokerrules.multiplayer.decks import deck_dealing
from pokerrules.multiplayer.events import Event

Play = Callable[..., tuple[HandState, list[Event]]]


def by_hole(strengths: Mapping[int, int], holes: Mapping[int, Sequence[int]]) -> Callable[..., int]:
    """Test double ranker: the test states each seat's strength directly (pot-splitting tests only)."""
    table = {tuple(cards): strengths[seat] for seat, cards in holes.items()}
    return lambda hole, board: table[tuple(hole)]


def default_holes(seats: Sequence[int], per: int = 2) -> dict[int, tuple[int, ...]]:
    # Deterministic distinct cards per seat, away from the board cards chosen by deck_dealing.
    return {s: tuple(51 - (k * per + j) for j in range(per)) for k, s in enumerate(sorted(seats))}


class Hand:
    """A scripted hand: `h = Hand(...); h.play((4, Action.call()), ...)`; keeps every event."""

    def __init__(
        self,
        stacks: Mapping[int, int],
        button: int,
        config: GameConfig | None = None,
        strengths: Mapping[int, int] | None = None,
        board: Sequence[int] = (0, 4, 8, 13, 22),
    ) -> None:
        config = config or GameConfig.nlhe(50, 100)
        per = config.variant.hole_cards
        self.holes = default_holes(list(stacks), per)
        strengths = strengths or {s: 0 for s in stacks}
        deck = deck_dealing(list(stacks), button, self.holes, board, per)
        t = start_hand(config, stacks, button, deck, by_hole(strengths, self.holes))
        self.state = t.state
        self.events: list[Event] = list(t.events)
        self.total = self.state.total_chips()

    def play(self, *moves: tuple[int, Action]) -> HandState:
        for seat, action in moves:
            t = apply(self.state, seat, action)
            self.state = t.state
            self.events.extend(t.events)
            assert self.state.total_chips() == self.total
        return self.state

    def of(self, kind: type) -> list:  # type: ignore[type-arg]
        return [ev for ev in self.events if isinstance(ev, kind)]


@pytest.fixture
def hand() -> type[Hand]:
    return Hand
