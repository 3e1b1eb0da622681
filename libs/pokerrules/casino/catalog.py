"""A table's game as `ListGames` presents it: bets and limits, decisions by street, paytables and the
readings the table uses (configuration, with the rule or ambiguity note each one answers)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from pokerrules.casino.config import ChConfig, GameConfig, ProgressiveLine, TcpConfig, ThbConfig
from pokerrules.casino.engine import rules_of

RULES_DOCUMENT = {
    "TEXAS_HOLDEM_BONUS": "texas-holdem-bonus.md (THB)",
    "CASINO_HOLDEM": "casino-holdem.md (CH)",
    "THREE_CARD_POKER": "three-card-poker.md (TCP)",
}

# Which rule each configurable reading answers.
READINGS = {
    "bonus_lost_on_fold": "THB-3.4 / THB-A2",
    "bonus_stands_on_void": "THB-7.9 / THB-A7",
    "aa_bonus_lost_on_fold": "CH-3.5 / CH-4.3",
    "dealer_qualifying_pair": "CH-5.2 (rank index: 2 = fours)",
    "auto_adjust": "CH-2.5 / CH-A2",
    "ante_rule": "TCP-3.6 / TCP-A3",
    "progressive_offered": "TCP-2.5",
    "progressive_lost_on_fold": "TCP-2.5 (silent; like TCP-3.2)",
    "progressive_contribution_basis_points": "TCP-2.5 (configuration)",
    "seats": "TCP-7.3 / TCP-A6",
    "deck_sets": "TCP-1.1",
}

_PAYTABLES = (
    "bonus_paytable",
    "ante_paytable",
    "aa_bonus_paytable",
    "pair_plus_paytable",
    "six_card_paytable",
)


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
    rules = rules_of(config.game)
    paytables = {
        f.name: {line: _odds(odds) for line, odds in getattr(config, f.name).items()}
        for f in fields(config)
        if f.name in _PAYTABLES or f.name == "progressive_paytable"
    }
    readings = {
        f.name: {"value": str(getattr(config, f.name)), "rule": READINGS[f.name]}
        for f in fields(config)
        if f.name in READINGS
    }
    return {
        "game": str(config.game),
        "rules": RULES_DOCUMENT[str(config.game)],
        "bets": {
            str(k): {"minimum": v.minimum, "maximum": v.maximum}
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
            }
            for d in rules.decisions
        ],
        "paytables": paytables,
        "readings": readings,
    }
