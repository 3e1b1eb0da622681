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
_BET_OR_RAISE = Action(ActionKind.RAISE, -1)  # marker, replaced by a sized bet or raise


def random_legal_action(legal: LegalActions, rng: random.Random) -> Action:
    """Uniform over fold/check/call/bet-or-raise, with a uniform amount in [min, max]."""
    # rng.random() rather than randrange/randint: this sits on the benchmark's hot path.
    options = [_CHECK] if legal.call_amount == 0 else [_FOLD, _CALL]
    if legal.max_to:
        options.append(_BET_OR_RAISE)
    choice = options[int(rng.random() * len(options))]
    if choice is _BET_OR_RAISE:
        low = legal.min_to
        return Action(legal.bet_kind, low + int(rng.random() * (legal.max_to - low + 1)))
    return choice


def preset_bot_action(legal: LegalActions, rng: random.Random) -> Action:
    """A loose-passive bot with some aggression, sized by the MP presets (MP-4.12, MP-4.13)."""
    roll = rng.random()
    sizes = sizing(legal)
    if sizes is not None and roll < 0.18:
        return Action(legal.bet_kind, rng.choice(sizes.presets).amount)
    if legal.can_check:
        return _CHECK
    # Fold more often the larger the call is relative to the pot.
    pressure = legal.call_amount / max(legal.pot, 1)
    if roll > 0.75 - min(pressure, 1.0) * 0.4:
        return _FOLD
    return _CALL
