"""A finished hand's proof for one participant (TableService.GetHandProof, docs/fairness.md section 11),
from the table's stored events alone: what was published at the deal (commitment, seeds, per-card
commitments), what the participant received privately (their openings, the revealed seed), and what
everybody saw (board, shown cards, the Carrusel), each card at its position in the shoe by the deal's
layout. The order is recomputed from the revealed seed here only to be published with the proof: the
participant's verifier recomputes it on its own and compares.

A player gets the public cards and their own: never another seat's opening or hole cards they did not
see at a showdown (the seed lets them recompute the deck, which is the point of revealing it after the
hand, to them alone). An operator (an auditor) gets the public cards and no openings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from dealing.cards import CARD_TEXTS
from dealing.client_seeds import ClientSeed, mix_client_seeds
from dealing.shuffle import shoe_order
from poker.table.v1 import fairness_pb2 as fpb
from poker.table.v1 import table_service_pb2 as pb
from pokerrules.naiko import CARRUSEL_LABEL, CARRUSEL_OUTCOMES
from servicekit import errors

from services.table.poker.store import StoredEvent

STREET_NAMES: dict[int, str] = {pb.STREET_FLOP: "flop", pb.STREET_TURN: "turn", pb.STREET_RIVER: "river"}
_SWAP = pb.POWER_TUKAR_LENGAN_BAJU


@dataclass
class _Hand:
    """What the stored events of one hand tell, as far as the viewer may know."""

    started: pb.HandStarted | None = None
    dealt_ms: int = 0
    server_seed: str = ""
    own: list[pb.HoleCardsDealt] = field(default_factory=list)
    received: list[pb.HoleCardSwapped] = field(default_factory=list)
    board: list[tuple[int, str]] = field(default_factory=list)  # (street, card)
    shown: list[pb.CardsShown] = field(default_factory=list)
    swaps: list[int] = field(default_factory=list)  # the seats that swapped, in order (public)
    carrusel: int | None = None


def _read(stored: Sequence[StoredEvent], viewer: str | None) -> _Hand:
    hand = _Hand()
    for row in stored:
        mine = row.private_player is not None and row.private_player == viewer
        if row.private_player is not None and not mine and viewer is not None:
            continue
        e = pb.TableEvent.FromString(row.body)
        which = e.WhichOneof("event")
        if which == "hand_started":
            hand.started, hand.dealt_ms = e.hand_started, e.time_ms
        elif which == "shoe_revealed":
            hand.server_seed = hand.server_seed or e.shoe_revealed.server_seed
        elif row.private_player is not None and viewer is None:
            continue  # an auditor: no private cards
        elif which == "hole_cards_dealt":
            hand.own.append(e.hole_cards_dealt)
        elif which == "hole_card_swapped":
            hand.received.append(e.hole_card_swapped)
        elif which == "board_dealt":
            hand.board += [(e.board_dealt.street, card) for card in e.board_dealt.cards]
        elif which == "cards_shown":
            hand.shown.append(e.cards_shown)
        elif which == "power_used" and e.power_used.power == _SWAP:
            hand.swaps.append(e.power_used.seat)
        elif which == "carrusel_drawn":
            hand.carrusel = e.carrusel_drawn.draw
    return hand


def _layout(started: pb.HandStarted, hole_cards: int, swaps: int) -> tuple[dict[int, list[int]], list[int]]:
    """The deal's positions (docs/fairness.md section 11): hole cards one at a time clockwise from the seat
    left of the button (n seats × h cards), then the flop's burn; a Tukar Lengan Baju takes the card after
    that burn, so the j-th swap's card is at n·h + 1 + j and the board moves up by the number of swaps s:
    flop n·h+s+1..3, burn, turn n·h+s+5, burn, river n·h+s+7. (seat -> its hole positions, the five
    board positions)."""
    seats = sorted(s.seat for s in started.stacks)
    n = len(seats)
    b = seats.index(started.button) if started.button in seats else n - 1
    holes = {seats[(b + 1 + k) % n]: [k + r * n for r in range(hole_cards)] for k in range(n)}
    base = n * hole_cards + swaps
    return holes, [base + 1, base + 2, base + 3, base + 5, base + 7]


def build(
    table_id: str,
    hand_number: int,
    stored: Sequence[StoredEvent],
    viewer: str | None,
    your_seat: int,
    hole_cards: int,
    waiting: bool,
) -> pb.GetHandProofResponse:
    """The proof of finished hand `hand_number` for `viewer` (None: an operator). `waiting`: its seed is
    still to be revealed (the table's last hand): PROOF_NOT_READY rather than PROOF_UNAVAILABLE."""
    hand = _read(stored, viewer)
    started = hand.started
    if started is None or not started.algorithm:
        raise errors.failed_precondition(
            "PROOF_UNAVAILABLE",
            "this hand was dealt before client seeds: no proof of it",
            hand_number=hand_number,
        )
    if not hand.server_seed:
        if waiting:
            raise errors.unavailable(
                "PROOF_NOT_READY",
                "the hand's seed is revealed with the next deal, or a second after the hand: retry",
                retry_after_seconds=1.0,
            )
        raise errors.failed_precondition(
            "PROOF_UNAVAILABLE",
            "the dealer lost this hand's shoe before revealing it",
            hand_number=hand_number,
        )
    seeds = [ClientSeed(s.contributor, s.seed) for s in started.client_seeds]
    mixed = mix_client_seeds(seeds)
    order = [CARD_TEXTS[c] for c in shoe_order(bytes.fromhex(hand.server_seed), mixed, hand_number, 1)]
    proof = fpb.DealProof(
        shoe_id=started.shoe_id,
        algorithm=started.algorithm,
        decks=1,
        nonce=hand_number,
        commitment=started.commitment,
        committed_ms=started.committed_ms,
        dealt_ms=hand.dealt_ms,
        client_seeds=started.client_seeds,
        client_seed=mixed,
        server_seed=hand.server_seed,
        order=order,
        dealt_card_commitments=started.card_commitments,
    )
    holes, board = _layout(started, hole_cards, len(hand.swaps))
    for dealt in hand.own:
        for opening in dealt.openings:
            proof.openings.append(opening)
            proof.cards.add(position=opening.position, card=opening.card, use=f"hole seat {dealt.seat}")
    for swapped in hand.received:
        if swapped.HasField("received_opening"):
            opening = swapped.received_opening
            proof.openings.append(opening)
            proof.cards.add(position=opening.position, card=opening.card, use=f"swap seat {swapped.seat}")
    streets: dict[int, int] = {pb.STREET_FLOP: 0, pb.STREET_TURN: 3, pb.STREET_RIVER: 4}
    counts: dict[int, int] = {}
    for street, card in hand.board:
        k = streets.get(street, 0) + counts.get(street, 0)
        counts[street] = counts.get(street, 0) + 1
        proof.cards.add(position=board[k], card=card, use=STREET_NAMES.get(street, "board"))
    base = len(holes) * hole_cards
    for shown in hand.shown:
        if shown.seat == your_seat:
            continue  # the caller's own cards are listed with their openings
        places = holes.get(shown.seat, [])
        swapped_at = [base + 1 + j for j, seat in enumerate(hand.swaps) if seat == shown.seat]
        for card in shown.cards:
            # A shown card is at one of the seat's hole positions, or (Tukar Lengan Baju) at its swap's.
            at = next((p for p in places if order[p] == card), swapped_at[0] if swapped_at else places[0])
            proof.cards.add(position=at, card=card, use=f"shown seat {shown.seat}")
    if hand.carrusel is not None:
        proof.draws.add(label=CARRUSEL_LABEL, outcomes=CARRUSEL_OUTCOMES, value=hand.carrusel)
    return pb.GetHandProofResponse(
        table_id=table_id, hand_number=hand_number, your_seat=your_seat, proof=proof
    )
