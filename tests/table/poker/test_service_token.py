"""Issue 13, finding 2: the table service's own token is renewed before it expires, and a dependency that
refuses it shows in health and metrics instead of failing players' calls with INTERNAL.

Real dealer, wallet and table over real sockets. The wall clock tokens are issued and verified on is
virtual (`auth_clock`, shared by the three services) and the table's service token lives 60 s, so many
lifetimes pass in no time: before, the table minted its token once, and once it expired no hand started,
buy-ins and casino bets failed with INTERNAL, leavers were not paid and health still said SERVING.
"""

from __future__ import annotations

import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from poker.dealer.v1 import dealer_service_pb2 as dpb
from poker.dealer.v1 import dealer_service_pb2_grpc as dpb_grpc
from poker.table.v1 import casino_service_pb2 as cpb
from poker.table.v1 import casino_service_pb2_grpc as cpb_grpc
from poker.table.v1 import table_service_pb2 as pb
from servicekit import auth, testing
from servicekit.auth import Role
from servicekit.errors import details_of
from servicekit.testing import config_for_tests, running

from services.dealer.server import service_spec as dealer_spec
from services.table.casino.tables import parse_tables as casino_tables
from services.table.server import service_spec as table_spec
from services.wallet.server import service_spec as wallet_spec
from tests.table.conftest import MsClock
from tests.table.poker.conftest import Stack, rid, table_config, to_act, wait_until

TTL = 60


class WallClock:
    """Unix seconds only the test moves; starts at the real time."""

    def __init__(self) -> None:
        self.now = time.time()
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self.now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds


@pytest.fixture
def renewing(tmp_path: Path) -> Iterator[tuple[Stack, WallClock]]:
    clock = WallClock()
    with (
        running(dealer_spec, config_for_tests("dealer", tmp_path, auth_clock=clock)) as dealer,
        running(wallet_spec, config_for_tests("wallet", tmp_path, auth_clock=clock)) as wallet,
    ):
        ms = MsClock()
        config = table_config(
            tmp_path,
            dealer,
            wallet,
            poker_clock=ms,
            auth_clock=clock,
            service_token_ttl_seconds=TTL,
            casino_tables=casino_tables("ch-touch:CASINO_HOLDEM:1"),
        )
        with running(table_spec, config) as table:
            yield Stack(tmp_path, dealer, wallet, table, ms), clock


def _health(address: str) -> int:
    stub = health_pb2_grpc.HealthStub(testing.channel(address))
    return int(stub.Check(health_pb2.HealthCheckRequest(), timeout=2).status)


def _metric(url: str, name: str, **labels: str) -> float:
    page = urllib.request.urlopen(url, timeout=5).read().decode()
    for line in page.splitlines():
        if line.startswith(name + "{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no {name} {labels} on the metrics page")


def _hand_ends(stack: Stack, table_id: str) -> int:
    """The player to act folds; returns the number of the hand that then starts (dealt by the dealer)."""
    before = stack.view("ana", table_id).hand_number
    stack.act(to_act(stack, table_id), table_id, pb.ACTION_KIND_FOLD)
    return int(
        wait_until(
            lambda: (
                (v := stack.view("ana", table_id)).hand_in_play and v.hand_number > before and v.hand_number
            )
        )
    )


def test_the_table_renews_its_token_across_many_lifetimes(renewing: tuple[Stack, WallClock]) -> None:
    stack, clock = renewing
    for player in ("ana", "bob", "cy"):
        stack.fund(player, 100_000)
    stack.join("ana", "hu", seat=1)
    stack.join("bob", "hu", seat=2)
    wait_until(lambda: stack.view("ana", "hu").hand_in_play)
    once = auth.issue_token(stack.table.service.keys, "table", Role.SERVICE, TTL, now=clock())
    casino = cpb_grpc.CasinoServiceStub(stack.table.channel("cy"))
    casino.JoinCasinoTable(cpb.JoinCasinoTableRequest(request_id=rid("cjoin"), table_id="ch-touch", seat=1))
    hands = []
    for _ in range(5):  # 5 x 50 s: past four lifetimes of the table's token
        clock.advance(50)
        hands.append(_hand_ends(stack, "hu"))  # CreateShoe + Deal at the dealer
        bet = cpb.Bet(kind="ANTE", amount=10)  # a hold at the wallet
        casino.PlaceBets(cpb.PlaceBetsRequest(request_id=rid("bet"), table_id="ch-touch", seat=1, bets=[bet]))
        casino.ClearBets(
            cpb.ClearBetsRequest(request_id=rid("clear"), table_id="ch-touch", seat=1)
        )  # a release
    assert hands == sorted(hands) and len(set(hands)) == 5
    # A token minted once (what the table used to send) is refused by now: the clock did move past it.
    dealer = dpb_grpc.DealerServiceStub(testing.channel(stack.dealer.address, once))
    with pytest.raises(grpc.RpcError) as refused:
        dealer.GetShoe(dpb.GetShoeRequest(shoe_id="any"))
    assert details_of(refused.value).reason == "TOKEN_EXPIRED"
    # A leaver is paid back (a transfer from the table's escrow, with the renewed token).
    stack.tables("cy").JoinTable(pb.JoinTableRequest(request_id=rid("join"), table_id="plo", buy_in=5_000))
    assert stack.balance("cy") == 95_000
    left = stack.tables("cy").LeaveTable(pb.LeaveTableRequest(request_id=rid("leave"), table_id="plo"))
    assert left.returned == 5_000
    wait_until(lambda: stack.balance("cy") == 100_000)
    assert stack.ledger_ok()
    assert _health(stack.table.address) == health_pb2.HealthCheckResponse.SERVING
    assert _metric(stack.table.metrics_url, "felt_client_token_renewals_total", service="table") >= 4
    for dependency in ("dealer", "wallet"):
        assert _metric(stack.table.metrics_url, "felt_client_credentials_refused", dependency=dependency) == 0


def test_a_wallet_refusing_the_tables_token_is_unavailable_and_not_serving(tmp_path: Path) -> None:
    """The wallet trusts another signing key than the table's: a buy-in is UNAVAILABLE (never INTERNAL),
    nothing moves, and the table is NOT_SERVING with the refusal in its metrics."""
    with (
        running(dealer_spec, config_for_tests("dealer", tmp_path)) as dealer,
        running(wallet_spec, config_for_tests("wallet", tmp_path / "elsewhere")) as wallet,
        running(table_spec, table_config(tmp_path, dealer, wallet, poker_clock=MsClock())) as table,
    ):
        stack = Stack(tmp_path, dealer, wallet, table, MsClock())
        stack.fund("ana", 10_000)  # an operator token of the wallet's own key
        with pytest.raises(grpc.RpcError) as refused:
            stack.join("ana", "hu", seat=1)
        details = details_of(refused.value)
        assert (details.code, details.reason) == (grpc.StatusCode.UNAVAILABLE, "WALLET_REFUSED_CREDENTIALS")
        assert stack.balance("ana") == 10_000 and stack.ledger_ok()
        assert stack.view("ana", "hu").your_seat == 0
        assert _health(table.address) == health_pb2.HealthCheckResponse.NOT_SERVING
        assert _metric(table.metrics_url, "felt_client_credentials_refused", dependency="wallet") == 1
        assert (
            _metric(
                table.metrics_url,
                "felt_client_refused_calls_total",
                dependency="wallet",
                grpc_code="Unauthenticated",
            )
            >= 1
        )
        assert _metric(table.metrics_url, "felt_client_credentials_refused", dependency="dealer") == 0
