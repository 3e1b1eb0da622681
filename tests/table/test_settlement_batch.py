"""Issue 5, "Money": a round settles in ONE atomic, idempotent wallet batch. Five players at a live Three
Card Poker table (Ante, Pair Plus, Progressive; some play, some fold): between the deal and the settled
round the wallet served exactly one TransferBatch and no Capture, Release or Transfer (its own /metrics), and
every chip the round moved (captured stakes, payouts, the progressive contribution) is a transfer of that
batch. A re-drive of the same settlement is a replay that moves nothing."""

from __future__ import annotations

import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from poker.table.v1 import casino_service_pb2 as pb
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from pokerrules.casino import Settlement
from servicekit.testing import RunningService, running

from services.table.casino.money import HeldBet, settlement_batch, settlement_batch_id
from services.table.server import service_spec as table_spec
from tests.table.conftest import FakeClock, Stack, bets, rid, table_config

TABLE = "tcp-live"
PLAYERS = ("p1", "p2", "p3", "p4", "p5")
MUTATING = ("TransferBatch", "Capture", "Release", "Transfer", "Hold")


@pytest.fixture
def quiet_stack(deps: tuple[Path, RunningService, RunningService]) -> Iterator[Stack]:
    """The casino tables alone: no public poker table (with its bots' buy-ins) shares the wallet's metrics."""
    data_dir, dealer, wallet = deps
    clock = FakeClock()
    with running(table_spec, table_config(data_dir, dealer, wallet, clock=clock, poker_tables=[])) as table:
        yield Stack(data_dir, dealer, wallet, table, clock)


def wallet_calls(stack: Stack) -> dict[str, float]:
    """The wallet's grpc_server_handled_total per mutating method (every code), from its /metrics."""
    text = urllib.request.urlopen(stack.wallet.metrics_url, timeout=5).read().decode()
    counts = dict.fromkeys(MUTATING, 0.0)
    for line in text.splitlines():
        if not line.startswith("grpc_server_handled_total{") or "poker.wallet.v1.WalletService" not in line:
            continue
        method = re.search(r'grpc_method="(\w+)"', line)
        if method and method.group(1) in counts:
            counts[method.group(1)] += float(line.rsplit(" ", 1)[1])
    return counts


def round_transfers(stack: Stack, account_id: str) -> list[wpb.Transfer]:
    return list(
        stack.operator.ListTransfers(wpb.ListTransfersRequest(account_id=account_id, page_size=500)).transfers
    )


def test_a_round_settles_in_exactly_one_wallet_batch(quiet_stack: Stack) -> None:
    stack = quiet_stack
    accounts = {p: stack.fund(p, 1000) for p in PLAYERS}
    seats = {}
    for p in PLAYERS:
        seats[p] = (
            stack.casino(p).JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id=TABLE)).seat
        )
        stack.casino(p).PlaceBets(
            pb.PlaceBetsRequest(
                request_id=rid(),
                table_id=TABLE,
                seat=seats[p],
                bets=bets(ante=10, pair_plus=5, progressive=1),
            )
        )
    assert all(stack.account(p).pending == 16 for p in PLAYERS)
    before = wallet_calls(stack)
    stack.casino("p1").DealRound(pb.DealRoundRequest(request_id=rid(), table_id=TABLE))
    for n, p in enumerate(PLAYERS):
        decision = pb.CASINO_DECISION_PLAY if n % 2 == 0 else pb.CASINO_DECISION_FOLD
        view = (
            stack.casino(p)
            .Decide(pb.DecideRequest(request_id=rid(), table_id=TABLE, seat=seats[p], decision=decision))
            .round
        )
    assert view.phase == "SETTLED"
    stack.wait_for(lambda: all(stack.account(p).pending == 0 for p in PLAYERS))
    after = wallet_calls(stack)
    assert {m: after[m] - before[m] for m in MUTATING} == {
        "TransferBatch": 1,
        "Capture": 0,
        "Release": 0,
        "Transfer": 0,
        "Hold": 3,  # the Play bets of p1, p3 and p5 (TCP-2.2): a bet is a hold when placed
    }

    from servicekit.auth import Role

    # The wallet's id of the batch, found by the request id of its pool transfer (the table service's own).
    table = wpb_grpc.WalletServiceStub(stack.wallet.channel("table", Role.SERVICE))
    pool_leg = wpb.GetTransferRequest(transfer_request_id=f"{settlement_batch_id(TABLE, view.round)}-pool")
    batch_id = table.GetTransfer(pool_leg).transfer.batch_id
    house = stack.operator.ListAccounts(wpb.ListAccountsRequest(kind=wpb.ACCOUNT_KIND_HOUSE, owner="casino"))
    pool = stack.operator.ListAccounts(
        wpb.ListAccountsRequest(kind=wpb.ACCOUNT_KIND_JACKPOT_POOL, owner=f"casino-{TABLE}")
    )
    house_id, pool_id = house.accounts[0].account_id, pool.accounts[0].account_id
    moved = [t for t in round_transfers(stack, house_id) if t.batch_id == batch_id]
    assert len(moved) == len(round_transfers(stack, house_id))  # the house moved chips only in this batch
    assert all(t.kind in (wpb.TRANSFER_KIND_CAPTURE, wpb.TRANSFER_KIND_BATCH) for t in moved)
    for p in PLAYERS:  # each player's chips moved in the batch only (besides the chips they were issued)
        own = [t for t in round_transfers(stack, accounts[p]) if t.kind != wpb.TRANSFER_KIND_ISSUE]
        assert own and all(t.batch_id == batch_id for t in own)
    # TCP-2.5: 5 Progressive stakes x 20 % = 1 whole chip to the pool, in the same batch.
    assert stack.operator.GetAccount(wpb.GetAccountRequest(account_id=pool_id)).account.balance == 1
    assert [t.batch_id for t in round_transfers(stack, pool_id)] == [batch_id]
    total = sum(stack.account(p).balance for p in PLAYERS) + stack.house_balance() + 1
    assert total == 1000 * len(PLAYERS) and stack.ledger_ok()


