"""Multiplayer No-Limit Hold'em and Pot-Limit Omaha: the pure betting engine (MP rules, NK sections 1-4).

t = start_hand(GameConfig.nlhe(50, 100), {1: 10_000, 2: 10_000, 3: 10_000}, button=1, deck=deck, rank=rank)
legal = t.state.legal_actions()          # seat to act, call amount, min/max raise-to
t = apply(t.state, legal.seat, Action.call())   # new state + events; IllegalAction(reason) if refused
"""

from pokerrules.multiplayer.actions import Action, ActionKind, LegalActions
from pokerrules.multiplayer.config import GameConfig, Limit, Variant
from pokerrules.multiplayer.engine import (
    Transition,
    apply,
    cap_raises_to_pot,
    next_button,
    replay,
    start_hand,
    swap_hole_card,
    timeout_action,
)
from pokerrules.multiplayer.errors import IllegalAction
from pokerrules.multiplayer.state import HandState, Ranker

__all__ = [
    "Action",
    "ActionKind",
    "GameConfig",
    "HandState",
    "IllegalAction",
    "LegalActions",
    "Limit",
    "Ranker",
    "Transition",
    "Variant",
    "apply",
    "cap_raises_to_pot",
    "next_button",
    "replay",
    "start_hand",
    "swap_hole_card",
    "timeout_action",
]
