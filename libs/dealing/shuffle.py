"""The shuffle: an HMAC-SHA256 word stream drives Fisher–Yates with rejection sampling.

Specification (`felt-hmac-sha256-fisher-yates-v1`, also in docs/fairness.md with test vectors):

1. Block k (k = 0, 1, 2, ...) of the stream is HMAC-SHA256(key = server_seed,
   message = UTF-8 of f"shuffle:{nonce}:{k}:{client_seed}"), nonce and k in decimal.
   Each block is read as eight big-endian unsigned 32-bit words, consumed in order.
2. A draw below `bound` takes words w until w < limit, where limit = 2**32 - (2**32 mod bound) is the
   largest multiple of bound not above 2**32, and returns w mod bound. Rejected words are discarded, so
   every value in [0, bound) comes from exactly limit / bound words: no modulo bias.
3. Fisher–Yates (Durstenfeld): the shoe starts as positions 0..N-1 holding cards p mod 52 (N = 52 × decks,
   deck after deck, each deck 2c 2d 2h 2s 3c ... As); for i from N-1 down to 1, j = draw below i + 1,
   swap the cards at i and j. Position 0 is dealt first.

Nothing here reads a clock, the environment or a global generator: the order is a pure function of
(server_seed, client_seed, nonce, decks).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator

from dealing.cards import DECK_SIZE
from dealing.keyed import HmacSha256

ALGORITHM = "felt-hmac-sha256-fisher-yates-v1"
WORD_BITS = 32
_WORDS_PER_BLOCK = struct.Struct(">8I")


def accept_word(word: int, bound: int, word_bits: int = WORD_BITS) -> int | None:
    """The value in [0, bound) that `word` (of `word_bits` bits) maps to, or None if it is rejected."""
    span = 1 << word_bits
    limit = span - span % bound
    return word % bound if word < limit else None


class WordStream:
    """The 32-bit words of HMAC-SHA256(server_seed, "shuffle:{nonce}:{k}:{client_seed}"), k = 0, 1, ..."""

    __slots__ = ("_blocks", "_words")

    def __init__(self, server_seed: bytes, client_seed: str, nonce: int) -> None:
        self._blocks = _blocks(server_seed, client_seed, nonce)
        self._words: Iterator[int] = iter(())

    def next_word(self) -> int:
        for word in self._words:
            return word
        self._words = iter(_WORDS_PER_BLOCK.unpack(next(self._blocks)))
        return next(self._words)


def _blocks(server_seed: bytes, client_seed: str, nonce: int) -> Iterator[bytes]:
    mac = HmacSha256(bytes(server_seed))
    prefix = f"shuffle:{nonce}:"
    suffix = f":{client_seed}"
    counter = 0
    while True:
        yield mac.digest((prefix + str(counter) + suffix).encode("utf-8"))
        counter += 1


def draw_below(bound: int, next_word: Callable[[], int]) -> int:
    """A uniform integer in [0, bound) from 32-bit words, by rejection (step 2 of the specification)."""
    limit = (1 << WORD_BITS) - (1 << WORD_BITS) % bound
    while True:
        word = next_word()
        if word < limit:
            return word % bound


def permutation(size: int, next_word: Callable[[], int]) -> list[int]:
    """Fisher–Yates over 0..size-1 (step 3): the item at each position, position 0 first."""
    items = list(range(size))
    for i in range(size - 1, 0, -1):
        j = draw_below(i + 1, next_word)
        items[i], items[j] = items[j], items[i]
    return items


def shoe_order(server_seed: bytes, client_seed: str, nonce: int, decks: int) -> list[int]:
    """The card codes of a shoe of `decks` decks, in dealing order."""
    if len(server_seed) != 32:
        raise ValueError("server seed must be 32 bytes")
    if nonce < 0:
        raise ValueError("nonce must be non-negative")
    stream = WordStream(server_seed, client_seed, nonce)
    return [item % DECK_SIZE for item in permutation(DECK_SIZE * decks, stream.next_word)]
