"""The dealer's pure core: seeds, the provably fair shuffle, commitments and the shoe state machine.

No network, no storage, no `random`: see docs/fairness.md for the algorithm and its test vectors.
`dealing.verifier` is the stand-alone verifier third parties copy (standard library only).
"""

from dealing.book import BookSettings, ShoeBook
from dealing.draws import DRAW_ALGORITHM, draw_value
from dealing.errors import (
    DealingError,
    DrawRefused,
    EntropyUnavailable,
    InvalidRequest,
    RequestConflict,
    ShoeClosed,
    ShoeExhausted,
    ShoeNotFound,
    ShoeStillOpen,
    TooManyShoes,
)
from dealing.seeds import DeterministicSeedSource, SeedSource, SystemSeedSource
from dealing.shoe import Consumption, DealtCard, Draw, PeekedCard, Revelation, Shoe, ShoeState
from dealing.shuffle import ALGORITHM, shoe_order

__all__ = [
    "ALGORITHM",
    "DRAW_ALGORITHM",
    "BookSettings",
    "Consumption",
    "DealingError",
    "DealtCard",
    "DeterministicSeedSource",
    "Draw",
    "DrawRefused",
    "EntropyUnavailable",
    "InvalidRequest",
    "PeekedCard",
    "RequestConflict",
    "Revelation",
    "SeedSource",
    "Shoe",
    "ShoeBook",
    "ShoeClosed",
    "ShoeExhausted",
    "ShoeNotFound",
    "ShoeState",
    "ShoeStillOpen",
    "SystemSeedSource",
    "TooManyShoes",
    "draw_value",
    "shoe_order",
]
