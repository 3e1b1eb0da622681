"""A finished casino round's proof for one of its players (CasinoService.GetRoundProof, docs/fairness.md
section 11): the commitment, the seeds and the card commitments as ROUND_STARTED published them, the
server seed as SHOE_REVEALED gave it to the player, and the cards the player saw (their own with their
openings, the Dealer's once shown, the board), each at the position the round's deal took it from. The
order is recomputed from the revealed seed only to be published: the player's verifier recomputes it.
"""

from __future__ import annotations

from collections.abc import Sequence

from dealing.cards import CARD_TEXTS
from dealing.client_seeds import ClientSeed, mix_client_seeds
from dealing.shuffle import shoe_order
from handeval.cards import card_text
from poker.table.v1 import casino_service_pb2 as pb
from poker.table.v1 import fairness_pb2 as fpb
from servicekit import errors

from services.table.casino.book import RoundBook
from services.table.casino.convert import contribution_pb
from services.table.casino.store import StoredEvent


def build(
    table_id: str,
    number: int,
    book: RoundBook,
    events: Sequence[StoredEvent],
    viewer: str | None,
    waiting: bool,
) -> pb.GetRoundProofResponse:
    """The proof of round `number` for `viewer` (None: an operator: public cards, no openings).
    `waiting`: its seed may still come (not paid yet, or the dealer was away): PROOF_NOT_READY."""
    started = next((e for e in events if e.kind == "ROUND_STARTED"), None)
    if started is None:
        raise errors.not_found("ROUND_NOT_FOUND", "no round was dealt with that number", round=number)
    data = started.data
    if not data.get("algorithm"):
        raise errors.failed_precondition(
            "PROOF_UNAVAILABLE", "this round was dealt before client seeds: no proof of it", round=number
        )
    mine = [e for e in events if e.seat is not None and e.player_id == viewer and viewer is not None]
    revealed = [e for e in events if e.kind == "SHOE_REVEALED" and (viewer is None or e.player_id == viewer)]
    if not revealed:
        if waiting:
            raise errors.unavailable(
                "PROOF_NOT_READY",
                "the round's seed is revealed when it is paid: retry",
                retry_after_seconds=1.0,
            )
        raise errors.failed_precondition(
            "PROOF_UNAVAILABLE", "the dealer lost this round's shoe before revealing it", round=number
        )
    seed = str(revealed[0].data["server_seed"])
    contributions = list(data.get("client_seeds", ()))
    mixed = mix_client_seeds([ClientSeed(str(c["contributor"]), str(c["seed"])) for c in contributions])
    order = [CARD_TEXTS[c] for c in shoe_order(bytes.fromhex(seed), mixed, number, 1)]
    proof = fpb.DealProof(
        shoe_id=str(data["shoe_id"]),
        algorithm=str(data["algorithm"]),
        decks=1,
        nonce=number,
        commitment=str(data["commitment"]),
        committed_ms=int(data.get("committed_ms", 0)),
        dealt_ms=started.time_ms,
        client_seeds=[contribution_pb(c) for c in contributions],
        client_seed=mixed,
        server_seed=seed,
        order=order,
        dealt_card_commitments=list(data.get("card_commitments", ())),
    )
    deck = list(book.state.deck)  # the round's cards as the table dealt them: position 0 first

    def at(code: int) -> int:
        return deck.index(code) if code in deck else 0

    for event in mine:
        if event.kind == "HOLE_CARDS":
            for opening in event.data.get("openings", ()):
                card = card_text(int(opening["card"]))
                proof.openings.add(position=int(opening["position"]), card=card, salt=str(opening["salt"]))
                proof.cards.add(position=int(opening["position"]), card=card, use=f"hole seat {event.seat}")
    for event in events:
        if event.kind == "DEALER_REVEALED":
            for code in event.data["cards"]:
                proof.cards.add(position=at(int(code)), card=card_text(int(code)), use="dealer")
        elif event.kind == "BOARD":
            street = str(event.data.get("street", "board")).lower()
            for code in event.data["cards"]:
                proof.cards.add(position=at(int(code)), card=card_text(int(code)), use=street)
    return pb.GetRoundProofResponse(table_id=table_id, round=number, proof=proof)
