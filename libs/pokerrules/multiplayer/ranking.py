"""Hand strength for showdown, from the C evaluator `handeval` (NK-1.3 Hold'em, NK-1.4 Omaha)."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from pokerrules.multiplayer.config import Variant
from pokerrules.multiplayer.state import Ranker


def ranker_for(variant: Variant) -> Ranker:
    """The evaluator-backed ranker: Hold'em uses any of the 7 cards, Omaha exactly two hole + three board."""
    # Imported here so the pure engine loads without the C extension.
    handeval: Any = importlib.import_module("handeval")

    if variant is Variant.HOLDEM:
        strength7 = handeval.strength7

        def rank_holdem(hole: Sequence[int], board: Sequence[int]) -> int:
            return int(strength7(hole[0], hole[1], board[0], board[1], board[2], board[3], board[4]))

        return rank_holdem

    evaluate = handeval.evaluate
    omaha = handeval.Rule.OMAHA

    def rank_omaha(hole: Sequence[int], board: Sequence[int]) -> int:
        return int(evaluate(omaha, hole, board).strength)

    return rank_omaha
