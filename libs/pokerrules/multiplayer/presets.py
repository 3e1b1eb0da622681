"""Bet sizing presets (MP-4.11 to MP-4.13, reading MP-A6), always resolved to a legal amount.

Documented parameters (MP-A6 leaves them to the implementation):
- a raise preset N× makes the player's round total N × the current bet ("raise to");
- a bet preset p % bets p % of every chip already in the pot, rounded down to a whole chip;
- a preset outside the legal range is moved to the nearest legal amount (NK-3.4 min/max shown alongside).
"""

from __future__ import annotations

from dataclasses import dataclass

from pokerrules.multiplayer.actions import ActionKind, LegalActions

RAISE_MULTIPLES: tuple[int, ...] = (2, 3, 4)
BET_PERCENTS: tuple[int, ...] = (33, 50, 75, 100)


@dataclass(frozen=True, slots=True)
class Preset:
    label: str  # "2x", "50%"
    amount: int  # the legal bet/raise-to total this preset resolves to


@dataclass(frozen=True, slots=True)
class Sizing:
    kind: ActionKind  # BET or RAISE
    min_to: int
    max_to: int
    presets: tuple[Preset, ...]


def raw_bet_preset(pot: int, percent: int) -> int:
    """MP-4.13: p % of the pot, rounded down (MP-EX-4: 33 % of 300 is 99)."""
    return pot * percent // 100


def raw_raise_preset(current_bet: int, multiple: int) -> int:
    """MP-4.12: raise to N × the current bet (MP-EX-4: 2× a bet of 150 is a total of 300)."""
    return current_bet * multiple


def sizing(
    legal: LegalActions,
    multiples: tuple[int, ...] = RAISE_MULTIPLES,
    percents: tuple[int, ...] = BET_PERCENTS,
) -> Sizing | None:
    """The presets for the player to act, each resolved into [min_to, max_to]; None if they cannot bet."""
    if not legal.can_bet_or_raise:
        return None
    if legal.bet_kind is ActionKind.BET:
        raw = [(f"{p}%", raw_bet_preset(legal.pot, p)) for p in percents]
    else:
        raw = [(f"{m}x", raw_raise_preset(legal.current_bet, m)) for m in multiples]
    presets = tuple(Preset(label, legal.clamp(amount)) for label, amount in raw)
    return Sizing(legal.bet_kind, legal.min_to, legal.max_to, presets)
