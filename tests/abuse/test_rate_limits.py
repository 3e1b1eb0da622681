"""Issue 13, finding 8: no rate limits. A player flooding Act, or looping JoinTable/LeaveTable, is refused
with RESOURCE_EXHAUSTED RATE_LIMITED and a RetryInfo once their budget is spent, while the players of
another table keep playing; the table service's own calls to the dealer and the wallet have budgets of
their own. Counts, not timings: the rate clock stands still unless the test moves it."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import prometheus_client
import pytest
from poker.dealer.v1 import dealer_service_pb2 as dpb
from poker.dealer.v1 import dealer_service_pb2_grpc as dpb_grpc
from poker.table.v1 import table_service_pb2 as pb
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import errors
from servicekit.auth import Role
from servicekit.testing import config_for_tests, running

from services.dealer.server import RATE_LIMITS as DEALER_LIMITS
from services.dealer.server import SERVICE as DEALER
from services.dealer.server import service_spec as dealer_spec
from services.table.server import CASINO, TABLE
from services.table.server import RATE_LIMITS as TABLE_LIMITS
from services.wallet.server import RATE_LIMITS as WALLET_LIMITS
from services.wallet.server import SERVICE as WALLET
from tests.abuse.conftest import Limited, RateClock, outcomes
from tests.table.poker.conftest import heads_up, rid, to_act, wait_until

ACT_BURST = next(limit.player.burst for limit in TABLE_LIMITS if limit.group == "act")  # type: ignore[union-attr]
SEATING_BURST = next(limit.player.burst for limit in TABLE_LIMITS if limit.group == "seating")  # type: ignore[union-attr]


def _limited(method: str) -> float:
    value = prometheus_client.REGISTRY.get_sample_value(
        "felt_rate_limited_total", {"grpc_service": TABLE.full_name, "grpc_method": method}
    )
    return value or 0.0


def _in_thread(work: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(work()), daemon=True)
    thread.start()
    return thread, result


def _play_a_hand(limited: Limited, table_id: str, players: tuple[str, str]) -> list[str]:
    """Call or check until the hand in play ends; the outcome of every Act."""
    stack = limited.stack
    number = stack.view(players[0], table_id).hand_number
    seen = []
    while (view := stack.view(players[0], table_id)).hand_in_play and view.hand_number == number:
        player = to_act(stack, table_id, players)
        mine = stack.view(player, table_id)
        kind = pb.ACTION_KIND_CALL if mine.legal.call_amount else pb.ACTION_KIND_CHECK
        seen += outcomes([lambda p=player, k=kind: stack.act(p, table_id, k)])
    return seen


def test_an_act_flood_is_refused_and_another_table_plays_on(limited: Limited) -> None:
    stack = limited.stack
    heads_up(stack, "hu", "ana", "bob")  # the flooder's table
    heads_up(stack, "plo", "cat", "dan")  # another table
    before = _limited("Act")
    flooder = stack.tables("ana")

    def flood() -> list[str]:
        calls = [
            lambda i=i: flooder.Act(
                pb.ActRequest(request_id=f"flood-{i}", table_id="hu", kind=pb.ACTION_KIND_FOLD)
            )
            for i in range(300)
        ]
        return outcomes(calls)

    thread, flooded = _in_thread(flood)
    others = _play_a_hand(limited, "plo", ("cat", "dan"))
    thread.join(60)
    answers = flooded[0]
    # Only the burst reached the table (each one refused or taken by the game there); the rest never did.
    assert len(answers) - answers.count("RATE_LIMITED") == ACT_BURST
    assert answers.count("RATE_LIMITED") == 300 - ACT_BURST
    assert _limited("Act") - before == 300 - ACT_BURST
    assert others and set(others) == {"OK"}  # the other table's players were never refused
    # The refusal says when to come back; when that time has come, ana acts again.
    try:
        flooder.Act(pb.ActRequest(request_id=rid(), table_id="hu", kind=pb.ACTION_KIND_FOLD))
    except grpc.RpcError as refused:
        details = errors.details_of(refused)
    assert details.reason == "RATE_LIMITED" and details.retry_after_seconds
    limited.rates.now += details.retry_after_seconds
    assert outcomes([lambda: stack.act("ana", "hu", pb.ACTION_KIND_FOLD)])[0] != "RATE_LIMITED"


def test_a_join_leave_loop_spends_one_budget_and_another_table_plays_on(limited: Limited) -> None:
    stack = limited.stack
    stack.fund("mal", 1_000_000)
    heads_up(stack, "hu", "ana", "bob")
    start = stack.balance("mal")
    looper = stack.tables("mal")

    def loop() -> list[str]:
        calls: list[Callable[[], Any]] = []
        for _ in range(50):
            calls.append(
                lambda: looper.JoinTable(
                    pb.JoinTableRequest(request_id=rid("mj"), table_id="plo", buy_in=2_000)
                )
            )
            calls.append(
                lambda: looper.LeaveTable(pb.LeaveTableRequest(request_id=rid("ml"), table_id="plo"))
            )
        return outcomes(calls)

    thread, looped = _in_thread(loop)
    others = _play_a_hand(limited, "hu", ("ana", "bob"))
    thread.join(60)
    answers = looped[0]
    assert answers.count("OK") == SEATING_BURST  # JoinTable and LeaveTable share one budget
    assert answers.count("RATE_LIMITED") == 100 - SEATING_BURST
    assert others and set(others) == {"OK"}
    # Only the calls inside the budget moved chips; mal sat down and left, nothing else (money conserved).
    wait_until(lambda: stack.balance("mal") == start)
    assert stack.ledger_ok()


def test_the_platform_is_never_starved_by_players(limited: Limited) -> None:
    """A player spends their own CreateShoe and CreateAccount budgets; the table service (role service)
    and operators spend theirs, far larger."""
    stack = limited.stack
    player_dealer = dpb_grpc.DealerServiceStub(stack.dealer.channel("mal"))
    burst = DEALER_LIMITS[0].player.burst  # type: ignore[union-attr]
    shoes = outcomes(
        [
            lambda i=i: player_dealer.CreateShoe(dpb.CreateShoeRequest(decks=1, request_id=f"s{i}"))
            for i in range(burst + 5)
        ]
    )
    assert shoes.count("OK") == burst and shoes.count("RATE_LIMITED") == 5
    table_dealer = dpb_grpc.DealerServiceStub(stack.dealer.channel("table", Role.SERVICE))
    assert set(
        outcomes(
            [
                lambda i=i: table_dealer.CreateShoe(dpb.CreateShoeRequest(decks=1, request_id=f"t{i}"))
                for i in range(burst + 5)
            ]
        )
    ) == {"OK"}
    wallet = wpb_grpc.WalletServiceStub(stack.wallet.channel("mal"))
    opened = outcomes(
        [
            lambda i=i: wallet.CreateAccount(
                wpb.CreateAccountRequest(request_id=f"a{i}", kind=wpb.ACCOUNT_KIND_PLAYER, owner="mal")
            )
            for i in range(10)
        ]
    )
    assert "RATE_LIMITED" in opened and opened.count("RATE_LIMITED") == 10 - WALLET_LIMITS[0].player.burst  # type: ignore[union-attr]
    # Hands still start: the table service's own dealer and wallet calls are not the player's budget.
    heads_up(stack, "hu", "ana", "bob")


def test_every_rpc_of_table_casino_dealer_and_wallet_has_a_rate_limit() -> None:
    """From the descriptors: a new RPC, a write or a read (issue 24: one player's flood of reads slowed
    every table), is covered, or this test names it."""
    for service, limits in (
        (TABLE, TABLE_LIMITS),
        (CASINO, TABLE_LIMITS),
        (DEALER, DEALER_LIMITS),
        (WALLET, WALLET_LIMITS),
    ):
        limited_methods = {m for limit in limits for m in limit.methods}
        for method in service.methods:
            assert method.name in limited_methods, f"{service.full_name}/{method.name} has no rate limit"
        for limit in limits:
            assert limit.player is not None and limit.platform is not None
            assert limit.platform.per_second >= 100 * limit.player.per_second  # the platform: far higher


def test_a_call_forwarded_between_dealer_workers_spends_its_budget_once(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """With several dealer workers a call about a shoe is forwarded to the worker that holds it: the
    worker it landed on spent the caller's budget, the owner does not spend it again."""
    data_dir = Path(os.path.realpath(tmp_path_factory.mktemp("dw")))  # short: unix socket paths
    rates = RateClock()

    def worker(index: int) -> Any:
        return config_for_tests(
            "dealer", data_dir, workers=2, worker_index=index, rate_limits=True, rate_clock=rates
        )

    burst = DEALER_LIMITS[1].player.burst  # type: ignore[union-attr]
    with running(dealer_spec, worker(0)) as first, running(dealer_spec, worker(1)) as second:
        direct = dpb_grpc.DealerServiceStub(first.channel("ana"))
        shoe = direct.CreateShoe(dpb.CreateShoeRequest(decks=8, request_id="s")).shoe_id
        assert shoe.startswith("w0-")
        via_second = dpb_grpc.DealerServiceStub(second.channel("ana"))
        half = burst // 2 + 10
        deals = [
            lambda i=i: via_second.Deal(dpb.DealRequest(shoe_id=shoe, count=1, request_id=f"f{i}"))
            for i in range(half)
        ]
        deals += [
            lambda i=i: direct.Deal(dpb.DealRequest(shoe_id=shoe, count=1, request_id=f"d{i}"))
            for i in range(half)
        ]
        assert set(outcomes(deals)) == {"OK"}  # each worker counted only the calls that landed on it
