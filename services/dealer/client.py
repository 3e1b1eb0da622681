"""A small typed client of the dealer for other services (the table service), with safe retries.

Every mutating dealer call carries a request id, so a call that failed in transit (`UNAVAILABLE`,
`DEADLINE_EXCEEDED`) is retried with the *same* id: the dealer returns the first answer if it had
already acted, so a retry never deals a second set of cards. Use one client per channel; the channel
(`servicekit.client.channel(address, token)`) adds the token and a default deadline.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import grpc
from poker.dealer.v1 import dealer_service_pb2 as pb
from poker.dealer.v1 import dealer_service_pb2_grpc as pb_grpc

T = TypeVar("T")
RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})


class DealerClient:
    def __init__(self, channel: grpc.Channel, attempts: int = 3, backoff_seconds: float = 0.05) -> None:
        self._stub = pb_grpc.DealerServiceStub(channel)
        self._attempts = max(1, attempts)
        self._backoff = backoff_seconds

    def _call(self, send: Callable[[], T]) -> T:
        for attempt in range(1, self._attempts + 1):
            try:
                return send()
            except grpc.RpcError as error:
                if attempt == self._attempts or error.code() not in RETRYABLE:
                    raise
                time.sleep(self._backoff * 2 ** (attempt - 1))
        raise AssertionError("unreachable")  # pragma: no cover

    def create_shoe(
        self,
        request_id: str,
        decks: int = 1,
        client_seed: str = "",
        nonce: int = 0,
        deck_set: str = "",
        public_reveal: bool = False,
    ) -> pb.CreateShoeResponse:
        request = pb.CreateShoeRequest(
            decks=decks,
            client_seed=client_seed,
            nonce=nonce,
            deck_set=deck_set,
            reveal_policy=pb.REVEAL_POLICY_PUBLIC if public_reveal else pb.REVEAL_POLICY_OWNER,
            request_id=request_id,
        )
        response: pb.CreateShoeResponse = self._call(lambda: self._stub.CreateShoe(request))
        return response

    def deal(self, shoe_id: str, count: int, request_id: str) -> list[pb.DealtCard]:
        request = pb.DealRequest(shoe_id=shoe_id, count=count, request_id=request_id)
        return list(self._call(lambda: self._stub.Deal(request)).cards)

    def burn(self, shoe_id: str, count: int, request_id: str) -> list[int]:
        request = pb.BurnRequest(shoe_id=shoe_id, count=count, request_id=request_id)
        return list(self._call(lambda: self._stub.Burn(request)).positions)

    def peek(self, shoe_id: str, offset: int = 0) -> pb.PeekResponse:
        request = pb.PeekRequest(shoe_id=shoe_id, offset=offset)
        response: pb.PeekResponse = self._call(lambda: self._stub.Peek(request))
        return response

    def close(self, shoe_id: str, request_id: str) -> pb.Shoe:
        request = pb.CloseShoeRequest(shoe_id=shoe_id, request_id=request_id)
        response: pb.CloseShoeResponse = self._call(lambda: self._stub.CloseShoe(request))
        return response.shoe

    def reveal(self, shoe_id: str) -> pb.RevealResponse:
        request = pb.RevealRequest(shoe_id=shoe_id)
        response: pb.RevealResponse = self._call(lambda: self._stub.Reveal(request))
        return response

    def get(self, shoe_id: str) -> pb.Shoe:
        request = pb.GetShoeRequest(shoe_id=shoe_id)
        response: pb.GetShoeResponse = self._call(lambda: self._stub.GetShoe(request))
        return response.shoe
