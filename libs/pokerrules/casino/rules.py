"""What each game plugs into the shared engine: bets, decisions, dealing, streets and settlement."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from pokerrules.casino.config import GameConfig
from pokerrules.casino.model import BetKind, Decision, Event, Phase, SeatState, SeatStatus, Settlement, evolve
from pokerrules.casino.ranking import HandRanker
from pokerrules.casino.state import RoundState


@dataclass(frozen=True)
class DecisionSpec:
    """A decision offered in a phase; `bet` is placed at `multiple` × Ante (None: no chips move)."""

    phase: Phase
    decision: Decision
    bet: BetKind | None
    multiple: int
    automatic: bool  # the one taken when the clock runs out
    rule: str = ""  # the rules that give it


class GameRules(Protocol):
    placeable: frozenset[BetKind]  # bets placed before the deal
    decisions: tuple[DecisionSpec, ...]
    positions_per_player: int | None  # betting positions (seats) one player may hold; None: any

    def progressive_offered(self, config: GameConfig) -> bool: ...

    def cards_needed(self, hands: int) -> int: ...

    def cards_still_needed(self, state: RoundState) -> int: ...

    def deal(self, state: RoundState) -> tuple[RoundState, list[Event]]: ...

    def advance(self, state: RoundState, ranker: HandRanker) -> tuple[RoundState, list[Event]]: ...

    def void(self, state: RoundState) -> Settlement: ...


def take(state: RoundState, count: int) -> tuple[tuple[int, ...], RoundState]:
    """The next `count` cards from the front of the deck."""
    cards = state.deck[state.next_card : state.next_card + count]
    return cards, evolve(state, next_card=state.next_card + count)


def in_hand(state: RoundState) -> list[SeatState]:
    return [s for s in state.seats if s.status == SeatStatus.IN_HAND]


def with_bets(state: RoundState) -> list[SeatState]:
    """Seats with chips on the table (before the deal too: a voided round returns them)."""
    return [s for s in state.seats if s.bets]


def new_street(state: RoundState, phase: Phase) -> RoundState:
    seats = tuple(evolve(s, decided=False) for s in state.seats)
    return evolve(state, seats=seats, phase=phase)


def phase_event(phase: Phase) -> Event:
    return Event("PHASE", {"phase": str(phase)})


def hole_cards_event(seat: SeatState) -> Event:
    return Event("HOLE_CARDS", {"seat": seat.seat, "cards": list(seat.cards)}, seat=seat.seat)
