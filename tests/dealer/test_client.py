"""The dealer client: retries transient failures with the same request id, never dealing twice."""

from __future__ import annotations

import secrets
from pathlib import Path

import grpc
import pytest
from dealing import SystemSeedSource
from servicekit.auth import Role
from servicekit.clients.dealer import DealerClient
from servicekit.errors import details_of
from servicekit.testing import config_for_tests, running

from services.dealer.server import service_spec


class FlakyEntropy:
    """Works, fails once (the first CreateShoe), then works again."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, size: int) -> bytes:
        self.calls += 1
        if self.calls == 2:  # call 1 is the start-up self-test
            raise OSError("transient entropy failure")
        return secrets.token_bytes(size)


def test_client_retries_transient_failures_and_retries_are_not_second_deals(tmp_path: Path) -> None:
    flaky = FlakyEntropy()
    config = config_for_tests("dealer", tmp_path, seed_source=SystemSeedSource(read=flaky))
    with running(service_spec, config) as svc:
        client = DealerClient(svc.channel("table", Role.SERVICE), attempts=3, backoff_seconds=0.01)
        created = client.create_shoe("hand-1", decks=1, deck_set="A")
        assert flaky.calls == 3 and created.shoe.deck_set == "A"
        first = client.deal(created.shoe_id, 2, "hole-seat-1")
        assert client.deal(created.shoe_id, 2, "hole-seat-1") == first
        assert client.burn(created.shoe_id, 1, "burn-flop") == [2]
        assert client.peek(created.shoe_id).position == 3
        assert client.close(created.shoe_id, "close").state == 2
        assert client.get(created.shoe_id).dealt_count == 2
        assert len(client.reveal(created.shoe_id).order) == 52


def test_client_does_not_retry_refusals(tmp_path: Path) -> None:
    with running(service_spec, config_for_tests("dealer", tmp_path)) as svc:
        client = DealerClient(svc.channel("table", Role.SERVICE), attempts=5, backoff_seconds=10)
        with pytest.raises(grpc.RpcError) as caught:
            client.deal("no-such-shoe", 1, "d")  # a 10 s backoff would show as a slow test
        assert details_of(caught.value).code is grpc.StatusCode.NOT_FOUND
