"""Table configuration: limits, paytables and the readings casinos vary. Defaults are the documents' values.

Odds are "X to 1" integers (the stake is returned on a win, README convention). Paytable keys are the line
names the engines report in `BetResult.line`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from pokerrules.casino.model import BetKind, Game


@dataclass(frozen=True)
class Limits:
    minimum: int
    maximum: int


def _frozen(d: Mapping[str, int]) -> Mapping[str, int]:
    return MappingProxyType(dict(d))


# THB-6.2, highest row first (THB-6.5: one row only).
THB_BONUS_PAYTABLE: Mapping[str, int] = _frozen(
    {
        "AA_PLAYER_AND_DEALER": 1000,
        "AA": 30,
        "AK_SUITED": 25,
        "AQ_AJ_SUITED": 20,
        "AK_OFFSUIT": 15,
        "KK_QQ_JJ": 10,
        "AQ_AJ_OFFSUIT": 5,
        "PAIR_2_TO_10": 3,
    }
)

# CH-7.1, by the player's final hand.
CH_ANTE_PAYTABLE: Mapping[str, int] = _frozen(
    {
        "ROYAL_FLUSH": 100,
        "STRAIGHT_FLUSH": 20,
        "FOUR_OF_A_KIND": 10,
        "FULL_HOUSE": 3,
        "FLUSH": 2,
        "STRAIGHT_OR_LESS": 1,
    }
)

# CH-7.2, on the player's two cards + the Flop.
CH_AA_BONUS_PAYTABLE: Mapping[str, int] = _frozen(
    {
        "FLUSH_OR_HIGHER": 25,
        "ACES_TO_STRAIGHT": 7,
    }
)

# TCP-5.1
TCP_PAIR_PLUS_PAYTABLE: Mapping[str, int] = _frozen(
    {
        "MINI_ROYAL_FLUSH": 200,
        "STRAIGHT_FLUSH": 40,
        "THREE_OF_A_KIND": 30,
        "STRAIGHT": 6,
        "FLUSH": 3,
        "PAIR": 1,
    }
)

# TCP-5.2
TCP_SIX_CARD_PAYTABLE: Mapping[str, int] = _frozen(
    {
        "ROYAL_FLUSH": 1000,
        "STRAIGHT_FLUSH": 200,
        "FOUR_OF_A_KIND": 100,
        "FULL_HOUSE": 20,
        "FLUSH": 15,
        "STRAIGHT": 9,
        "THREE_OF_A_KIND": 8,
    }
)


@dataclass(frozen=True)
class ProgressiveLine:
    """A Progressive row: `odds` to 1 paid by the house, or `pool_basis_points` of the pool, paid by it."""

    odds: int = 0
    pool_basis_points: int = 0


# TCP-2.5 gives no paytable ("terms at the casino floor"). Documented default (docs/game-math.md), modelled on
# the common three-card progressive: a fixed 1-chip stake; the Mini Royal takes the whole pool, the other rows
# pay fixed odds; 20 % of every stake feeds the pool. Its RTP grows with the pool (break-even near 2,690).
TCP_PROGRESSIVE_PAYTABLE: Mapping[str, ProgressiveLine] = MappingProxyType(
    {
        "MINI_ROYAL_FLUSH": ProgressiveLine(pool_basis_points=10_000),
        "STRAIGHT_FLUSH": ProgressiveLine(odds=70),
        "THREE_OF_A_KIND": ProgressiveLine(odds=60),
        "STRAIGHT": ProgressiveLine(odds=6),
    }
)


class TcpAnteRule(StrEnum):
    """TCP-A3: the Ante when the P/D does not qualify."""

    LITERAL = "LITERAL"  # the document: Ante wins only if the player's hand is higher, else push
    STANDARD = "STANDARD"  # usual casino rule: Ante wins 1 to 1 whatever the hands


@dataclass(frozen=True)
class ThbConfig:
    game: Game = Game.TEXAS_HOLDEM_BONUS
    limits: Mapping[BetKind, Limits] = field(
        default_factory=lambda: MappingProxyType(
            {BetKind.ANTE: Limits(1, 1000), BetKind.BONUS: Limits(1, 100)}
        )
    )
    bonus_paytable: Mapping[str, int] = field(default_factory=lambda: THB_BONUS_PAYTABLE)
    bonus_lost_on_fold: bool = True  # THB-3.4 / THB-A2 (literal reading)
    bonus_stands_on_void: bool = True  # THB-7.9 / THB-A7
    auto_adjust: bool = False  # over-maximum stakes are refused, not reduced


@dataclass(frozen=True)
class ChConfig:
    game: Game = Game.CASINO_HOLDEM
    limits: Mapping[BetKind, Limits] = field(
        default_factory=lambda: MappingProxyType(
            {BetKind.ANTE: Limits(1, 100), BetKind.AA_BONUS: Limits(1, 50)}
        )
    )
    ante_paytable: Mapping[str, int] = field(default_factory=lambda: CH_ANTE_PAYTABLE)
    aa_bonus_paytable: Mapping[str, int] = field(default_factory=lambda: CH_AA_BONUS_PAYTABLE)
    aa_bonus_lost_on_fold: bool = True  # CH-3.5 / CH-4.3; False: the AA Bonus stands on a fold
    dealer_qualifying_pair: int = 2  # CH-5.2: a pair of 4s (rank index 2) or better
    auto_adjust: bool = True  # CH-2.5 / CH-A2


@dataclass(frozen=True)
class TcpConfig:
    game: Game = Game.THREE_CARD_POKER
    limits: Mapping[BetKind, Limits] = field(
        default_factory=lambda: MappingProxyType(
            {
                BetKind.ANTE: Limits(1, 1000),
                BetKind.PAIR_PLUS: Limits(1, 500),
                BetKind.SIX_CARD_BONUS: Limits(1, 100),
                BetKind.PROGRESSIVE: Limits(1, 1),
            }
        )
    )
    pair_plus_paytable: Mapping[str, int] = field(default_factory=lambda: TCP_PAIR_PLUS_PAYTABLE)
    six_card_paytable: Mapping[str, int] = field(default_factory=lambda: TCP_SIX_CARD_PAYTABLE)
    progressive_paytable: Mapping[str, ProgressiveLine] = field(
        default_factory=lambda: TCP_PROGRESSIVE_PAYTABLE
    )
    progressive_contribution_basis_points: int = 2_000
    progressive_offered: bool = True
    progressive_lost_on_fold: bool = True  # silent in TCP-2.5; treated like the Pair Plus (TCP-3.2)
    ante_rule: TcpAnteRule = TcpAnteRule.LITERAL  # TCP-A3
    seats: int = 7  # TCP-A6: player seats counted by the Action Button
    deck_sets: int = 2  # TCP-1.1
    auto_adjust: bool = False


GameConfig = ThbConfig | ChConfig | TcpConfig


def default_config(game: Game) -> GameConfig:
    if game == Game.TEXAS_HOLDEM_BONUS:
        return ThbConfig()
    if game == Game.CASINO_HOLDEM:
        return ChConfig()
    return TcpConfig()
