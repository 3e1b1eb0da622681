"""The vocabulary shared by the three banked games: bets, decisions, phases, seats, events, settlement."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import TypeVar

_T = TypeVar("_T")


class Game(StrEnum):
    TEXAS_HOLDEM_BONUS = "TEXAS_HOLDEM_BONUS"
    CASINO_HOLDEM = "CASINO_HOLDEM"
    THREE_CARD_POKER = "THREE_CARD_POKER"


class BetKind(StrEnum):
    ANTE = "ANTE"
    BONUS = "BONUS"  # THB-2.2
    FLOP = "FLOP"  # THB-2.4
    TURN = "TURN"  # THB-2.5
    RIVER = "RIVER"  # THB-2.6
    AA_BONUS = "AA_BONUS"  # CH-4
    CALL = "CALL"  # CH-2.4
    PLAY = "PLAY"  # TCP-2.2
    PAIR_PLUS = "PAIR_PLUS"  # TCP-2.3
    SIX_CARD_BONUS = "SIX_CARD_BONUS"  # TCP-2.4
    PROGRESSIVE = "PROGRESSIVE"  # TCP-2.5


class Decision(StrEnum):
    FOLD = "FOLD"
    FLOP = "FLOP"  # THB pre-flop: place the Flop bet
    CALL = "CALL"  # CH
    PLAY = "PLAY"  # TCP
    BET = "BET"  # THB flop / turn: 1 × Ante
    CHECK = "CHECK"  # THB flop / turn


class Phase(StrEnum):
    BETTING = "BETTING"
    PRE_FLOP = "PRE_FLOP"  # THB decision on the hole cards
    FLOP = "FLOP"  # THB Turn-bet decision, CH Call/Fold decision
    TURN = "TURN"  # THB River-bet decision
    DECISION = "DECISION"  # TCP Play/Fold decision
    SETTLED = "SETTLED"
    VOIDED = "VOIDED"


DECISION_PHASES = frozenset({Phase.PRE_FLOP, Phase.FLOP, Phase.TURN, Phase.DECISION})


class SeatStatus(StrEnum):
    SITTING_OUT = "SITTING_OUT"  # no Ante this round
    IN_HAND = "IN_HAND"
    FOLDED = "FOLDED"


class Outcome(StrEnum):
    WIN = "WIN"
    PUSH = "PUSH"
    LOSE = "LOSE"
    VOID = "VOID"  # returned because the round was voided


@dataclass(frozen=True)
class DecisionRecord:
    phase: Phase
    decision: Decision
    stake: int
    automatic: bool


@dataclass(frozen=True)
class SeatState:
    seat: int
    player_id: str
    bets: Mapping[BetKind, int] = field(default_factory=lambda: MappingProxyType({}))
    cards: tuple[int, ...] = ()
    status: SeatStatus = SeatStatus.SITTING_OUT
    decided: bool = False  # has decided in the current decision phase
    decisions: tuple[DecisionRecord, ...] = ()

    @property
    def ante(self) -> int:
        return self.bets.get(BetKind.ANTE, 0)

    @property
    def total_staked(self) -> int:
        return sum(self.bets.values())


@dataclass(frozen=True)
class LegalDecision:
    decision: Decision
    stake: int  # chips this decision adds to the table (to hold in the wallet first)


@dataclass(frozen=True)
class BetResult:
    """One bet's settlement. Chips: `returned` (stake given back) + `lost` (kept by the house) == `stake`;
    `won` is paid on top (by the house, or by the progressive pool when `from_pool`)."""

    seat: int
    player_id: str
    bet: BetKind
    stake: int
    outcome: Outcome
    returned: int
    won: int
    lost: int
    line: str = ""  # the paytable row or the rule that decided it
    from_pool: bool = False

    @property
    def net(self) -> int:
        return self.won - self.lost


@dataclass(frozen=True)
class Settlement:
    results: tuple[BetResult, ...]
    # TCP Progressive: chips moved from the house to the jackpot pool out of this round's stakes.
    pool_contribution: int = 0
    # TCP Progressive: the fraction of a chip owed to the pool after this round, in basis-point units
    # (0 <= carry < 10_000); the next round starts from it, so the pool gets exactly its share over time.
    pool_carry: int = 0

    def net_for_seat(self, seat: int) -> int:
        return sum(r.net for r in self.results if r.seat == seat)

    @property
    def player_net(self) -> int:
        return sum(r.net for r in self.results)

    @property
    def pool_paid(self) -> int:
        return sum(r.won for r in self.results if r.from_pool)

    @property
    def house_net(self) -> int:
        """What the house gains: players' losses minus what it pays and what it gives to the pool."""
        return -self.player_net - self.pool_contribution + self.pool_paid


@dataclass(frozen=True)
class Event:
    """`seat` is None for a public event; otherwise only that seat's player may see it (private cards)."""

    kind: str
    data: Mapping[str, object]
    seat: int | None = None


def evolve(obj: _T, **changes: object) -> _T:
    """`dataclasses.replace` for the engine's frozen dataclasses (no __post_init__), about five times faster:
    the hot path of a round makes a dozen of these."""
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__)
    new.__dict__.update(changes)
    return new
