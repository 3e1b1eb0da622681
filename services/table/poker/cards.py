"""Cards from the dealer: one shoe per hand, with request ids from (table, hand), so a retry or a restart
gets the same shoe and the same cards. Only what the hand can need is dealt (hole cards, three burns, the
board, and one spare per player in Naiko mode for a swap); the cards stay in memory and are never logged.
A Naiko hand's Carrusel is the shoe's labelled draw `carrusel` over 3 outcomes (docs/fairness.md section
9), made in the same call: public once the hand starts, it is logged.

Deals nobody can choose (docs/fairness.md section 11): a hand's shoe is committed before its client seeds
are collected (`commit`, or the previous hand's deal), and dealt by one dealer call per hand (`deal`:
DealHand), which seals it with every seated player's seed, deals, draws, closes it, commits the next
hand's shoe and reveals the previous hand's. `reveal` is for the last hand when no hand follows soon.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace

import grpc
from handeval.cards import parse_card
from poker.dealer.v1 import dealer_service_pb2 as dpb
from pokerrules.naiko import CARRUSEL_LABEL, CARRUSEL_OUTCOMES
from pokerrules.table import commands as c
from pokerrules.table.fairness import Commitment, Contribution, Unrevealed
from servicekit.clients.dealer import DealerClient
from servicekit.errors import details_of

# The dealer answers these when a committed shoe cannot deal any more (lost in a restart, expired, or
# sealed by a deal whose answer the table never recorded): the table commits a fresh one.
SHOE_GONE = frozenset(
    {"SHOE_NOT_FOUND", "SHOE_EXPIRED", "SHOE_CLOSED", "SHOE_NOT_AWAITING_SEEDS", "REQUEST_ID_REUSED"}
)


@dataclass(frozen=True)
class HandShoe:
    """A hand's shoe as the table deals it: the cards (positions 0 on) and, for a hand dealt with client
    seeds, their salts and published commitments, the seeds, and what the same dealer call did besides
    (the next hand's commitment, the previous hand's revelation)."""

    shoe_id: str
    commitment: str
    cards: tuple[int, ...]
    carrusel: int | None = None  # Naiko: the shoe's `carrusel` draw (0, 1 or 2)
    algorithm: str = ""
    salts: tuple[str, ...] = ()  # hex, position 0 first
    card_commitments: tuple[str, ...] = ()  # of the dealt positions, position 0 first
    contributions: tuple[Contribution, ...] = ()
    committed_ms: int = 0
    next_shoe_id: str = ""
    next_commitment: str = ""
    revealed: tuple[int, str, str] | None = None  # (hand, shoe id, server seed hex; "" when lost)

    def command(self) -> c.StartHand:
        """The StartHand that deals this shoe (what the table logs: no card, no salt)."""
        hand, shoe_id, seed = self.revealed or (0, "", "")
        return c.StartHand(
            self.shoe_id,
            len(self.cards),
            self.carrusel,
            tuple(x.as_tuple() for x in self.contributions),
            self.next_shoe_id,
            self.next_commitment,
            hand,
            shoe_id,
            seed,
        )

    def opening(self, code: int) -> tuple[int, str] | None:
        """(position, salt) of a dealt card (one deck: a card is at one position), None without salts."""
        if not self.salts or code not in self.cards:
            return None
        position = self.cards.index(code)
        return position, self.salts[position]


def cards_needed(players: int, hole_cards: int, spares: bool) -> int:
    return players * hole_cards + 8 + (players if spares else 0)


def table_seed() -> str:
    """The table's fresh random seed for a seated player who gave none (128 bits, hex)."""
    return secrets.token_hex(16)


def gone(error: grpc.RpcError) -> bool:
    """Whether a dealer refusal means the committed shoe cannot deal this hand (commit a fresh one)."""
    return details_of(error).reason in SHOE_GONE


