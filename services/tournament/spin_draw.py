"""A Spin's multiplier drawn so that nobody can choose it (NK-6.4, docs/fairness.md section 11).

- When the Spin is created its shoe is committed at the dealer (felt-hmac-sha256-fisher-yates-v2:
  `commit`): the commitment is published with the tournament (Tournament.spin_commitment) before anyone
  registers.
- Each registrant may give a client seed (RegisterRequest.client_seed), after the commitment; a bot or a
  registrant who gave none gets the service's own seed for them (from a per-tournament key, so a retried
  registration deals the same draw).
- At the last seat, one DealHand seals the shoe with the entrants' seeds, makes the labelled draw "spin"
  over 1,000,000 and closes the shoe; Reveal then gives its server seed, and the whole proof is public with
  the tournament (Tournament.spin_proof): the shoe deals no card, so its seed tells nothing else.

If the dealer lost the committed shoe (restarted, or the Spin waited longer than an awaiting shoe lasts),
a fresh one is committed at the draw and the proof says so (`recommitted`): that draw's commitment came
after the seeds, so it rests on the house's word.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Any

import grpc
from poker.table.v1 import fairness_pb2 as fpb
from pokerrules.tournament.spin import CHANCE_SCALE
from servicekit import errors
from servicekit.clients.dealer import DealerClient
from servicekit.errors import details_of

LABEL = "spin"
MAX_CLIENT_SEED_BYTES = 256
# A committed shoe that cannot draw (lost, expired, sealed by a draw whose registration never committed
# with other seeds): a fresh one.
SHOE_GONE = frozenset(
    {"SHOE_NOT_FOUND", "SHOE_EXPIRED", "SHOE_CLOSED", "SHOE_NOT_AWAITING_SEEDS", "REQUEST_ID_REUSED"}
)


def check_seed(value: str) -> str:
    """RegisterRequest.client_seed: empty, or 1-256 bytes of printable text."""
    if value and (len(value.encode("utf-8", "replace")) > MAX_CLIENT_SEED_BYTES or not value.isprintable()):
        raise errors.invalid_argument(
            "client_seed",
            "CLIENT_SEED_INVALID",
            f"a client seed is 1-{MAX_CLIENT_SEED_BYTES} bytes of printable text",
        )
    return value


def commit(dealer: DealerClient, tournament_id: str, now: int, attempt: str = "") -> dict[str, Any]:
    """The Spin's shoe committed now: its id, commitment and when, with the key the service's own seeds
    come from (kept with the tournament, published in the proof)."""
    made = dealer.commit_shoe(f"{tournament_id}:spin-commit{attempt}")
    return {
        "commit": {"shoe_id": str(made.shoe_id), "commitment": str(made.commitment), "published_ms": now},
        "key": secrets.token_hex(16),
        "seeds": {},
    }


def _service_seed(key: str, entry: int) -> str:
    return hmac.new(bytes.fromhex(key), f"entry-{entry}".encode(), hashlib.sha256).hexdigest()[:32]


def draw(dealer: DealerClient, tournament_id: str, spin: dict[str, Any], players: list[str], now: int) -> int:
    """The multiplier's draw in [0, 1,000,000) for the entrants `players` (registration order): one
    DealHand and one Reveal. `spin` (the tournament's data) gets the whole proof."""
    if "key" not in spin:  # a Spin created before its shoe was committed at creation
        spin.update(commit(dealer, tournament_id, now, "-late"), recommitted=True)
    seeds: list[dict[str, Any]] = []
    for k, player in enumerate(players, start=1):
        own = spin["seeds"].get(player)
        seeds.append(
            {
                "contributor": f"entry-{k}",
                "seed": own["seed"] if own else _service_seed(spin["key"], k),
                "player_id": player,
                "from_player": own is not None,
                "given_ms": int(own["given_ms"]) if own else 0,
            }
        )
    pairs = [(str(s["contributor"]), str(s["seed"])) for s in seeds]
    committed = spin["commit"]
    try:
        dealt = dealer.deal_hand(
            committed["shoe_id"], pairs, 0, f"{tournament_id}:spin-deal", ((LABEL, CHANCE_SCALE),)
        )
    except grpc.RpcError as error:
        if details_of(error).reason not in SHOE_GONE:
            raise
        spin.update(commit=commit(dealer, tournament_id, now, "-again")["commit"], recommitted=True)
        committed = spin["commit"]
        dealt = dealer.deal_hand(
            committed["shoe_id"], pairs, 0, f"{tournament_id}:spin-deal-again", ((LABEL, CHANCE_SCALE),)
        )
    value = int(dealt.draws[0].value)
    revealed = dealer.reveal(committed["shoe_id"])
    spin.update(
        shoe_id=committed["shoe_id"],
        draw=value,
        client_seeds=seeds,
        client_seed=str(revealed.client_seed),
        server_seed=str(revealed.server_seed),
        algorithm=str(revealed.algorithm),
        drawn_ms=now,
    )
    return value


def proof(spin: dict[str, Any]) -> fpb.DealProof | None:
    """The drawn Spin's proof (the verifier's input with the tournament's spin_table and multiplier)."""
    if "server_seed" not in spin:
        return None
    committed = spin["commit"]
    return fpb.DealProof(
        shoe_id=str(spin["shoe_id"]),
        algorithm=str(spin["algorithm"]),
        decks=1,
        nonce=0,
        commitment=str(committed["commitment"]),
        committed_ms=int(committed["published_ms"]),
        dealt_ms=int(spin["drawn_ms"]),
        client_seeds=[
            fpb.SeedContribution(
                contributor=s["contributor"],
                seed=s["seed"],
                player_id=s["player_id"],
                from_player=s["from_player"],
                given_ms=s["given_ms"],
            )
            for s in spin["client_seeds"]
        ],
        client_seed=str(spin["client_seed"]),
        server_seed=str(spin["server_seed"]),
        draws=[fpb.ProofDraw(label=LABEL, outcomes=CHANCE_SCALE, value=int(spin["draw"]))],
    )
