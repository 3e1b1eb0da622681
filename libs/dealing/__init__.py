"""The dealer's pure core: seeds, the provably fair shuffle, commitments and the shoe state machine.

No network, no storage, no `random`: see docs/fairness.md for the algorithm and its test vectors.
`dealing.verifier` is the stand-alone verifier third parties copy (standard library only).
"""

from dealing.book import BookSettings, HandResult, NewShoe, ShoeBook
from dealing.client_seeds import ALGORITHM_V2, ClientSeed, mix_client_seeds
from dealing.draws import DRAW_ALGORITHM, draw_value
from dealing.errors import (
    DealingError,
    DrawRefused,
    EntropyUnavailable,
    InvalidRequest,
    RequestConflict,
    ShoeAwaitingSeeds,
    ShoeClosed,
    ShoeExhausted,
    ShoeNotAwaitingSeeds,
    ShoeNotFound,
    ShoeStillOpen,
    TooManyShoes,
)
from dealing.seeds import DeterministicSeedSource, SeedSource, SystemSeedSource
from dealing.shoe import Consumption, DealtCard, Draw, HandDeal, PeekedCard, Revelation, Shoe, ShoeState
from dealing.shuffle import ALGORITHM, shoe_order

__all__ = [
    "ALGORITHM",
    "ALGORITHM_V2",
    "DRAW_ALGORITHM",
    "BookSettings",
    "ClientSeed",
    "Consumption",
    "DealingError",
    "DealtCard",
    "DeterministicSeedSource",
    "Draw",
    "DrawRefused",
    "EntropyUnavailable",
    "HandDeal",
    "HandResult",
    "InvalidRequest",
    "NewShoe",
    "PeekedCard",
    "RequestConflict",
    "Revelation",
    "SeedSource",
    "Shoe",
    "ShoeAwaitingSeeds",
    "ShoeBook",
    "ShoeClosed",
    "ShoeExhausted",
    "ShoeNotAwaitingSeeds",
    "ShoeNotFound",
    "ShoeState",
    "ShoeStillOpen",
    "SystemSeedSource",
    "TooManyShoes",
    "draw_value",
    "mix_client_seeds",
    "shoe_order",
]