class Dealer:
    def __init__(self, channel: grpc.Channel, seeds: Callable[[], str] = table_seed) -> None:
        """`seeds`: the table's own client seeds for players who give none (the OS CSPRNG; a
        deterministic source in the simulation, which replays a run byte for byte)."""
        self._dealer = DealerClient(channel)
        self.table_seed = seeds

    def commit(self, table_id: str, hand: int, attempt: int) -> tuple[str, str]:
        """A fresh shoe committed for `hand` (the first hand, or after the committed one was lost):
        (shoe id, commitment). `attempt` keeps each fresh commitment's request id apart."""
        made = self._dealer.commit_shoe(f"pt-{table_id}-h{hand}-commit{attempt}", nonce=hand)
        return str(made.shoe_id), str(made.commitment)

    def deal(
        self,
        table_id: str,
        hand: int,
        commitment: Commitment,
        contributions: tuple[Contribution, ...],
        count: int,
        naiko: bool,
        unrevealed: Unrevealed | None,
    ) -> HandShoe:
        """Hand `hand` from its committed shoe: one DealHand (sealed with `contributions`, `count` cards,
        the Carrusel for Naiko, the next hand's shoe committed, `unrevealed`'s shoe revealed)."""
        base = f"pt-{table_id}-h{hand}"
        following = dpb.CreateShoeRequest(
            request_id=f"pt-{table_id}-h{hand + 1}-next", decks=1, nonce=hand + 1, await_client_seeds=True
        )
        dealt = self._dealer.deal_hand(
            commitment.shoe_id,
            [(x.contributor, x.seed) for x in contributions],
            count,
            request_id=f"{base}-deal",
            draws=((CARRUSEL_LABEL, CARRUSEL_OUTCOMES),) if naiko else (),
            next_shoe=following,
            reveal_shoe_id=unrevealed.shoe_id if unrevealed is not None else "",
        )
        revealed = None
        if unrevealed is not None:
            seed = dealt.revealed.server_seed if dealt.HasField("revealed") else ""
            revealed = (unrevealed.hand, unrevealed.shoe_id, str(seed))
        carrusel = next((int(d.value) for d in dealt.draws if d.label == CARRUSEL_LABEL), None)
        return HandShoe(
            shoe_id=commitment.shoe_id,
            commitment=commitment.commitment,
            cards=tuple(parse_card(x.card) for x in dealt.cards),
            carrusel=carrusel,
            algorithm=str(dealt.shoe.algorithm),
            salts=tuple(str(x.salt) for x in dealt.cards),
            card_commitments=tuple(dealt.shoe.card_commitments[:count]),
            contributions=contributions,
            committed_ms=commitment.published_ms,
            next_shoe_id=str(dealt.next.shoe_id),
            next_commitment=str(dealt.next.commitment),
            revealed=revealed,
        )

    def reveal(self, shoe_id: str) -> str:
        """A finished hand's server seed (hex); "" when the dealer no longer knows the shoe."""
        try:
            return str(self._dealer.reveal(shoe_id).server_seed)
        except grpc.RpcError as error:
            if details_of(error).reason == "SHOE_NOT_FOUND":
                return ""
            raise

    def shoe_for(self, table_id: str, hand: int, count: int, naiko: bool = False) -> HandShoe:
        """A hand logged before client seeds (a v1 shoe), replayed after a restart: the same shoe and
        cards, by the request ids it was dealt with."""
        base = f"pt-{table_id}-h{hand}"
        created = self._dealer.create_shoe(request_id=f"{base}-shoe", decks=1, nonce=hand)
        dealt = self._dealer.deal(created.shoe_id, count, request_id=f"{base}-deal{count}")
        carrusel = None
        if naiko:
            drawn = self._dealer.draw(
                created.shoe_id, CARRUSEL_LABEL, CARRUSEL_OUTCOMES, request_id=f"{base}-carrusel"
            )
            carrusel = int(drawn.value)
        cards = tuple(parse_card(x.card) for x in dealt)
        return HandShoe(created.shoe_id, created.commitment, cards, carrusel)

    def replay(self, table_id: str, hand: int, command: c.StartHand, committed: Commitment) -> HandShoe:
        """A hand dealt with client seeds, replayed after a restart: the same DealHand (same seeds, same
        request ids), so the dealer answers with the same cards."""
        contributions = tuple(Contribution.of(v) for v in command.client_seeds)
        unrevealed = None
        if command.revealed_shoe_id:
            unrevealed = Unrevealed(command.revealed_hand, command.revealed_shoe_id, ())
        naiko = command.carrusel is not None
        shoe = self.deal(table_id, hand, committed, contributions, command.cards, naiko, unrevealed)
        if not command.revealed_shoe_id:
            return shoe
        # What the first answer revealed is in the log: the dealer may have forgotten that shoe since.
        return replace(
            shoe, revealed=(command.revealed_hand, command.revealed_shoe_id, command.revealed_seed)
        )

    def close(self, table_id: str, hand: int, shoe_id: str) -> None:
        self._dealer.close(shoe_id, request_id=f"pt-{table_id}-h{hand}-close")
