"""Simple seeded bots that choose among the legal actions: for simulations and benchmarks.

These bots see only the legal-action view (no cards at all), so they can never leak or use private
information. The table service's equity-based bots (NK-7.6) are a separate component.
"""

from __future__ import annotations

import random

from pokerrules.multiplayer.actions import Action, ActionKind, LegalActions
from pokerrules.multiplayer.presets import sizing

_FOLD = Action(ActionKind.FOLD)
_CHECK = Action(ActionKind.CHECK)
_CALL = Action(ActionKind.CALL)


def random_legal_action(legal: LegalActions, rng: random.Random) -> Action:
    """Uniform over the legal kinds (check/bet, or fold/call/raise), a uniform amount in [min, max]."""
    # rng.random() and no option list: this sits on the benchmark's hot path.
    facing_bet = legal.call_amount > 0
    kinds = (2 if facing_bet else 1) + (1 if legal.max_to else 0)
    k = int(rng.random() * kinds)
    if facing_bet:
        if k < 2:
            return _CALL if k else _FOLD
    elif k == 0:
        return _CHECK
    low = legal.min_to
    return Action(legal.bet_kind, low + int(rng.random() * (legal.max_to - low + 1)))


def preset_bot_action(legal: LegalActions, rng: random.Random) -> Action:
    """A loose-passive bot with some aggression, sized by the MP presets (MP-4.12, MP-4.13)."""
    roll = rng.random()
    if roll < 0.18:  # sizing only when it is used: the same choices, less work on the simulations' hot path
        sizes = sizing(legal)
        if sizes is not None:
            return Action(legal.bet_kind, rng.choice(sizes.presets).amount)
    if legal.can_check:
        return _CHECK
    # Fold more often the larger the call is relative to the pot.
    pressure = legal.call_amount / max(legal.pot, 1)
    if roll > 0.75 - min(pressure, 1.0) * 0.4:
        return _FOLD
    return _CALL
