"""Monte Carlo through the real engine: whole rounds played by `apply`, to cross-check the exact figures."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pokerrules.casino.engine import apply, awaiting, legal_decisions, new_round
from pokerrules.casino.model import BetKind, Decision, Game
from pokerrules.casino.state import Deal, Decide, PlaceBets, RoundState

Strategy = Callable[[RoundState, int], Decision]


@dataclass(frozen=True)
class Estimate:
    mean: float  # mean net per unit staked
    standard_error: float
    rounds: int

    def z(self, exact: float) -> float:
        return (self.mean - exact) / self.standard_error if self.standard_error else 0.0


class _Accumulator:
    def __init__(self) -> None:
        self.n = 0
        self.total = 0.0
        self.squares = 0.0

    def add(self, x: float) -> None:
        self.n += 1
        self.total += x
        self.squares += x * x

    def estimate(self) -> Estimate:
        mean = self.total / self.n
        variance = max(self.squares / self.n - mean * mean, 0.0) * self.n / max(self.n - 1, 1)
        return Estimate(mean, math.sqrt(variance / self.n), self.n)


def simulate(
    game: Game,
    bets: Mapping[BetKind, int],
    strategy: Strategy,
    rounds: int,
    seed: int,
    groups: Mapping[str, tuple[BetKind, ...]],
    progressive_pool: int = 0,
) -> dict[str, Estimate]:
    """Play `rounds` one-seat rounds; each group's net is divided by the stake of its first bet (per Ante /
    per unit of a side bet)."""
    rng = random.Random(seed)
    deck = list(range(52))
    accumulators = {name: _Accumulator() for name in groups}
    for _ in range(rounds):
        rng.shuffle(deck)
        state = new_round(game, {1: "sim"})
        state = apply(state, PlaceBets(1, "sim", bets)).state
        state = apply(state, Deal(deck, progressive_pool=progressive_pool)).state
        while awaiting(state):
            state = apply(state, Decide(1, "sim", strategy(state, 1))).state
        assert state.settlement is not None
        net = {r.bet: r.net for r in state.settlement.results}
        for name, kinds in groups.items():
            accumulators[name].add(sum(net.get(k, 0) for k in kinds) / bets[kinds[0]])
    return {name: acc.estimate() for name, acc in accumulators.items()}


def always(*preferred: Decision) -> Strategy:
    """Take the first of `preferred` that is legal (e.g. always FLOP, then CHECK)."""

    def choose(state: RoundState, seat: int) -> Decision:
        legal = {d.decision for d in legal_decisions(state, seat)}
        return next(d for d in preferred if d in legal)

    return choose
