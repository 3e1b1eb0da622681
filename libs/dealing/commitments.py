"""Commitments published before the first card, and the openings that check them afterwards.

- Shoe commitment: hex SHA-256(server_seed). Revealing the seed after the shoe is closed lets anyone
  recompute the whole order (shuffle.py) and check it against every card that was dealt.
- Per-card commitments: position p is committed as hex SHA-256(UTF-8 of f"card:{p}:{card}:{salt_hex}"),
  with salt_p = the first 16 bytes of HMAC-SHA256(server_seed, f"salt:{p}"). A salt is handed out with
  its card when the card is dealt, so the player who received it can check that one card against the list
  published at creation, without the seed and without learning any other card. The salts are derived from
  the seed (HMAC is a PRF: one salt tells nothing about another), so the auditor who later receives the
  seed checks every per-card commitment too, and the dealer stores nothing more than the seed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from dealing.cards import CARD_TEXTS, DECK_SIZE, MAX_DECKS
from dealing.keyed import HmacSha256

SALT_BYTES = 16


def seed_commitment(server_seed: bytes) -> str:
    """Hex SHA-256 of the server seed."""
    return hashlib.sha256(server_seed).hexdigest()


def position_salt(server_seed: bytes, position: int) -> bytes:
    """The salt of one position: HMAC-SHA256(server_seed, "salt:{position}") truncated to 16 bytes."""
    return PositionSalts(server_seed).salt(position)


class PositionSalts:
    """The salts of one shoe, sharing one HMAC key schedule (for dealing many cards at once)."""

    __slots__ = ("_mac",)

    def __init__(self, server_seed: bytes) -> None:
        self._mac = HmacSha256(server_seed)

    def salt(self, position: int) -> bytes:
        return self._mac.digest(_salt_message(position))[:SALT_BYTES]

    def salts(self, positions: Iterable[int]) -> list[bytes]:
        return [mac[:SALT_BYTES] for mac in self._mac.digests(_salt_message(p) for p in positions)]


_SALT_MESSAGES = tuple(f"salt:{p}".encode() for p in range(DECK_SIZE * MAX_DECKS))


def _salt_message(position: int) -> bytes:
    if 0 <= position < len(_SALT_MESSAGES):
        return _SALT_MESSAGES[position]
    return f"salt:{position}".encode()


def card_commitment(position: int, card: str, salt: bytes) -> str:
    """Hex SHA-256 of "card:{position}:{card}:{salt_hex}"; `card` is canonical text such as `As`."""
    return hashlib.sha256(f"card:{position}:{card}:{salt.hex()}".encode()).hexdigest()


def card_commitments(server_seed: bytes, order: list[int]) -> list[str]:
    """The per-card commitments of a whole shoe, position 0 first."""
    salts = PositionSalts(server_seed).salts(range(len(order)))  # one key schedule for the whole shoe
    sha256 = hashlib.sha256
    return [
        sha256(f"card:{position}:{CARD_TEXTS[code]}:{salt.hex()}".encode()).hexdigest()
        for position, code, salt in zip(range(len(order)), order, salts, strict=True)
    ]