def test_a_re_driven_settlement_is_a_replay(quiet_stack: Stack) -> None:
    """The batch is a function of the round (its request id of (table, round)), so the settlement sent
    again, after a timeout or a restart of the table service, is a replay: nothing moves twice."""
    from pokerrules.casino import BetKind, BetResult, Outcome
    from servicekit.auth import Role

    from services.table.casino.money import Wallet

    stack = quiet_stack
    stack.fund("p1", 100)
    wallet = Wallet(stack.wallet.channel("table", Role.SERVICE))
    holds = [
        HeldBet(1, "ANTE", "h-ante-1", 6),
        HeldBet(1, "ANTE", "h-ante-2", 4),
        HeldBet(1, "PAIR_PLUS", "h-pp", 5),
    ]
    for held in holds:
        wallet.hold(held.hold_id, "p1", held.amount, "test")
    results = (
        BetResult(1, "p1", BetKind.ANTE, 10, Outcome.LOSE, returned=0, won=0, lost=10),
        BetResult(1, "p1", BetKind.PAIR_PLUS, 5, Outcome.WIN, returned=5, won=5, lost=0),
    )
    request = settlement_batch(
        "t", 7, Settlement(results), holds, {1: "p1"}, wallet.house(), wallet.player, wallet.pool
    )
    assert request.request_id == settlement_batch_id("t", 7) == "cas-t-r7-settle"
    assert [(r.hold_request_id, r.capture_amount, r.capture_request_id) for r in request.resolutions] == [
        ("h-ante-1", 6, "h-ante-1-c"),
        ("h-ante-2", 4, "h-ante-2-c"),
        ("h-pp", 0, ""),
    ]
    for _ in range(3):
        wallet.settle("t", 7, Settlement(results), holds, {1: "p1"})
        account = stack.account("p1")
        assert (account.balance, account.pending) == (100 - 10 + 5, 0)
    assert stack.house_balance() == 10 - 5 and stack.ledger_ok()


def test_a_hold_the_table_already_released_does_not_block_the_round(quiet_stack: Stack) -> None:
    """A crash between the wallet's Release (Clear Bets, a lowered bet) and the table's `unhold` log entry
    leaves a released hold in the round's book. The wallet refuses the whole batch (HOLD_NOT_PENDING); the
    table then settles around that hold: captures of the holds still its own and every payment in one batch,
    the rest released. A re-drive of that recovery is again a replay."""
    from pokerrules.casino import BetKind, BetResult, Outcome
    from servicekit.auth import Role

    from services.table.casino.money import Wallet

    stack = quiet_stack
    stack.fund("p1", 100)
    wallet = Wallet(stack.wallet.channel("table", Role.SERVICE))
    holds = [
        HeldBet(1, "ANTE", "x-ante-old", 10),  # lowered to 6: released, but its `unhold` was lost
        HeldBet(1, "ANTE", "x-ante-new", 6),
        HeldBet(1, "PAIR_PLUS", "x-pp", 5),  # cleared: released, `unhold` lost, the bet still in the book
        HeldBet(1, "SIX_CARD_BONUS", "x-six", 5),
    ]
    for held in holds:
        wallet.hold(held.hold_id, "p1", held.amount, "test")
    wallet.release("x-ante-old")
    wallet.release("x-pp")
    results = (
        BetResult(1, "p1", BetKind.ANTE, 6, Outcome.LOSE, returned=0, won=0, lost=6),
        BetResult(1, "p1", BetKind.PAIR_PLUS, 5, Outcome.WIN, returned=5, won=5, lost=0),
        BetResult(1, "p1", BetKind.SIX_CARD_BONUS, 5, Outcome.PUSH, returned=5, won=0, lost=0),
    )
    for _ in range(3):
        wallet.settle("t", 8, Settlement(results), holds, {1: "p1"})
        account = stack.account("p1")
        assert (account.balance, account.pending) == (100 - 6 + 5, 0)
    assert stack.house_balance() == 6 - 5 and stack.ledger_ok()
    table = wpb_grpc.WalletServiceStub(stack.wallet.channel("table", Role.SERVICE))  # the holds' maker
    statuses = {
        h.hold_id: table.GetHold(wpb.GetHoldRequest(hold_request_id=h.hold_id)).hold.status for h in holds
    }
    assert statuses == {
        "x-ante-old": wpb.HOLD_STATUS_RELEASED,
        "x-ante-new": wpb.HOLD_STATUS_CAPTURED,
        "x-pp": wpb.HOLD_STATUS_RELEASED,
        "x-six": wpb.HOLD_STATUS_RELEASED,
    }
