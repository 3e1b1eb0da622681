"""A game as `ListGames` presents it, in the client's terms: bets and limits, decisions by street, paytables,
every line a bet is settled on, and the readings the configuration takes (each with its rule ID)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from pokerrules.casino.cards import RANKS
from pokerrules.casino.config import ChConfig, GameConfig, ProgressiveLine, TcpAnteRule, TcpConfig, ThbConfig
from pokerrules.casino.engine import rules_of
from pokerrules.casino.model import BetKind, Game, Outcome

RULES_DOCUMENT = {
    Game.TEXAS_HOLDEM_BONUS: "texas-holdem-bonus.md (THB)",
    Game.CASINO_HOLDEM: "casino-holdem.md (CH)",
    Game.THREE_CARD_POKER: "three-card-poker.md (TCP)",
}
RULE_PREFIX = {Game.TEXAS_HOLDEM_BONUS: "THB", Game.CASINO_HOLDEM: "CH", Game.THREE_CARD_POKER: "TCP"}

BET_RULES = {
    Game.TEXAS_HOLDEM_BONUS: {BetKind.ANTE: "THB-2.1", BetKind.BONUS: "THB-2.2, THB-2.3"},
    Game.CASINO_HOLDEM: {BetKind.ANTE: "CH-1.4, CH-2.3", BetKind.AA_BONUS: "CH-4.1"},
    Game.THREE_CARD_POKER: {
        BetKind.ANTE: "TCP-2.1",
        BetKind.PAIR_PLUS: "TCP-2.3, TCP-A2",
        BetKind.SIX_CARD_BONUS: "TCP-2.4, TCP-A2",
        BetKind.PROGRESSIVE: "TCP-2.5",
    },
}

# Paytable field -> (the bets it pays, its rule).
PAYTABLES: Mapping[str, tuple[tuple[BetKind, ...], str]] = {
    "bonus_paytable": ((BetKind.BONUS,), "THB-6.2"),
    "ante_paytable": ((BetKind.ANTE,), "CH-7.1, CH-7.3"),
    "aa_bonus_paytable": ((BetKind.AA_BONUS,), "CH-7.2"),
    "pair_plus_paytable": ((BetKind.PAIR_PLUS,), "TCP-5.1"),
    "six_card_paytable": ((BetKind.SIX_CARD_BONUS,), "TCP-5.2"),
    "progressive_paytable": ((BetKind.PROGRESSIVE,), "TCP-2.5 (configuration)"),
}


@dataclass(frozen=True)
class SettlementLine:
    """A `BetResult.line` that is not a paytable row: the rule that settled a bet."""

    line: str
    bets: tuple[BetKind, ...]
    outcomes: tuple[Outcome, ...]
    rule: str
    meaning: str
    pays: str = ""


_W, _P, _L, _V = Outcome.WIN, Outcome.PUSH, Outcome.LOSE, Outcome.VOID
_THB_MAIN = (BetKind.ANTE, BetKind.FLOP, BetKind.TURN, BetKind.RIVER)

SETTLEMENT_LINES: Mapping[Game, tuple[SettlementLine, ...]] = {
    Game.TEXAS_HOLDEM_BONUS: (
        SettlementLine(
            "STRAIGHT_OR_BETTER",
            (BetKind.ANTE,),
            (_W,),
            "THB-4.3",
            "the player beat the Dealer with a Straight or better: the Ante wins",
            "1 to 1",
        ),
        SettlementLine(
            "BELOW_STRAIGHT",
            (BetKind.ANTE,),
            (_P,),
            "THB-4.3",
            "the player beat the Dealer below a Straight: the Ante stands off",
        ),
        SettlementLine(
            "PLAYER_WINS",
            (BetKind.FLOP, BetKind.TURN, BetKind.RIVER),
            (_W,),
            "THB-4.2, THB-6.1",
            "the player's hand is higher than the Dealer's",
            "1 to 1",
        ),
        SettlementLine("TIE", _THB_MAIN, (_P,), "THB-4.5", "equal hands: a stand-off"),
        SettlementLine("DEALER_WINS", _THB_MAIN, (_L,), "THB-4.4, THB-A3", "the Dealer's hand is higher"),
        SettlementLine(
            "FOLDED",
            (BetKind.ANTE, BetKind.BONUS),
            (_L,),
            "THB-3.4, THB-A2",
            "the player folded before the Flop (the Bonus is lost too)",
        ),
        SettlementLine(
            "NO_WINNING_ROW", (BetKind.BONUS,), (_L,), "THB-6.4", "the hole cards match no Bonus row"
        ),
        SettlementLine(
            "VOID",
            (*_THB_MAIN, BetKind.BONUS),
            (_V,),
            "THB-7.7, THB-A7",
            "the round was voided: the stake is returned (a dealt Bonus stands, THB-7.9)",
        ),
    ),
    Game.CASINO_HOLDEM: (
        SettlementLine(
            "PLAYER_WINS", (BetKind.CALL,), (_W,), "CH-5.6", "the player's hand is higher", "1 to 1"
        ),
        SettlementLine(
            "DEALER_DOES_NOT_QUALIFY",
            (BetKind.CALL,),
            (_P,),
            "CH-5.3, CH-A5",
            "the Dealer has less than a pair of 4s: the Call is returned (the Ante is paid by its paytable)",
        ),
        SettlementLine(
            "TIE", (BetKind.ANTE, BetKind.CALL), (_P,), "CH-5.4", "the Dealer qualifies, equal hands: a push"
        ),
        SettlementLine(
            "DEALER_WINS",
            (BetKind.ANTE, BetKind.CALL),
            (_L,),
            "CH-5.5",
            "the Dealer qualifies with the higher hand",
        ),
        SettlementLine(
            "FOLDED",
            (BetKind.ANTE, BetKind.AA_BONUS),
            (_L,),
            "CH-3.5, CH-4.3",
            "the player folded (the AA Bonus is lost too)",
        ),
        SettlementLine(
            "NO_WINNING_ROW",
            (BetKind.AA_BONUS,),
            (_L,),
            "CH-4.4, CH-A3",
            "the player's 2 cards and the Flop are below a pair of Aces",
        ),
        SettlementLine(
            "VOID",
            (BetKind.ANTE, BetKind.CALL, BetKind.AA_BONUS),
            (_V,),
            "CH-11.2",
            "the round was voided: every bet is refunded",
        ),
    ),
    Game.THREE_CARD_POKER: (
        SettlementLine(
            "PLAYER_WINS",
            (BetKind.ANTE, BetKind.PLAY),
            (_W,),
            "TCP-3.7, TCP-3.9",
            "the P/D qualifies and the player's hand is higher",
            "1 to 1",
        ),
        SettlementLine(
            "DEALER_DOES_NOT_QUALIFY",
            (BetKind.ANTE, BetKind.PLAY),
            (_W, _P),
            "TCP-3.6, TCP-A3",
            "the P/D is below Queen-high: the Play is returned; the Ante wins 1 to 1 if the player's hand "
            "is higher (under the configured ante_rule), else pushes",
            "1 to 1",
        ),
        SettlementLine("TIE", (BetKind.ANTE, BetKind.PLAY), (_P,), "TCP-3.8", "the same three ranks: a push"),
        SettlementLine(
            "DEALER_WINS", (BetKind.ANTE, BetKind.PLAY), (_L,), "TCP-3.7", "the P/D's hand is higher"
        ),
        SettlementLine(
            "FOLDED",
            (BetKind.ANTE, BetKind.PAIR_PLUS, BetKind.PROGRESSIVE),
            (_L,),
            "TCP-3.2",
            "the hand folded (the Pair Plus and, as configured, the Progressive are lost too)",
        ),
        SettlementLine(
            "NO_WINNING_ROW",
            (BetKind.PAIR_PLUS, BetKind.SIX_CARD_BONUS, BetKind.PROGRESSIVE),
            (_L,),
            "TCP-5.4",
            "the hand matches no row of the bet's paytable",
        ),
        SettlementLine(
            "VOID",
            tuple(sorted(rules_of(Game.THREE_CARD_POKER).placeable | {BetKind.PLAY})),
            (_V,),
            "TCP (silent; as CH-11.2)",
            "the round was voided: every bet is refunded",
        ),
    ),
}


@dataclass(frozen=True)
class ReadingNote:
    rule: str | Mapping[Game, str]  # one rule, or the rule at each game that has the reading
    meaning: Callable[[Any], str]
    value: Callable[[Any], str] = lambda v: str(v).lower() if isinstance(v, bool) else str(v)

    def rule_at(self, game: Game) -> str:
        return self.rule if isinstance(self.rule, str) else self.rule[game]


def _yes_no(yes: str, no: str) -> Callable[[Any], str]:
    return lambda v: yes if v else no


# Which rule each configurable reading answers, and what its value means at the table.
READINGS: Mapping[str, ReadingNote] = {
    "bonus_lost_on_fold": ReadingNote(
        "THB-3.4 / THB-A2",
        _yes_no("a fold loses the Bonus, even on a paying hand", "a fold leaves the Bonus in play"),
    ),
    "bonus_stands_on_void": ReadingNote(
        "THB-7.9 / THB-A7",
        _yes_no(
            "a voided round still settles a Bonus whose hole cards were dealt",
            "a voided round returns the Bonus",
        ),
    ),
    "aa_bonus_lost_on_fold": ReadingNote(
        "CH-3.5 / CH-4.3",
        _yes_no("a fold loses the AA Bonus", "the AA Bonus is settled even after a fold"),
    ),
    "dealer_qualifying_pair": ReadingNote(
        "CH-5.2",
        lambda v: f"the Dealer qualifies with a pair of {RANKS[v]}s or better",
        value=lambda v: RANKS[v],
    ),
    "auto_adjust": ReadingNote(
        {
            Game.CASINO_HOLDEM: "CH-2.5 / CH-A2",
            Game.TEXAS_HOLDEM_BONUS: "THB (silent: limits are the table's)",
            Game.THREE_CARD_POKER: "TCP (silent: TCP-A2, limits are the table's)",
        },
        _yes_no(
            "a bet over its maximum is lowered to the maximum (Auto-Adjusted Bet)",
            "a bet over its maximum is refused (BET_ABOVE_MAXIMUM)",
        ),
    ),
    "ante_rule": ReadingNote(
        "TCP-3.6 / TCP-A3",
        lambda v: (
            "P/D not qualifying: the Ante wins only if the player's hand is higher, else pushes"
            if v == TcpAnteRule.LITERAL
            else "P/D not qualifying: the Ante wins 1 to 1 whatever the hands"
        ),
    ),
    "progressive_offered": ReadingNote(
        "TCP-2.5", _yes_no("the Progressive bet is offered", "the Progressive bet is not offered")
    ),
    "progressive_lost_on_fold": ReadingNote(
        "TCP-2.5 (silent; like TCP-3.2)",
        _yes_no("a fold loses the Progressive", "the Progressive is settled even after a fold"),
    ),
    "progressive_contribution_basis_points": ReadingNote(
        "TCP-2.5 (configuration)",
        lambda v: f"{v / 100:g} % of every Progressive stake goes to the table's pool (basis points)",
    ),
    "seats": ReadingNote(
        "TCP-7.3 / TCP-A6",
        lambda v: (
            "the Action Button counts over the table's own seats (CasinoTable.seat_count), "
            "empty seats included, wrapping after the last"
        ),
        value=lambda v: "TABLE_SEATS",
    ),
    "deck_sets": ReadingNote("TCP-1.1", lambda v: f"{v} deck sets alternate round by round"),
}


def _odds(value: int | ProgressiveLine) -> str:
    if isinstance(value, ProgressiveLine):
        return (
            f"{value.pool_basis_points / 100:g} % of the pool"
            if value.pool_basis_points
            else f"{value.odds} to 1"
        )
    return f"{value} to 1"


def describe(config: GameConfig) -> dict[str, Any]:
    assert isinstance(config, ThbConfig | ChConfig | TcpConfig)
    game = config.game
    rules = rules_of(game)
    paytables = {
        f.name: {
            "lines": {line: _odds(odds) for line, odds in getattr(config, f.name).items()},
            "bets": [str(b) for b in PAYTABLES[f.name][0]],
            "rule": PAYTABLES[f.name][1],
        }
        for f in fields(config)
        if f.name in PAYTABLES
    }
    readings = {}
    for f in fields(config):
        if f.name in READINGS:
            note, value = READINGS[f.name], getattr(config, f.name)
            readings[f.name] = {
                "value": note.value(value),
                "rule": note.rule_at(game),
                "meaning": note.meaning(value),
            }
    return {
        "game": str(game),
        "rules": RULES_DOCUMENT[game],
        "rule_prefix": RULE_PREFIX[game],
        "bets": {
            str(k): {"minimum": v.minimum, "maximum": v.maximum, "rule": BET_RULES[game][k]}
            for k, v in config.limits.items()
            if k in rules.placeable
        },
        "decisions": [
            {
                "phase": str(d.phase),
                "decision": str(d.decision),
                "bet": str(d.bet) if d.bet else None,
                "multiple_of_ante": d.multiple,
                "automatic_on_timeout": d.automatic,
                "rule": d.rule,
            }
            for d in rules.decisions
        ],
        "paytables": paytables,
        "settlement_lines": [
            {
                "line": s.line,
                "bets": [str(b) for b in s.bets],
                "outcomes": [str(o) for o in s.outcomes],
                "pays": s.pays,
                "rule": s.rule,
                "meaning": s.meaning,
            }
            for s in SETTLEMENT_LINES[game]
        ],
        "readings": readings,
    }
