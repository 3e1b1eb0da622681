"""Cards from the dealer: one shoe per round (request ids from table and round, so a retry or a restart
gets the same shoe and the same cards). Three Card Poker labels its shoes with the round's deck set.

Deals nobody can choose (docs/fairness.md section 11): a round's shoe is committed before the round's
client seeds are taken (the previous round's deal commits it, or `commit` when none did); `deal` is the
round's one DealHand (sealed with every seated player's seed, the round's cards, the next round's shoe
committed, an earlier round's left unrevealed revealed); `reveal` gives the round's seed when it is paid.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass

import grpc
from handeval.cards import parse_card
from poker.dealer.v1 import dealer_service_pb2 as dpb
from servicekit.clients.dealer import DealerClient
from servicekit.errors import details_of

# A committed shoe that cannot deal this round (lost in a restart, expired, sealed by a deal whose answer
# was never recorded): the round commits a fresh one.
SHOE_GONE = frozenset(
    {"SHOE_NOT_FOUND", "SHOE_EXPIRED", "SHOE_CLOSED", "SHOE_NOT_AWAITING_SEEDS", "REQUEST_ID_REUSED"}
)


@dataclass(frozen=True)
class DealtShoe:
    shoe_id: str
    cards: tuple[int, ...]
    algorithm: str = ""
    salts: tuple[str, ...] = ()  # hex, position 0 first
    card_commitments: tuple[str, ...] = ()  # of the dealt positions
    next_shoe_id: str = ""
    next_commitment: str = ""
    revealed_seed: str | None = None  # the asked-for earlier shoe's seed ("" when the dealer lost it)


def gone(error: grpc.RpcError) -> bool:
    return details_of(error).reason in SHOE_GONE


def table_seed() -> str:
    """The table's fresh random seed for a seated player who gave none (128 bits, hex)."""
    return secrets.token_hex(16)


class Shoes:
    def __init__(self, channel: grpc.Channel, seeds: Callable[[], str] = table_seed) -> None:
        """`seeds`: the table's own client seeds (the OS CSPRNG; deterministic in the simulation)."""
        self._dealer = DealerClient(channel)
        self.table_seed = seeds

    def commit(self, table_id: str, round_number: int, deck_set: str, attempt: int) -> tuple[str, str]:
        """A shoe committed for `round_number` when no earlier deal committed it: (shoe id, commitment)."""
        made = self._dealer.commit_shoe(
            f"cas-{table_id}-r{round_number}-commit{attempt}", nonce=round_number, deck_set=deck_set
        )
        return str(made.shoe_id), str(made.commitment)

    def deal(
        self,
        table_id: str,
        round_number: int,
        shoe_id: str,
        seeds: list[tuple[str, str]],
        count: int,
        next_deck_set: str,
        reveal_shoe_id: str = "",
    ) -> DealtShoe:
        """The round's DealHand: `count` cards of the committed shoe sealed with `seeds`, the next round's
        shoe committed, and `reveal_shoe_id` (an earlier round's, left unrevealed) revealed."""
        following = dpb.CreateShoeRequest(
            request_id=f"cas-{table_id}-r{round_number + 1}-next",
            decks=1,
            nonce=round_number + 1,
            deck_set=next_deck_set,
            await_client_seeds=True,
        )
        dealt = self._dealer.deal_hand(
            shoe_id,
            seeds,
            count,
            request_id=f"cas-{table_id}-r{round_number}-deal",
            next_shoe=following,
            reveal_shoe_id=reveal_shoe_id,
        )
        revealed = None
        if reveal_shoe_id:
            revealed = str(dealt.revealed.server_seed) if dealt.HasField("revealed") else ""
        return DealtShoe(
            shoe_id=shoe_id,
            cards=tuple(parse_card(c.card) for c in dealt.cards),
            algorithm=str(dealt.shoe.algorithm),
            salts=tuple(str(c.salt) for c in dealt.cards),
            card_commitments=tuple(dealt.shoe.card_commitments[:count]),
            next_shoe_id=str(dealt.next.shoe_id),
            next_commitment=str(dealt.next.commitment),
            revealed_seed=revealed,
        )

    def reveal(self, shoe_id: str) -> str:
        """A finished round's server seed (hex); "" when the dealer no longer knows the shoe."""
        try:
            return str(self._dealer.reveal(shoe_id).server_seed)
        except grpc.RpcError as error:
            if details_of(error).reason == "SHOE_NOT_FOUND":
                return ""
            raise

    def close(self, table_id: str, round_number: int, shoe_id: str) -> None:
        """A round dealt before client seeds (a v1 shoe) is closed when paid, as it always was."""
        self._dealer.close(shoe_id, request_id=f"cas-{table_id}-r{round_number}-close")
