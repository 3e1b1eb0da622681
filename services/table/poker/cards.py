"""Cards from the dealer: one shoe per hand, with request ids from (table, hand), so a retry or a restart
gets the same shoe and the same cards. Only what the hand can need is dealt (hole cards, three burns, the
board, and one spare per player in Naiko mode for a swap); the cards stay in memory and are never logged.
A Naiko hand's Carrusel is the shoe's labelled draw `carrusel` over 3 outcomes (docs/fairness.md section
9), asked with a request id from (table, hand) too: public once the hand starts, it is logged."""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from handeval.cards import parse_card
from pokerrules.naiko import CARRUSEL_LABEL, CARRUSEL_OUTCOMES
from servicekit.clients.dealer import DealerClient


@dataclass(frozen=True)
class HandShoe:
    shoe_id: str
    commitment: str
    cards: tuple[int, ...]
    carrusel: int | None = None  # Naiko: the shoe's `carrusel` draw (0, 1 or 2)


def cards_needed(players: int, hole_cards: int, spares: bool) -> int:
    return players * hole_cards + 8 + (players if spares else 0)


class Dealer:
    def __init__(self, channel: grpc.Channel) -> None:
        self._dealer = DealerClient(channel)

    def shoe_for(self, table_id: str, hand: int, count: int, naiko: bool = False) -> HandShoe:
        """The hand's shoe and its first `count` cards; for a Naiko hand (`naiko`) also its Carrusel draw."""
        base = f"pt-{table_id}-h{hand}"
        created = self._dealer.create_shoe(request_id=f"{base}-shoe", decks=1, nonce=hand)
        dealt = self._dealer.deal(created.shoe_id, count, request_id=f"{base}-deal{count}")
        carrusel = None
        if naiko:
            drawn = self._dealer.draw(
                created.shoe_id, CARRUSEL_LABEL, CARRUSEL_OUTCOMES, request_id=f"{base}-carrusel"
            )
            carrusel = int(drawn.value)
        cards = tuple(parse_card(c.card) for c in dealt)
        return HandShoe(created.shoe_id, created.commitment, cards, carrusel)

    def close(self, table_id: str, hand: int, shoe_id: str) -> None:
        self._dealer.close(shoe_id, request_id=f"pt-{table_id}-h{hand}-close")
