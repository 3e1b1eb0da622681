"""Labelled draws: a uniform integer from a shoe's seed material, recomputable once the shoe is revealed.

The same randomness that orders a shoe also decides the other chance elements of a hand, each under
its own documented label: the Naiko Carrusel of the hand (label `carrusel`, 3 outcomes) and a Spin's
prize multiplier. Because a draw is a pure function of the shoe's committed seed and public inputs,
anyone holding the revealed shoe recomputes it (docs/fairness.md §9, `verifier.draw_value`).

Specification (`felt-hmac-sha256-draw-v1`):

1. Block k (k = 0, 1, 2, ...) is HMAC-SHA256(key = server_seed,
   message = UTF-8 of f"draw:{label}:{nonce}:{k}:{client_seed}"), nonce and k in decimal: the label
   `draw` separates these blocks from the shuffle's (`shuffle:`) and the salts' (`salt:`), and the draw's
   own label (no `:` in it) separates one draw from another.
2. Each block is read as eight big-endian unsigned 32-bit words, consumed in order.
3. With limit = 2**32 - (2**32 mod outcomes), the value is w mod outcomes for the first word w < limit
   (rejection sampling, as the shuffle's step 2): each of the outcomes is equally likely, no modulo bias.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator

from dealing.errors import InvalidRequest
from dealing.keyed import HmacSha256
from dealing.shuffle import draw_below

DRAW_ALGORITHM = "felt-hmac-sha256-draw-v1"
MAX_LABEL_CHARS = 64
MAX_OUTCOMES = 2**32 - 1  # what a uint32 field carries; the rejection rule works up to 2**32
_LABEL = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_WORDS = struct.Struct(">8I")


def validate_draw(label: str, outcomes: int) -> None:
    """Raise `InvalidRequest` for a label or a number of outcomes a draw cannot be made with."""
    if not _LABEL.fullmatch(label):
        raise InvalidRequest(
            "label",
            f"label is 1 to {MAX_LABEL_CHARS} of a-z 0-9 . _ - (starting with a letter or digit)",
            "LABEL_INVALID",
        )
    if not 1 <= outcomes <= MAX_OUTCOMES:
        raise InvalidRequest("outcomes", f"outcomes must be 1 to {MAX_OUTCOMES}", "OUTCOMES_OUT_OF_RANGE")


def _words(server_seed: bytes, client_seed: str, nonce: int, label: str) -> Iterator[int]:
    mac = HmacSha256(bytes(server_seed))
    prefix = f"draw:{label}:{nonce}:"
    suffix = f":{client_seed}"
    counter = 0
    while True:
        yield from _WORDS.unpack(mac.digest((prefix + str(counter) + suffix).encode("utf-8")))
        counter += 1


def draw_value(server_seed: bytes, client_seed: str, nonce: int, label: str, outcomes: int) -> int:
    """The value in [0, outcomes) that the shoe (server_seed, client_seed, nonce) gives under `label`."""
    if len(server_seed) != 32:
        raise ValueError("server seed must be 32 bytes")
    validate_draw(label, outcomes)
    words = _words(server_seed, client_seed, nonce, label)
    return draw_below(outcomes, words.__next__)
