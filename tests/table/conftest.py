"""The table service with the REAL dealer and wallet, in-process over real sockets, sharing one data
directory (so the table's self-minted service token is accepted by both). Time is virtual: tests move the
table's clock and the clock thread acts on the next tick."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import grpc
import pytest
from poker.table.v1 import casino_service_pb2 as pb
from poker.table.v1 import casino_service_pb2_grpc as pb_grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit.auth import Role
from servicekit.testing import RunningService, config_for_tests, running

from services.dealer.server import service_spec as dealer_spec
from services.table.casino.tables import parse_tables
from services.table.server import service_spec as table_spec
from services.wallet.server import service_spec as wallet_spec

TABLES = (
    "thb-touch:TEXAS_HOLDEM_BONUS:1,thb-live:TEXAS_HOLDEM_BONUS:7,ch-touch:CASINO_HOLDEM:1,"
    "ch-live:CASINO_HOLDEM:7,tcp-touch:THREE_CARD_POKER:3,tcp-live:THREE_CARD_POKER:7"
)


_ids = itertools.count(1)


def rid(prefix: str = "r") -> str:
    """A fresh request id for a mutating call (each change is a new request)."""
    return f"{prefix}-{next(_ids)}"


Now = TypeVar("Now", int, float)


class ManualClock(Generic[Now]):
    """A clock only the test moves; the service's clock thread reads it, hence the lock."""

    def __init__(self, start: Now) -> None:
        self.now: Now = start
        self._lock = threading.Lock()

    def __call__(self) -> Now:
        with self._lock:
            return self.now

    def advance(self, by: Now) -> None:
        with self._lock:
            self.now += by


class FakeClock(ManualClock[float]):
    """Seconds, as the casino tables count (`clock=`)."""

    def __init__(self) -> None:
        super().__init__(1000.0)


class MsClock(ManualClock[int]):
    """Integer milliseconds, as the poker tables count (`poker_clock=`)."""

    def __init__(self) -> None:
        super().__init__(1_000_000)


@dataclass
class Stack:
    data_dir: Path
    dealer: RunningService
    wallet: RunningService
    table: RunningService
    clock: FakeClock
    _stubs: dict[str, pb_grpc.CasinoServiceStub] = field(default_factory=dict)

    def casino(self, player: str) -> pb_grpc.CasinoServiceStub:
        if player not in self._stubs:
            self._stubs[player] = pb_grpc.CasinoServiceStub(self.table.channel(player, Role.PLAYER))
        return self._stubs[player]

    @property
    def operator(self) -> wpb_grpc.WalletServiceStub:
        return wpb_grpc.WalletServiceStub(self.wallet.channel("ops", Role.OPERATOR))

    def fund(self, player: str, chips: int) -> str:
        account = self.operator.CreateAccount(
            wpb.CreateAccountRequest(request_id=f"acct-{player}", kind=wpb.ACCOUNT_KIND_PLAYER, owner=player)
        ).account.account_id
        self.operator.Issue(
            wpb.IssueRequest(
                request_id=f"issue-{player}",
                account_id=account,
                amount=chips,
                reason=wpb.ISSUE_REASON_PROMOTION,
            )
        )
        return account

    def account(self, player: str) -> wpb.Account:
        found = self.operator.ListAccounts(
            wpb.ListAccountsRequest(kind=wpb.ACCOUNT_KIND_PLAYER, owner=player)
        )
        return found.accounts[0]

    def house_balance(self) -> int:
        found = self.operator.ListAccounts(
            wpb.ListAccountsRequest(kind=wpb.ACCOUNT_KIND_HOUSE, owner="casino")
        )
        return found.accounts[0].balance if found.accounts else 0

    def ledger_ok(self) -> bool:
        return bool(self.operator.GetLedgerSummary(wpb.GetLedgerSummaryRequest()).invariants_hold)

    def round(self, player: str, table_id: str) -> pb.RoundView:
        return self.casino(player).GetRound(pb.GetRoundRequest(table_id=table_id)).round

    def wait_for(self, check: Callable[[], Any], timeout: float = 5.0) -> Any:
        return wait_until(check, timeout)


def wait_until(check: Callable[[], Any], timeout: float = 5.0) -> Any:
    """Poll `check` until it returns something true (the clock thread acts on its next tick)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.02)


def table_config(data_dir: Path, dealer: RunningService, wallet: RunningService, **extra: Any) -> Any:
    return config_for_tests(
        "table",
        data_dir,
        dealer_address=dealer.address,
        wallet_address=wallet.address,
        casino_tables=parse_tables(TABLES),
        betting_seconds=15.0,
        decision_seconds=20.0,
        tick_seconds=0.02,
        **extra,
    )


@pytest.fixture
def deps(tmp_path: Path) -> Iterator[tuple[Path, RunningService, RunningService]]:
    with (
        running(dealer_spec, config_for_tests("dealer", tmp_path)) as dealer,
        running(wallet_spec, config_for_tests("wallet", tmp_path)) as wallet,
    ):
        yield tmp_path, dealer, wallet


@pytest.fixture
def stack(deps: tuple[Path, RunningService, RunningService]) -> Iterator[Stack]:
    data_dir, dealer, wallet = deps
    clock = FakeClock()
    with running(table_spec, table_config(data_dir, dealer, wallet, clock=clock)) as table:
        yield Stack(data_dir, dealer, wallet, table, clock)


def bets(**amounts: int) -> list[pb.Bet]:
    return [pb.Bet(kind=k.upper(), amount=v) for k, v in amounts.items()]


def rpc_reason(error: grpc.RpcError) -> str:
    from servicekit.errors import details_of

    return details_of(error).reason
