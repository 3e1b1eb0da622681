"""The state of one casino round and the commands that advance it (`engine.apply`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from pokerrules.casino.config import GameConfig
from pokerrules.casino.model import BetKind, Decision, Event, Game, Phase, SeatState, Settlement, evolve


@dataclass(frozen=True)
class RoundState:
    """One round at one table. Several seats share the dealer's and the community cards (live style); a
    "Touch" table is the same with one seat. `deck` is private: never show it, nor `dealer_cards` before
    `dealer_revealed`, nor a seat's `cards` to another player."""

    game: Game
    config: GameConfig
    round_number: int
    seats: tuple[SeatState, ...]
    phase: Phase = Phase.BETTING
    last_bets: Mapping[int, Mapping[BetKind, int]] = field(default_factory=lambda: MappingProxyType({}))
    deck: tuple[int, ...] = ()
    next_card: int = 0
    dealer_cards: tuple[int, ...] = ()
    dealer_revealed: bool = False
    board: tuple[int, ...] = ()  # community cards turned up so far (THB, CH)
    voided_cards: tuple[int, ...] = ()  # THB-7.1 / THB-A6: exposed cards taken out of play
    progressive_pool: int = 0  # TCP: the jackpot pool when the cards were dealt
    progressive_carry: int = 0  # TCP: the pool's unpaid fraction of a chip before this round, in bp units
    deal_start_seat: int = 1  # TCP-A6: the Action Button of the previous round
    action_button: int | None = None  # TCP-7: set when the P/D hand is turned over
    settlement: Settlement | None = None

    def seat(self, number: int) -> SeatState:
        for s in self.seats:
            if s.seat == number:
                return s
        from pokerrules.casino.errors import SEAT_NOT_FOUND, CasinoError

        raise CasinoError(SEAT_NOT_FOUND, f"no seat {number} at this table", {"seat": number})

    def with_seat(self, new: SeatState) -> RoundState:
        return evolve(self, seats=tuple(new if s.seat == new.seat else s for s in self.seats))

    @property
    def deck_set(self) -> int:
        """TCP-1.1: two deck sets alternate round by round (0, 1, 0, ...). Other games use one deck."""
        deck_sets = getattr(self.config, "deck_sets", 1)
        return (self.round_number - 1) % deck_sets


@dataclass(frozen=True)
class Transition:
    state: RoundState
    events: tuple[Event, ...]


# Commands -------------------------------------------------------------------------------------------------
# `balance`, when given, is the chips the player has free in the wallet: a stake above it is refused
# (INSUFFICIENT_CHIPS) before anything changes. The service passes it; the engine stays pure.


@dataclass(frozen=True)
class PlaceBets:
    seat: int
    player_id: str
    bets: Mapping[BetKind, int]  # chips added to each bet (CH-2.2: every tap adds a chip)
    balance: int | None = None


@dataclass(frozen=True)
class ClearBets:
    seat: int
    player_id: str


@dataclass(frozen=True)
class Rebet:
    seat: int
    player_id: str
    balance: int | None = None


@dataclass(frozen=True)
class Deal:
    deck: Sequence[int]  # the shuffled deck, dealt from the front
    deck_set: int | None = None  # TCP-1.1: which of the two deck sets this deck comes from
    progressive_pool: int = 0
    # TCP: the contribution still owed to the pool from earlier rounds, in basis points of a chip
    # (the previous Settlement's `pool_carry`).
    progressive_carry: int = 0


@dataclass(frozen=True)
class Decide:
    seat: int
    player_id: str
    decision: Decision
    phase: Phase | None = None  # the street the player thinks it is; a stale decision is refused
    balance: int | None = None


@dataclass(frozen=True)
class Timeout:
    """The decision clock ran out: every undecided seat (or only `seat`, when each seat has its own clock)
    gets its automatic decision (THB-7.10, THB-7.11). A disconnect does not stop the clock."""

    seat: int | None = None


@dataclass(frozen=True)
class VoidCard:
    """THB-7.1 / THB-A6: the next undealt card was exposed; it is taken out of play."""


@dataclass(frozen=True)
class VoidRound:
    """CH-11.2 / THB-7.7 / THB-A7: a malfunction voids the round and returns the bets."""

    reason: str


Command = PlaceBets | ClearBets | Rebet | Deal | Decide | Timeout | VoidCard | VoidRound
