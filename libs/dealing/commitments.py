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

from dealing.cards import CARD_TEXTS
from dealing.keyed import HmacSha256

SALT_BYTES = 16


def seed_commitment(server_seed: bytes) -> str:
    """Hex SHA-256 of the server seed."""
    return hashlib.sha256(server_seed).hexdigest()


def position_salt(server_seed: bytes, position: int) -> bytes:
    """The salt of one position: HMAC-SHA256(server_seed, "salt:{position}") truncated to 16 bytes."""
    return HmacSha256(server_seed).digest(f"salt:{position}".encode())[:SALT_BYTES]


def card_commitment(position: int, card: str, salt: bytes) -> str:
    """Hex SHA-256 of "card:{position}:{card}:{salt_hex}"; `card` is canonical text such as `As`."""
    return hashlib.sha256(f"card:{position}:{card}:{salt.hex()}".encode()).hexdigest()


def card_commitments(server_seed: bytes, order: list[int]) -> list[str]:
    """The per-card commitments of a whole shoe, position 0 first."""
    mac = HmacSha256(server_seed)  # one key schedule for the whole shoe (this runs once per shoe)
    sha256 = hashlib.sha256
    result = []
    for position, code in enumerate(order):
        salt = mac.digest(f"salt:{position}".encode())[:SALT_BYTES]
        result.append(sha256(f"card:{position}:{CARD_TEXTS[code]}:{salt.hex()}".encode()).hexdigest())
    return result
