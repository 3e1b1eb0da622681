"""A bot's estimate of its share of the pot, from its own cards and the board only.

The opponents' hands are unknown to the bot, so they are sampled uniformly from the cards it has not seen
(its view holds no other hole cards, NK-7.6), and the C evaluator's `handeval.equity` finishes the board
for each sample. Averaging over sampled opponent hands is the equity against a random range.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Sequence
from typing import Any

from pokerrules.cards import DECK_SIZE


def estimate_equity(
    hole: Sequence[int],
    board: Sequence[int],
    opponents: int,
    rng: random.Random,
    samples: int = 32,
    iterations: int = 16,
) -> float:
    """Expected share of the pot (ties split) against `opponents` random hands of the same size."""
    if opponents <= 0:
        return 1.0
    handeval: Any = importlib.import_module("handeval")  # the C extension, loaded on first use
    rule = handeval.Rule.HOLDEM if len(hole) == 2 else handeval.Rule.OMAHA
    seen = set(hole) | set(board)
    unseen = [c for c in range(DECK_SIZE) if c not in seen]
    per = len(hole)
    mine = list(hole)
    board_list = list(board)
    total = 0.0
    for _ in range(samples):
        drawn = rng.sample(unseen, per * opponents)
        hands = [mine] + [drawn[k * per : (k + 1) * per] for k in range(opponents)]
        # seed 0 would mean "random seed" to handeval: always pass a non-zero one, for reproducibility.
        result = handeval.equity(rule, hands, board_list, (), iterations, rng.getrandbits(62) | 1)
        total += result.equities[0]
    return total / samples
