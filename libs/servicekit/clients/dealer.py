"""A small typed client of the dealer for other services (table, tournament), with safe retries.

Every mutating dealer call carries a request id, so a call that failed in transit (`UNAVAILABLE`,
`DEADLINE_EXCEEDED`) is sent again with the *same* id: the dealer returns the first answer if it had
already acted, so a retry never deals a second set of cards. After the last attempt the caller gets
UNAVAILABLE `DEALER_UNAVAILABLE`; the dealer's own refusals (NOT_FOUND, RESOURCE_EXHAUSTED, ...) come back
as the grpc.RpcError they are. Use one client per channel (`servicekit.client.channel(address, token)`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import grpc
from poker.dealer.v1 import dealer_service_pb2 as pb
from poker.dealer.v1 import dealer_service_pb2_grpc as pb_grpc

from servicekit.clients.calls import CallPolicy, Calls, RetryingStub


class DealerClient:
    def __init__(
        self,
        channel: grpc.Channel,
        attempts: int = 3,
        backoff_seconds: float = 0.05,
        deadline_seconds: float = 5.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        policy = CallPolicy(deadline_seconds, attempts, backoff_seconds)
        self._stub = RetryingStub(pb_grpc.DealerServiceStub(channel), Calls("dealer", policy, sleep))  # type: ignore[no-untyped-call]

    def create_shoe(
        self,
        request_id: str,
        decks: int = 1,
        client_seed: str = "",
        nonce: int = 0,
        deck_set: str = "",
        public_reveal: bool = False,
        await_client_seeds: bool = False,
    ) -> pb.CreateShoeResponse:
        request = pb.CreateShoeRequest(
            decks=decks,
            client_seed=client_seed,
            nonce=nonce,
            deck_set=deck_set,
            reveal_policy=pb.REVEAL_POLICY_PUBLIC if public_reveal else pb.REVEAL_POLICY_OWNER,
            request_id=request_id,
            await_client_seeds=await_client_seeds,
        )
        response: pb.CreateShoeResponse = self._stub.CreateShoe(request)
        return response

    def commit_shoe(self, request_id: str, nonce: int = 0, deck_set: str = "") -> pb.CreateShoeResponse:
        """A one-deck v2 shoe committed now, awaiting its client seeds (docs/fairness.md section 10)."""
        return self.create_shoe(request_id, nonce=nonce, deck_set=deck_set, await_client_seeds=True)

    def deal_hand(
        self,
        shoe_id: str,
        client_seeds: list[tuple[str, str]],
        count: int,
        request_id: str,
        draws: tuple[tuple[str, int], ...] = (),
        next_shoe: pb.CreateShoeRequest | None = None,
        reveal_shoe_id: str = "",
    ) -> pb.DealHandResponse:
        """A hand's one call (DealHand): the committed shoe sealed with `client_seeds` ((contributor,
        seed) pairs), its first `count` cards and `draws`, the next hand's shoe committed (`next_shoe`)
        and the previous one revealed (`reveal_shoe_id`)."""
        request = pb.DealHandRequest(
            shoe_id=shoe_id,
            client_seeds=[pb.ClientSeed(contributor=c, seed=s) for c, s in client_seeds],
            count=count,
            draws=[pb.DrawWanted(label=label, outcomes=outcomes) for label, outcomes in draws],
            request_id=request_id,
            next=next_shoe,
            reveal_shoe_id=reveal_shoe_id,
        )
        response: pb.DealHandResponse = self._stub.DealHand(request)
        return response

    def deal(self, shoe_id: str, count: int, request_id: str) -> list[pb.DealtCard]:
        request = pb.DealRequest(shoe_id=shoe_id, count=count, request_id=request_id)
        return list(self._stub.Deal(request).cards)

    def burn(self, shoe_id: str, count: int, request_id: str) -> list[int]:
        request = pb.BurnRequest(shoe_id=shoe_id, count=count, request_id=request_id)
        return list(self._stub.Burn(request).positions)

    def peek(self, shoe_id: str, offset: int = 0) -> pb.PeekResponse:
        response: pb.PeekResponse = self._stub.Peek(pb.PeekRequest(shoe_id=shoe_id, offset=offset))
        return response

    def draw(self, shoe_id: str, label: str, outcomes: int, request_id: str) -> pb.LabelledDraw:
        """A labelled draw (the Naiko Carrusel: label "carrusel", 3 outcomes; docs/fairness.md §9)."""
        request = pb.DrawRequest(shoe_id=shoe_id, label=label, outcomes=outcomes, request_id=request_id)
        response: pb.DrawResponse = self._stub.Draw(request)
        return response.draw

    def close(self, shoe_id: str, request_id: str) -> pb.Shoe:
        request = pb.CloseShoeRequest(shoe_id=shoe_id, request_id=request_id)
        response: pb.CloseShoeResponse = self._stub.CloseShoe(request)
        return response.shoe

    def reveal(self, shoe_id: str) -> pb.RevealResponse:
        response: pb.RevealResponse = self._stub.Reveal(pb.RevealRequest(shoe_id=shoe_id))
        return response

    def get(self, shoe_id: str) -> pb.Shoe:
        response: pb.GetShoeResponse = self._stub.GetShoe(pb.GetShoeRequest(shoe_id=shoe_id))
        return response.shoe
