"""Issue 13, finding 3, over real gRPC: a player fills their shoe quota and is refused (RESOURCE_EXHAUSTED with
RetryInfo), many players together cannot take the share of the cap kept for the platform's services, and
the `table` service still creates shoes. Before, any caller could fill the dealer's whole cap and no table
could start a hand for over an hour."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from poker.dealer.v1 import dealer_service_pb2 as pb
from poker.dealer.v1 import dealer_service_pb2_grpc as pb_grpc
from servicekit.auth import Role
from servicekit.errors import details_of
from servicekit.testing import RunningService, config_for_tests, running

from services.dealer.server import service_spec


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def dealer(tmp_path: Path, clock: Clock) -> Iterator[RunningService]:
    config = config_for_tests(
        "dealer",
        tmp_path,
        clock=clock,
        max_shoes=12,
        service_share=0.5,
        shoes_per_caller=4,
        shoe_rate_per_caller=1.0,
        shoe_burst_per_caller=2,
    )
    with running(service_spec, config) as svc:
        yield svc


def _create(stub: pb_grpc.DealerServiceStub, request_id: str) -> pb.CreateShoeResponse:
    return stub.CreateShoe(pb.CreateShoeRequest(request_id=request_id, decks=1))  # type: ignore[no-any-return]


def _refusal(stub: pb_grpc.DealerServiceStub, request_id: str) -> tuple[grpc.StatusCode, str, float | None]:
    with pytest.raises(grpc.RpcError) as refused:
        _create(stub, request_id)
    details = details_of(refused.value)
    return details.code, details.reason, details.retry_after_seconds


def test_a_player_fills_their_quota_and_the_table_still_gets_shoes(
    dealer: RunningService, clock: Clock
) -> None:
    mallory = pb_grpc.DealerServiceStub(dealer.channel("mallory"))
    for i in range(4):
        _create(mallory, f"m{i}")
        clock.now += 1.0  # within her creation rate
    code, reason, retry = _refusal(mallory, "m4")
    assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "SHOE_QUOTA_EXCEEDED")
    assert retry is not None and retry > 60  # her oldest shoe is forgotten only after idle + retention
    assert _create(mallory, "m0").shoe_id  # a repeat of her own request still answers

    # More accounts: together they hold the 6 shoes open to non-services, then are refused.
    sybil = pb_grpc.DealerServiceStub(dealer.channel("sybil-1"))
    for i in range(2):
        _create(sybil, f"s{i}")
    code, reason, retry = _refusal(pb_grpc.DealerServiceStub(dealer.channel("sybil-2")), "s0")
    assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "TOO_MANY_SHOES") and retry

    table = pb_grpc.DealerServiceStub(dealer.channel("table", Role.SERVICE))
    for hand in range(6):  # the share kept for services
        created = _create(table, f"pt-hu-h{hand}-shoe")
        assert (
            len(table.Deal(pb.DealRequest(shoe_id=created.shoe_id, count=4, request_id=f"d{hand}")).cards)
            == 4
        )

    page = urllib.request.urlopen(dealer.metrics_url, timeout=5).read().decode()
    assert 'poker_dealer_shoe_refusals_total{reason="SHOE_QUOTA_EXCEEDED",role="player"} 1.0' in page
    assert 'poker_dealer_shoe_refusals_total{reason="TOO_MANY_SHOES",role="player"} 1.0' in page


def test_shoe_creation_is_rate_limited_per_caller(dealer: RunningService, clock: Clock) -> None:
    ana = pb_grpc.DealerServiceStub(dealer.channel("ana"))
    for i in range(2):  # the burst
        _create(ana, f"a{i}")
    code, reason, retry = _refusal(ana, "a2")
    assert (code, reason, retry) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "SHOE_RATE_LIMITED", 1.0)
    assert _create(pb_grpc.DealerServiceStub(dealer.channel("bob")), "b0").shoe_id  # bob's own bucket
    clock.now += 1.0
    assert _create(ana, "a2").shoe_id
