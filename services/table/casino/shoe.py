"""Cards from the dealer: one shoe per round (request ids from table and round, so a retry or a restart
gets the same shoe and the same cards). Three Card Poker labels its shoes with the round's deck set."""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from handeval.cards import parse_card
from servicekit.clients.dealer import DealerClient


@dataclass(frozen=True)
class DealtShoe:
    shoe_id: str
    cards: tuple[int, ...]


class Shoes:
    def __init__(self, channel: grpc.Channel) -> None:
        self._dealer = DealerClient(channel)

    def deal(self, table_id: str, round_number: int, count: int, deck_set: str) -> DealtShoe:
        base = f"cas-{table_id}-r{round_number}"
        created = self._dealer.create_shoe(
            request_id=f"{base}-shoe", decks=1, nonce=round_number, deck_set=deck_set
        )
        dealt = self._dealer.deal(created.shoe_id, count, request_id=f"{base}-deal")
        return DealtShoe(created.shoe_id, tuple(parse_card(c.card) for c in dealt))

    def close(self, table_id: str, round_number: int, shoe_id: str) -> None:
        self._dealer.close(shoe_id, request_id=f"cas-{table_id}-r{round_number}-close")
