"""Stacks owed back to wallets (issue 13, finding 1): one payout the wallet refuses never holds back the
others; each failed payout backs off on the table's clock (1 s doubling to a minute), never retried
every tick; it stays owed in the store, counted in the metrics, and is paid once the wallet takes it; an
answer never says chips were returned that the wallet does not hold (LeaveTableResponse.pending,
PlayerLeft.pending); a stack above the wallet's largest transfer is paid in parts."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import prometheus_client
import pytest
from poker.table.v1 import table_service_pb2 as pb
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import auth, errors, testing
from servicekit.clients.wallet import WalletCalls
from servicekit.testing import RunningService, config_for_tests, running

from services.table.poker import payouts
from services.table.poker.cards import Dealer
from services.table.poker.money import Escrow
from services.table.poker.runtime import Options, PokerTable
from services.table.poker.store import TableStore
from services.table.poker.tables import parse_tables
from services.table.server import service_spec as table_spec
from services.wallet.server import service_spec as wallet_spec
from tests.table.poker.conftest import MsClock, Stack, Watcher, rid, table_config, wait_until

HU = parse_tables("hu:NLHE:50/100:2000-10000:6")[0]
_moves = itertools.count(1)


def _sample(name: str, **labels: str) -> float:
    return prometheus_client.REGISTRY.get_sample_value(name, labels) or 0.0


def _refusals() -> float:
    return _sample("poker_table_payout_failures_total", kind="refused")


def _account(wallet: wpb_grpc.WalletServiceStub, kind: int, owner: str) -> str:
    found = wallet.ListAccounts(wpb.ListAccountsRequest(kind=kind, owner=owner)).accounts
    if found:
        return str(found[0].account_id)
    made = wallet.CreateAccount(wpb.CreateAccountRequest(request_id=f"sink-{owner}", kind=kind, owner=owner))
    return str(made.account.account_id)


def _move_escrow(wallet: RunningService, table_id: str, chips: int) -> None:
    """Take chips out of the table's escrow (> 0) or give them back (< 0), as a broken ledger would: the
    wallet then refuses the payouts the escrow cannot cover (INSUFFICIENT_FUNDS), until it can again."""
    stub = wpb_grpc.WalletServiceStub(wallet.channel("table", auth.Role.SERVICE))
    escrow = _account(stub, wpb.ACCOUNT_KIND_TABLE_ESCROW, f"table:{table_id}")
    sink = _account(stub, wpb.ACCOUNT_KIND_PLAYER, "sink")
    source, target = (escrow, sink) if chips > 0 else (sink, escrow)
    stub.Transfer(
        wpb.TransferRequest(
            request_id=f"move-{next(_moves)}", from_account_id=source, to_account_id=target, amount=abs(chips)
        )
    )


@pytest.fixture
def paused(deps: tuple[Path, RunningService, RunningService]) -> Iterator[Stack]:
    """The table service with no hand ever starting (the pause between hands is longer than any test), so
    players sit and leave between hands."""
    data_dir, dealer, wallet = deps
    clock = MsClock()
    config = table_config(data_dir, dealer, wallet, poker_clock=clock, hand_pause_ms=10**12)
    with running(table_spec, config) as table:
        yield Stack(data_dir, dealer, wallet, table, clock)


def test_a_refused_payout_never_blocks_the_others_and_is_paid_once_the_wallet_takes_it(
    paused: Stack,
) -> None:
    stack = paused
    for player in ("ana", "bob"):
        stack.fund(player, 20_000)
    stack.join("ana", "hu", buy_in=5_000, seat=1)
    stack.join("bob", "hu", buy_in=3_000, seat=2)
    watcher = Watcher(stack.tables("eve"), "hu")
    _move_escrow(stack.wallet, "hu", 4_000)  # the escrow holds 4,000 of the 8,000 on the table
    refused = _refusals()

    ana = stack.tables("ana").LeaveTable(pb.LeaveTableRequest(request_id=rid(), table_id="hu"))
    assert (ana.returned, ana.pending) == (0, 5_000)  # owed, and said so: never "returned"
    bob = stack.tables("bob").LeaveTable(pb.LeaveTableRequest(request_id=rid(), table_id="hu"))
    assert (bob.returned, bob.pending) == (3_000, 0)  # paid although ana's payout before his is stuck
    assert stack.balance("bob") == 20_000 and stack.balance("ana") == 15_000
    assert _refusals() == refused + 1
    assert _sample("poker_table_payouts_pending") == 1
    assert _sample("poker_table_payouts_refused") == 1
    assert _sample("poker_table_payout_chips_pending") == 5_000
    left = wait_until(lambda: [e.player_left for e in watcher.events if e.HasField("player_left")][-2:])
    assert [(e.player_id, e.returned, e.pending) for e in left] == [("ana", 0, 5_000), ("bob", 0, 3_000)]
    watcher.close()

    _move_escrow(stack.wallet, "hu", -4_000)  # the ledger mended: the next attempt goes through
    stack.clock.advance(payouts.BACKOFF_MS)
    wait_until(lambda: stack.balance("ana") == 20_000)
    assert stack.escrow("hu") == 0 and stack.ledger_ok()
    wait_until(lambda: _sample("poker_table_payouts_pending") == 0)
    assert _sample("poker_table_payouts_refused") == 0


def _table(
    data_dir: Path, deps: tuple[Path, RunningService, RunningService], clock: MsClock
) -> tuple[PokerTable, TableStore]:
    _, dealer, wallet = deps
    token = auth.issue_token(auth.load_keys(data_dir), "table", auth.Role.SERVICE)
    store = TableStore(data_dir / "tables.sqlite3")
    table = PokerTable(
        HU.table_id,
        HU.settings,
        "",
        "",
        [],
        store,
        Escrow(WalletCalls(testing.channel(wallet.address, token), prefix="poker")),
        Dealer(testing.channel(dealer.address, token)),
        clock,
        Options(bot_pacing=False, hand_pause_ms=0),
    )
    table.recover()
    return table, store


def _fund(wallet: RunningService, player: str, chips: int) -> None:
    ops = wpb_grpc.WalletServiceStub(wallet.channel("ops", auth.Role.OPERATOR))
    account = _account(ops, wpb.ACCOUNT_KIND_PLAYER, player)
    ops.Issue(
        wpb.IssueRequest(
            request_id=f"i-{player}", account_id=account, amount=chips, reason=wpb.ISSUE_REASON_PROMOTION
        )
    )


def test_a_refused_payout_backs_off_on_the_tables_clock(
    deps: tuple[Path, RunningService, RunningService],
) -> None:
    data_dir, _, wallet = deps
    clock = MsClock()
    table, store = _table(data_dir, deps, clock)
    payouts.watch(store)
    try:
        _fund(wallet, "ana", 10_000)
        table.join("ana", 1, 5_000, None)
        _move_escrow(wallet, "hu", 1)  # one chip short: her payout is refused
        start = _refusals()
        assert table.leave("ana") == (0, 5_000, False)
        assert _refusals() == start + 1
        for attempt in range(1, 9):  # 1 s, 2 s, 4 s, ... capped at a minute
            wait = payouts.backoff_ms(attempt)
            assert wait == min(60_000, 1_000 * 2 ** (attempt - 1))
            for _ in range(50):  # the clock ticks every few ms: none of them retries before the wait is over
                table.settle_money()
            clock.advance(wait - 1)
            table.settle_money()
            assert _refusals() == start + attempt
            clock.advance(1)
            table.settle_money()
            assert _refusals() == start + attempt + 1
        (owed,) = store.open_payouts("hu")
        assert (owed.attempts, owed.last_error, owed.refused) == (9, "INSUFFICIENT_FUNDS", True)
        _move_escrow(wallet, "hu", -1)
        clock.advance(payouts.BACKOFF_CAP_MS)
        table.settle_money()
        assert store.open_payouts("hu") == [] and _sample("poker_table_payouts_pending") == 0
    finally:
        payouts.unwatch(store)
        store.close()


def test_a_stack_above_the_wallets_largest_transfer_is_paid_in_parts() -> None:
    parts = payouts.split("pt-t-q9-s1-out", "ana", 2 * payouts.MAX_TRANSFER + 5)
    assert [(p.transfer_id, p.amount) for p in parts] == [
        ("pt-t-q9-s1-out", payouts.MAX_TRANSFER),
        ("pt-t-q9-s1-out-2", payouts.MAX_TRANSFER),
        ("pt-t-q9-s1-out-3", 5),
    ]
    assert [p.amount for p in payouts.split("x", "ana", 7)] == [7]


def _undo_failures() -> float:
    return _sample("poker_table_buy_in_undo_failures_total")


def test_a_buy_in_left_open_by_an_outage_is_undone_on_the_same_back_off(
    deps: tuple[Path, RunningService, RunningService],
) -> None:
    data_dir, _, wallet = deps
    clock = MsClock()
    table, store = _table(data_dir, deps, clock)
    try:
        _fund(wallet, "ana", 10_000)
        port = wallet.service.internal_port  # where the table calls it
        wallet.service.stop(grace=0.5)
        with pytest.raises(errors.DomainError) as away:
            table.join("ana", 1, 5_000, None)
        assert away.value.reason == "WALLET_UNAVAILABLE"
        assert store.open_money("hu")  # the hold may have been made: to undo once the wallet answers
        start = _undo_failures()
        for _ in range(50):  # the clock ticks every few ms: only the first tries, then it waits 1 s
            table.settle_money()
        assert _undo_failures() == start + 1
        clock.advance(payouts.backoff_ms(1))
        table.settle_money()
        assert _undo_failures() == start + 2  # and now 2 s
        with running(wallet_spec, config_for_tests("wallet", data_dir, internal_port=port)) as back:

            def undone() -> bool:  # the channel may take a try or two to reach the wallet again
                clock.advance(payouts.BACKOFF_CAP_MS)
                table.settle_money()
                return not store.open_money("hu")

            wait_until(undone)
            ops = wpb_grpc.WalletServiceStub(back.channel("ops", auth.Role.OPERATOR))
            found = ops.ListAccounts(wpb.ListAccountsRequest(kind=wpb.ACCOUNT_KIND_PLAYER, owner="ana"))
            assert found.accounts[0].balance == 10_000 and found.accounts[0].pending == 0
    finally:
        store.close()
