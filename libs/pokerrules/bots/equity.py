"""A bot's estimate of its share of the pot, from its own cards and the board only.

The opponents' hands are unknown to the bot, so they are dealt uniformly from the cards it has not seen
(its view holds no other hole cards, NK-7.6) together with the rest of the board: the equity against a
random range. The whole Monte Carlo runs in one call of the C evaluator (`handeval.equity_vs_random`),
with the GIL released, so a decision costs the table service little Python time.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Sequence
from typing import Any


def estimate_equity(
    hole: Sequence[int],
    board: Sequence[int],
    opponents: int,
    rng: random.Random,
    samples: int = 32,
    iterations: int = 16,
) -> float:
    """Expected share of the pot (ties split) against `opponents` random hands of the same size, over
    `samples × iterations` random deals (opponents' hands and the rest of the board each time)."""
    if opponents <= 0:
        return 1.0
    handeval: Any = importlib.import_module("handeval")  # the C extension, loaded on first use
    rule = handeval.Rule.HOLDEM if len(hole) == 2 else handeval.Rule.OMAHA
    # seed 0 would mean "random seed" to handeval: always pass a non-zero one, for reproducibility.
    seed = rng.getrandbits(62) | 1
    return float(handeval.equity_vs_random(rule, hole, board, opponents, samples * iterations, seed))
