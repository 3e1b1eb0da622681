"""Stand-alone verifier for Felt dealer shoes (felt-hmac-sha256-fisher-yates-v1 and -v2) and the proofs
of hands, casino rounds and Spin draws built from them.

This file imports only the Python standard library: copy it anywhere and run
    python verifier.py revealed_shoe.json
where the JSON holds what the dealer's Reveal returned (snake_case or lowerCamelCase keys):
    {"algorithm": ..., "decks": 1, "server_seed": "<64 hex>", "client_seed": "...", "nonce": 0,
     "commitment": "<64 hex>", "dealt": [{"position": 0, "card": "As"}, ...],
     "card_commitments": ["<64 hex>", ...],          # card_commitments optional
     "draws": [{"label": "carrusel", "outcomes": 3, "value": 1}, ...]}   # draws optional
or, for one card a player received with its salt (no seed needed):
    {"card_commitments": [...], "openings": [{"position": 3, "card": "Td", "salt": "<32 hex>"}]}
A v2 shoe also lists its client seeds, {"client_seeds": [{"contributor": "seat-3", "seed": "..."}, ...]},
mixed into the one client seed its stream reads. A proof (TableService.GetHandProof,
CasinoService.GetRoundProof, a Spin's Tournament.spin_proof: `felt verify` saves them) holds the same
fields plus what its participant saw: "cards" [{"position", "card", "use"}] (each must be the shuffled
card at its position), "openings" with the seed (each salt the seed's, each card the shuffled one),
"dealt_card_commitments" (the commitments published at the deal, position 0 on), "order" (the whole
order, compared with the recomputed one) and, for a Spin, "spin_table" [{"multiplier",
"chance_per_million"}] with "multiplier" (the draw "spin" looked up in the published table).
It prints one line per problem and exits 0 when everything matches, 1 otherwise.

The specification (docs/fairness.md): block k of the stream is HMAC-SHA256(server_seed,
"shuffle:{nonce}:{k}:{client_seed}"), read as eight big-endian 32-bit words; a draw below b rejects
words >= 2**32 - 2**32 % b and returns w % b; Fisher–Yates from the last position down swaps position i
with a draw below i + 1; the shoe starts as decks × (2c 2d 2h 2s 3c ... As). The commitment is
SHA-256(server_seed); the salt of position p is HMAC-SHA256(server_seed, "salt:{p}")[:16], and the
commitment of position p is SHA-256("card:{p}:{card}:{salt hex}"). A labelled draw
(felt-hmac-sha256-draw-v1) under `label` over n outcomes reads the words of the blocks
HMAC-SHA256(server_seed, "draw:{label}:{nonce}:{k}:{client_seed}") and takes the first word w below
2**32 - 2**32 % n: the value is w % n (the Naiko Carrusel of a hand is the draw `carrusel` over 3).
A v2 shoe (felt-hmac-sha256-fisher-yates-v2) is v1 with client_seed = hex SHA-256(b"felt-client-seeds-v2"
followed, for each contribution in order, by the 4-byte big-endian length and the UTF-8 bytes of its
contributor, then the same of its seed).

This is deliberately a second, plain implementation (not the dealer's optimised one), so that a
mistake in either shows up as a disagreement in Felt's tests.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

ALGORITHM = "felt-hmac-sha256-fisher-yates-v1"
ALGORITHM_V2 = "felt-hmac-sha256-fisher-yates-v2"
ALGORITHMS = (ALGORITHM, ALGORITHM_V2)
DRAW_ALGORITHM = "felt-hmac-sha256-draw-v1"
RANKS = "23456789TJQKA"
SUITS = "cdhs"
MAX_DECKS = 8


@dataclass(frozen=True)
class Problem:
    reason: str
    message: str
    position: int = -1  # -1 when the problem is not about one position


@dataclass
class Verification:
    problems: list[Problem] = field(default_factory=list)
    cards_checked: int = 0

    @property
    def valid(self) -> bool:
        return not self.problems


def canonical_card(text: str) -> str | None:
    """`As`-style text of a card, or None if `text` is not a card."""
    text = text.strip()
    if len(text) != 2 or text[0].upper() not in RANKS or text[1].lower() not in SUITS:
        return None
    return text[0].upper() + text[1].lower()


def _words(server_seed: bytes, client_seed: str, nonce: int) -> Iterator[int]:
    counter = 0
    while True:
        message = f"shuffle:{nonce}:{counter}:{client_seed}".encode()
        block = hmac.digest(server_seed, message, "sha256")
        for i in range(0, 32, 4):
            yield int.from_bytes(block[i : i + 4], "big")
        counter += 1


def shoe_order(server_seed: bytes, client_seed: str, nonce: int, decks: int) -> list[str]:
    """Every card of the shoe, as text, in dealing order (position 0 first)."""
    cards = [rank + suit for _ in range(decks) for rank in RANKS for suit in SUITS]
    words = _words(server_seed, client_seed, nonce)
    for i in range(len(cards) - 1, 0, -1):
        bound = i + 1
        limit = 2**32 - 2**32 % bound
        word = next(words)
        while word >= limit:
            word = next(words)
        j = word % bound
        cards[i], cards[j] = cards[j], cards[i]
    return cards


def draw_value(server_seed: bytes, client_seed: str, nonce: int, label: str, outcomes: int) -> int:
    """The labelled draw of a revealed shoe: a value in [0, outcomes), by rejection sampling."""
    if not 1 <= outcomes < 2**32 or not re.fullmatch(r"[a-z0-9][a-z0-9._-]{0,63}", label):
        raise ValueError("a draw needs a label of a-z 0-9 . _ - and 1 to 2**32 - 1 outcomes")
    limit = 2**32 - 2**32 % outcomes
    counter = 0
    while True:
        message = f"draw:{label}:{nonce}:{counter}:{client_seed}".encode()
        block = hmac.digest(server_seed, message, "sha256")
        for i in range(0, 32, 4):
            word = int.from_bytes(block[i : i + 4], "big")
            if word < limit:
                return word % outcomes
        counter += 1


def mix_client_seeds(client_seeds: Iterable[tuple[str, str]]) -> str:
    """The one client seed of a v2 shoe: hex SHA-256 of the label and each (contributor, seed),
    length-prefixed (4 bytes, big-endian) UTF-8."""
    data = b"felt-client-seeds-v2"
    for contributor, seed in client_seeds:
        for text in (contributor.encode("utf-8"), seed.encode("utf-8")):
            data += len(text).to_bytes(4, "big") + text
    return hashlib.sha256(data).hexdigest()


def pick_weighted(value: int, weights: Sequence[int]) -> int:
    """The index whose share of sum(weights) holds `value` (a Spin multiplier from its draw): the first
    index k with value < weights[0] + ... + weights[k]; -1 when the value is past them all."""
    total = 0
    for index, weight in enumerate(weights):
        total += weight
        if value < total:
            return index
    return -1


def seed_commitment(server_seed: bytes) -> str:
    return hashlib.sha256(server_seed).hexdigest()


def position_salt(server_seed: bytes, position: int) -> bytes:
    return hmac.digest(server_seed, f"salt:{position}".encode(), "sha256")[:16]


def card_commitment(position: int, card: str, salt: bytes) -> str:
    return hashlib.sha256(f"card:{position}:{card}:{salt.hex()}".encode()).hexdigest()


def _same_hex(expected: str, given: str) -> bool:
    """Constant-time comparison of hex digests; any text is accepted (non-hex simply does not match)."""
    return hmac.compare_digest(expected.encode(), given.strip().lower().encode("utf-8", "replace"))


def verify_opening(position: int, card: str, salt: bytes, commitment: str) -> bool:
    """True when (position, card, salt) opens `commitment`: a player checking a card they were dealt."""
    canonical = canonical_card(card)
    if canonical is None:
        return False
    return _same_hex(card_commitment(position, canonical, salt), commitment)


def verify_openings(
    card_commitments: Sequence[str], openings: Iterable[tuple[int, str, bytes]]
) -> Verification:
    """Check cards a player saw, each with its salt, against the per-card commitments published earlier."""
    result = Verification()
    for position, card, salt in openings:
        if not 0 <= position < len(card_commitments):
            result.problems.append(
                Problem("POSITION_OUT_OF_RANGE", f"no commitment for position {position}", position)
            )
        elif not verify_opening(position, card, salt, card_commitments[position]):
            result.problems.append(
                Problem("CARD_COMMITMENT_MISMATCH", f"card at position {position} does not open", position)
            )
        result.cards_checked += 1
    return result


def verify_shoe(
    *,
    algorithm: str,
    decks: int,
    server_seed: bytes,
    client_seed: str,
    nonce: int,
    commitment: str,
    dealt: Iterable[tuple[int, str]] = (),
    card_commitments: Sequence[str] = (),
    draws: Iterable[tuple[str, int, int]] = (),
    client_seeds: Sequence[tuple[str, str]] = (),
    openings: Iterable[tuple[int, str, bytes]] = (),
    dealt_card_commitments: Sequence[str] = (),
    published_order: Sequence[str] = (),
) -> Verification:
    """Check a revealed shoe: the seed against its commitment, then every dealt card and per-card
    commitment against the order recomputed from (server_seed, client_seed, nonce), and every labelled
    draw (label, outcomes, value) against its recomputed value. A v2 shoe's client seed is the mix of
    `client_seeds` (a `client_seed` given too must be that mix). Proofs add `openings` (a player's
    cards with their salts: the seed's salts, the shuffled cards, and opening the commitments published
    at the deal, `dealt_card_commitments`, position 0 first) and `published_order` (the whole order as
    published)."""
    result = Verification()
    problems = result.problems
    if algorithm not in ALGORITHMS:
        problems.append(Problem("ALGORITHM_UNSUPPORTED", f"this verifier checks {', '.join(ALGORITHMS)}"))
        return result
    if algorithm == ALGORITHM_V2:
        mixed = mix_client_seeds(client_seeds)
        if client_seed and not _same_hex(mixed, client_seed):
            problems.append(Problem("CLIENT_SEED_MISMATCH", "client_seed is not the mix of client_seeds"))
        client_seed = mixed
    if not 1 <= decks <= MAX_DECKS:
        problems.append(Problem("DECKS_OUT_OF_RANGE", f"decks must be 1 to {MAX_DECKS}"))
        return result
    if len(server_seed) != 32:
        problems.append(Problem("SEED_MALFORMED", "the server seed must be 32 bytes"))
        return result
    if not 0 <= nonce < 2**64:
        problems.append(Problem("NONCE_OUT_OF_RANGE", "the nonce must fit 64 bits"))
        return result
    if not _same_hex(seed_commitment(server_seed), commitment):
        problems.append(Problem("COMMITMENT_MISMATCH", "SHA-256(server_seed) is not the commitment"))
    order = shoe_order(server_seed, client_seed, nonce, decks)
    for position, card in dealt:
        canonical = canonical_card(card)
        if not 0 <= position < len(order):
            problems.append(
                Problem("POSITION_OUT_OF_RANGE", f"the shoe has no position {position}", position)
            )
        elif canonical is None:
            problems.append(Problem("CARD_MALFORMED", f"not a card at position {position}", position))
        elif order[position] != canonical:
            problems.append(
                Problem("CARD_MISMATCH", f"the card at position {position} is not the shuffled one", position)
            )
        result.cards_checked += 1
    if card_commitments:
        if len(card_commitments) != len(order):
            problems.append(Problem("CARD_COMMITMENTS_COUNT", f"expected {len(order)} per-card commitments"))
        for position, (card, published) in enumerate(zip(order, card_commitments, strict=False)):
            expected = card_commitment(position, card, position_salt(server_seed, position))
            if not _same_hex(expected, published):
                problems.append(
                    Problem("CARD_COMMITMENT_MISMATCH", f"position {position} does not match", position)
                )
    for label, outcomes, value in draws:
        try:
            expected_value = draw_value(server_seed, client_seed, nonce, label, outcomes)
        except ValueError:
            problems.append(Problem("DRAW_MALFORMED", f"cannot recompute the draw {label[:64]!r}"))
            continue
        if expected_value != value:
            problems.append(Problem("DRAW_MISMATCH", f"the draw {label!r} is not the seed's"))
    if len(dealt_card_commitments) > len(order):
        problems.append(Problem("CARD_COMMITMENTS_COUNT", "more commitments than positions"))
    for position, published in enumerate(dealt_card_commitments[: len(order)]):
        card = order[position]
        if not _same_hex(card_commitment(position, card, position_salt(server_seed, position)), published):
            problems.append(
                Problem("CARD_COMMITMENT_MISMATCH", f"position {position} does not match", position)
            )
    for position, card, salt in openings:
        result.cards_checked += 1
        if not 0 <= position < len(order):
            problems.append(
                Problem("POSITION_OUT_OF_RANGE", f"the shoe has no position {position}", position)
            )
            continue
        if canonical_card(card) != order[position]:
            problems.append(
                Problem("CARD_MISMATCH", f"the card at position {position} is not the shuffled one", position)
            )
        if not hmac.compare_digest(salt, position_salt(server_seed, position)):
            problems.append(
                Problem("SALT_MISMATCH", f"the salt of position {position} is not the seed's", position)
            )
        if position < len(dealt_card_commitments) and not verify_opening(
            position, card, salt, dealt_card_commitments[position]
        ):
            problems.append(
                Problem("CARD_COMMITMENT_MISMATCH", f"card at position {position} does not open", position)
            )
    if published_order and [canonical_card(c) for c in published_order] != order:
        problems.append(Problem("ORDER_MISMATCH", "the published order is not the recomputed one"))
    return result


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def _normalise(value: Any) -> Any:
    if isinstance(value, dict):
        return {_snake(k): _normalise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalise(v) for v in value]
    return value


def verify_document(document: dict[str, Any]) -> Verification:
    """Verify a JSON document as described in the module docstring; a malformed one is a problem."""
    try:
        return _verify_document(document)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        return Verification([Problem("DOCUMENT_MALFORMED", f"cannot read the document: {exc!r}")])


def _verify_document(document: dict[str, Any]) -> Verification:
    doc: dict[str, Any] = _normalise(document)
    commitments = [str(c) for c in doc.get("card_commitments", [])]
    openings = [
        (int(o.get("position", 0)), str(o["card"]), bytes.fromhex(str(o["salt"])))
        for o in doc.get("openings", [])
    ]
    if openings and not doc.get("server_seed"):
        return verify_openings(commitments, openings)
    dealt = [(int(d.get("position", 0)), str(d["card"])) for d in doc.get("dealt", [])]
    dealt += [(int(d.get("position", 0)), str(d["card"])) for d in doc.get("cards", [])]
    draws = [(str(d["label"]), int(d["outcomes"]), int(d.get("value", 0))) for d in doc.get("draws", [])]
    result = verify_shoe(
        algorithm=str(doc.get("algorithm", "")),
        decks=int(doc.get("decks", 0)),
        server_seed=bytes.fromhex(str(doc.get("server_seed", ""))),
        client_seed=str(doc.get("client_seed", "")),
        nonce=int(doc.get("nonce", 0)),
        commitment=str(doc.get("commitment", "")),
        dealt=dealt,
        card_commitments=commitments,
        draws=draws,
        client_seeds=[(str(c["contributor"]), str(c.get("seed", ""))) for c in doc.get("client_seeds", [])],
        openings=openings,
        dealt_card_commitments=[str(c) for c in doc.get("dealt_card_commitments", [])],
        published_order=[str(c) for c in doc.get("order", [])],
    )
    if "spin_table" in doc:
        weights = [int(m.get("chance_per_million", 0)) for m in doc["spin_table"]]
        spin = next((value for label, _, value in draws if label == "spin"), -1)
        index = pick_weighted(spin, weights) if spin >= 0 else -1
        if index < 0 or int(doc["spin_table"][index].get("multiplier", 0)) != int(doc.get("multiplier", 0)):
            result.problems.append(
                Problem("MULTIPLIER_MISMATCH", "the multiplier is not the published table's for the draw")
            )
    return result


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python verifier.py SHOE.json  (use - for standard input)", file=sys.stderr)
        return 2
    with open(args[0] if args[0] != "-" else 0, encoding="utf-8") as handle:
        document = json.load(handle)
    result = verify_document(document)
    for problem in result.problems:
        where = f" position {problem.position}" if problem.position >= 0 else ""
        print(f"FAIL {problem.reason}{where}: {problem.message}")
    if result.valid:
        draws = len(document.get("draws", [])) if isinstance(document, dict) else 0
        extra = f" and {draws} draw(s)" if draws else ""
        print(f"OK: commitment and {result.cards_checked} card(s){extra} verified")
    return 0 if result.valid else 1


if __name__ == "__main__":
    sys.exit(main())
