"""Type stub of the C binding (binding.c)."""

from typing import Any

Buffer = Any

NUM_STRENGTHS: int
NUM_STRENGTHS3: int
TIE_UNIT: int
BATCH_UNKNOWN_CARD: int
BATCH_DUPLICATE_CARD: int
BATCH_BAD_ARGS: int

def strength7(c0: int, c1: int, c2: int, c3: int, c4: int, c5: int, c6: int, /) -> int: ...
def evaluate(rule: int, hole: bytes, board: bytes, /) -> tuple[int, int, bytes]: ...
def category(rule: int, strength: int, /) -> int: ...
def batch(
    rule: int, cards_per_hand: int, packed: Buffer, out_strengths: Buffer, out_categories: Buffer, /
) -> tuple[int, int]: ...
def equity(
    rule: int,
    nhands: int,
    holes: bytes,
    board: bytes,
    dead: bytes,
    iterations: int,
    seed: int,
    exact_limit: int,
    /,
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], int, bool]: ...
def equity_vs_random(
    rule: int, hole: bytes, board: bytes, opponents: int, iterations: int, seed: int, /
) -> tuple[int, int, int, int]: ...
def enumerate7() -> tuple[tuple[int, ...], int, int]: ...
def enumerate5() -> tuple[tuple[int, ...], int, int]: ...
def _register_invalid_hand(cls: type[BaseException], /) -> None: ...
def set_batch_threads(n: int, /) -> int: ...
def _batch_use_baseline(baseline: bool, /) -> bool: ...
