"""The bot's decision: equity against the opponents' possible hands, pot odds, some aggression (NK-7.6).

Input is only `HandView` (what `view_for(state, seat)` shows that seat: its own hole cards, the board,
the public bets and the legal actions), so a bot cannot read anyone else's cards; output is an ordinary
`Action` for the same `apply` people use, always within the legal min/max, plus a think time.

- Strength is measured against a fair share: `edge = equity × players in the hand` (1.0 = average).
- Facing a bet: raise with a strong edge (or now and then as a semi-bluff), call when the equity beats
  the pot odds by a small margin, else fold.
- Free to check: bet for value with a good edge, or bluff at the `aggression` rate; sizes come from the
  MP presets (MP-4.12, MP-4.13), larger with stronger hands.
- Think time: 0.6–2 s plus more for close decisions (equity near the pot odds), so the pace looks human;
  services ignore it in tests (`pacing=False` makes it 0).
Deterministic: the same view and seed give the same decision.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from pokerrules.bots.equity import estimate_equity
from pokerrules.multiplayer.actions import Action, ActionKind, LegalActions
from pokerrules.multiplayer.presets import sizing
from pokerrules.multiplayer.views import HandView


@dataclass(frozen=True, slots=True)
class BotProfile:
    aggression: float = 0.12  # bluff / semi-bluff frequency
    value_edge: float = 1.35  # bet for value above this multiple of a fair share
    raise_edge: float = 1.7  # raise a bet above this multiple
    call_margin: float = 0.03  # equity needed above the pot odds to call
    # equity: samples × iterations random deals (opponents' hands and the board) in one C call; two fields
    # rather than one so existing profiles keep their meaning (the old estimate sampled `samples` opponent
    # sets and finished `iterations` boards for each)
    samples: int = 32
    iterations: int = 16
    pacing: bool = True


DEFAULT_PROFILE = BotProfile()


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    think_ms: int  # how long a person might take: the service waits this long unless pacing is off
    equity: float


def decide(view: HandView, seed: int, profile: BotProfile | None = None) -> Decision:
    """The bot's action for the seat whose turn it is in `view` (the view must be that seat's own)."""
    legal = view.legal
    if legal is None:
        raise ValueError("the view holds no legal actions: not this bot's turn")
    me = next(s for s in view.seats if s.seat == legal.seat)
    if me.hole_cards is None:
        raise ValueError("the view is not the bot's own")
    profile = profile or DEFAULT_PROFILE
    rng = random.Random(seed)
    opponents = sum(1 for s in view.seats if not s.folded and s.seat != legal.seat)
    equity = estimate_equity(me.hole_cards, view.board, opponents, rng, profile.samples, profile.iterations)
    edge = equity * (opponents + 1)
    action, closeness = _choose(legal, equity, edge, rng, profile)
    think = 0
    if profile.pacing:
        think = int(600 + rng.random() * 1_400 + closeness * 3_000)
    return Decision(action, think, equity)


def _choose(
    legal: LegalActions, equity: float, edge: float, rng: random.Random, profile: BotProfile
) -> tuple[Action, float]:
    """The action and how close the decision was (0 = obvious, 1 = a coin flip), for the think time."""
    bluff = rng.random() < profile.aggression
    if legal.can_check:
        if legal.can_bet_or_raise and (edge >= profile.value_edge or bluff):
            return _sized(legal, edge, rng), max(0.0, 1 - abs(edge - profile.value_edge))
        return Action.check(), 0.2
    pot_odds = legal.call_amount / (legal.pot + legal.call_amount)
    closeness = max(0.0, 1 - abs(equity - pot_odds) * 4)
    if legal.can_bet_or_raise and (edge >= profile.raise_edge or (bluff and equity > pot_odds)):
        return _sized(legal, edge, rng), closeness
    if equity >= pot_odds + profile.call_margin:
        return Action.call(), closeness
    return Action.fold(), closeness


def _sized(legal: LegalActions, edge: float, rng: random.Random) -> Action:
    """A preset size, bigger with a stronger hand (with some noise so sizes do not give the hand away)."""
    sizes = sizing(legal)
    assert sizes is not None
    presets = sizes.presets
    base = 0 if edge < 1.5 else (1 if edge < 2.0 else 2)
    pick = min(len(presets) - 1, max(0, base + rng.choice((-1, 0, 0, 1))))
    return Action(
        legal.bet_kind if legal.bet_kind is ActionKind.BET else ActionKind.RAISE, presets[pick].amount
    )
