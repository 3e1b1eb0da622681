"""Client seeds given after the server seed was committed, mixed into one (felt-hmac-sha256-fisher-yates-v2).

A v1 shoe takes its client seed in the same call that draws and commits the server seed, so the seed
shows that a draw matches the commitment, never that the house did not pick the seed. A v2 shoe is
committed first (`CreateShoe` with `await_client_seeds`) and shuffled only when its client seeds arrive
(`DealHand`): one per participant (a player's own, or the table's fresh random one for a player who gave
none), each chosen after the commitment was published. Neither the house (its seed is fixed before it
sees theirs) nor a player (the server seed is secret until after the hand) can choose the order.

Specification (docs/fairness.md section 10): the contributions, in the order given, are mixed into the
one client seed the v1 stream reads,

    mixed = hex(SHA-256(b"felt-client-seeds-v2" || for each (contributor, seed):
                        u32be(len(c)) || c || u32be(len(s)) || s))

with c and s the UTF-8 bytes of the contributor's name and of its seed. The length prefixes make the
encoding unambiguous whatever the texts hold. The order, the per-card salts and commitments and the
labelled draws are then exactly v1's with `client_seed = mixed`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from dealing.errors import InvalidRequest

ALGORITHM_V2 = "felt-hmac-sha256-fisher-yates-v2"
MIX_LABEL = b"felt-client-seeds-v2"
MAX_CLIENT_SEEDS = 32  # a table seats 10, a casino table 7, a Spin 3: room to spare
MAX_CONTRIBUTOR_BYTES = 128
MAX_SEED_BYTES = 256


@dataclass(frozen=True, slots=True)
class ClientSeed:
    """One participant's contribution: who gave it (a public name such as "seat-3") and the seed."""

    contributor: str
    seed: str


def _text(value: str, field: str, limit: int, reason: str) -> bytes:
    """The UTF-8 bytes of a contributor or seed: 1 to `limit` bytes of printable text (no NUL, no line
    breaks: it is shown to players and written in proofs)."""
    try:
        encoded = value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidRequest(field, f"{field} must be valid Unicode", reason) from None
    if not 0 < len(encoded) <= limit or not value.isprintable():
        raise InvalidRequest(field, f"{field} is 1 to {limit} bytes of printable text", reason)
    return encoded


def validate_client_seeds(seeds: Sequence[ClientSeed], field: str = "client_seeds") -> None:
    """Raise `InvalidRequest` (naming the field) for contributions a v2 shoe cannot be shuffled with."""
    if len(seeds) > MAX_CLIENT_SEEDS:
        raise InvalidRequest(field, f"at most {MAX_CLIENT_SEEDS} client seeds", "TOO_MANY_CLIENT_SEEDS")
    names = set()
    for k, given in enumerate(seeds):
        _text(given.contributor, f"{field}[{k}].contributor", MAX_CONTRIBUTOR_BYTES, "CONTRIBUTOR_INVALID")
        _text(given.seed, f"{field}[{k}].seed", MAX_SEED_BYTES, "CLIENT_SEED_INVALID")
        if given.contributor in names:
            raise InvalidRequest(
                f"{field}[{k}].contributor", "each contributor gives one seed", "CONTRIBUTOR_REPEATED"
            )
        names.add(given.contributor)


def mix_client_seeds(seeds: Iterable[ClientSeed]) -> str:
    """The client seed a v2 shoe's stream reads: hex SHA-256 of the length-prefixed contributions."""
    digest = hashlib.sha256(MIX_LABEL)
    for given in seeds:
        for text in (given.contributor, given.seed):
            encoded = text.encode("utf-8")
            digest.update(len(encoded).to_bytes(4, "big"))
            digest.update(encoded)
    return digest.hexdigest()
