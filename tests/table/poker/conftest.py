"""TableService with the REAL dealer and wallet, in-process over real sockets, sharing one data directory
(the table's self-minted service token is accepted by both). Time is virtual (integer milliseconds): tests
move the table's clock and the clock thread acts on its next tick. Bots act without pacing."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit.auth import Role
from servicekit.errors import details_of
from servicekit.testing import RunningService, config_for_tests, running

from services.dealer.server import service_spec as dealer_spec
from services.table.poker.tables import parse_tables
from services.table.server import service_spec as table_spec
from services.wallet.server import service_spec as wallet_spec
from tests.table.conftest import MsClock
from tests.table.conftest import wait_until as table_wait_until

# Heads-up-ready tables without bots (scripted players), and one with bots.
TABLES = "hu:NLHE:50/100:2000-10000:6,plo:PLO:50/100:2000-10000:6,botty:NLHE:50/100:2000-10000:6:bots=3"
_ids = itertools.count(1)


def rid(prefix: str = "r") -> str:
    return f"{prefix}-{next(_ids)}"


@dataclass
class Stack:
    data_dir: Path
    dealer: RunningService
    wallet: RunningService
    table: RunningService
    clock: MsClock
    _stubs: dict[tuple[str, Role], pb_grpc.TableServiceStub] = field(default_factory=dict)

    def tables(self, player: str, role: Role = Role.PLAYER) -> pb_grpc.TableServiceStub:
        if (player, role) not in self._stubs:
            self._stubs[player, role] = pb_grpc.TableServiceStub(self.table.channel(player, role))
        return self._stubs[player, role]

    @property
    def ops(self) -> wpb_grpc.WalletServiceStub:
        return wpb_grpc.WalletServiceStub(self.wallet.channel("ops", Role.OPERATOR))

    def fund(self, player: str, chips: int) -> str:
        account = self.ops.CreateAccount(
            wpb.CreateAccountRequest(request_id=f"acct-{player}", kind=wpb.ACCOUNT_KIND_PLAYER, owner=player)
        ).account.account_id
        self.ops.Issue(  # a new request id each time: funding a player twice adds chips twice
            wpb.IssueRequest(
                request_id=rid(f"issue-{player}"),
                account_id=account,
                amount=chips,
                reason=wpb.ISSUE_REASON_PROMOTION,
            )
        )
        return str(account)

    def balance(self, player: str, kind: int = wpb.ACCOUNT_KIND_PLAYER) -> int:
        found = self.ops.ListAccounts(wpb.ListAccountsRequest(kind=kind, owner=player))
        return int(found.accounts[0].balance) if found.accounts else 0

    def escrow(self, table_id: str) -> int:
        return self.balance(f"table:{table_id}", wpb.ACCOUNT_KIND_TABLE_ESCROW)

    def ledger_ok(self) -> bool:
        return bool(self.ops.GetLedgerSummary(wpb.GetLedgerSummaryRequest()).invariants_hold)

    def view(self, player: str, table_id: str) -> pb.TableView:
        return self.tables(player).GetTableView(pb.GetTableViewRequest(table_id=table_id)).view

    def join(self, player: str, table_id: str, buy_in: int = 5_000, seat: int = 0) -> pb.JoinTableResponse:
        return self.tables(player).JoinTable(
            pb.JoinTableRequest(request_id=rid("join"), table_id=table_id, seat=seat, buy_in=buy_in)
        )

    def act(self, player: str, table_id: str, kind: int, amount: int = 0) -> pb.ActResponse:
        view = self.view(player, table_id)
        return self.tables(player).Act(
            pb.ActRequest(
                request_id=rid("act"),
                table_id=table_id,
                expected_version=view.version,
                kind=kind,
                amount=amount,
            )
        )


def wait_until(check: Callable[[], Any], timeout: float = 10.0) -> Any:
    """Poll `check` until it returns something true (the clock thread acts on its next tick)."""
    return table_wait_until(check, timeout)


def reason(error: grpc.RpcError) -> str:
    return details_of(error).reason


def table_config(data_dir: Path, dealer: RunningService, wallet: RunningService, **extra: Any) -> Any:
    settings: dict[str, Any] = {
        "dealer_address": dealer.address,
        "wallet_address": wallet.address,
        "poker_tables": parse_tables(TABLES),
        "casino_tables": None,
        "bot_pacing": False,
        "hand_pause_ms": 0,
        "tick_seconds": 0.01,
        "full_history_services": frozenset({"audit"}),
        **extra,
    }
    return config_for_tests("table", data_dir, **settings)


@contextmanager
def _stack(data_dir: Path) -> Iterator[Stack]:
    with (
        running(dealer_spec, config_for_tests("dealer", data_dir)) as dealer,
        running(wallet_spec, config_for_tests("wallet", data_dir)) as wallet,
    ):
        clock = MsClock()
        with running(table_spec, table_config(data_dir, dealer, wallet, poker_clock=clock)) as table:
            yield Stack(data_dir, dealer, wallet, table, clock)


@pytest.fixture(scope="module")
def shared_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """One stack for a whole module whose tests keep out of each other's way (their own players and
    tables, relative assertions): starting three services per test is most of a contract test's time."""
    with _stack(tmp_path_factory.mktemp("poker")) as stack:
        yield stack


@pytest.fixture
def hu(shared_stack: Stack) -> str:
    """A new public NLHE 50/100 table (buy-in 2,000-10,000, six seats, no bots) on the module's stack."""
    settings = pb.TableSettings(
        game=pb.GAME_NO_LIMIT_HOLDEM,
        small_blind=50,
        big_blind=100,
        min_buy_in=2_000,
        max_buy_in=10_000,
        seats=6,
    )
    made = shared_stack.tables("ops", Role.OPERATOR).CreateTable(
        pb.CreateTableRequest(request_id=rid("hu"), settings=settings)
    )
    return str(made.table.table_id)


@pytest.fixture
def stack(deps: tuple[Path, RunningService, RunningService]) -> Iterator[Stack]:
    data_dir, dealer, wallet = deps
    clock = MsClock()
    with running(table_spec, table_config(data_dir, dealer, wallet, poker_clock=clock)) as table:
        yield Stack(data_dir, dealer, wallet, table, clock)


class Watcher:
    """One WatchTable stream read on a thread; `events` fills as they arrive; `close()` cancels it."""

    def __init__(
        self, stub: pb_grpc.TableServiceStub, table_id: str, from_seq: int = 0, only: tuple[str, ...] = ()
    ) -> None:
        self.events: list[pb.TableEvent] = []
        self.messages: list[list[pb.TableEvent]] = []  # the events of each stream message
        request = pb.WatchTableRequest(table_id=table_id, from_seq=from_seq, only=only)
        self._call = stub.WatchTable(request, timeout=60)
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for response in self._call:
                self.messages.append(list(response.events))
                self.events.extend(response.events)
        except grpc.RpcError:
            pass

    def kinds(self) -> list[str]:
        return [str(e.WhichOneof("event")) for e in list(self.events)]

    def close(self) -> None:
        self._call.cancel()
        self._thread.join(5)


def chips_on_table(view: pb.TableView) -> int:
    """Stacks plus the pot of the hand in play: what the table's escrow must hold."""
    return sum(s.stack for s in view.table.seats) + (view.pot if view.hand_in_play else 0)


def heads_up(stack: Stack, table_id: str = "hu", a: str = "ana", b: str = "bob") -> pb.TableView:
    """Two funded players seated 1 and 2; returns a view once the first hand is dealt."""
    stack.fund(a, 20_000)
    stack.fund(b, 20_000)
    stack.join(a, table_id, seat=1)
    stack.join(b, table_id, seat=2)
    return wait_until(lambda: (v := stack.view(a, table_id)).hand_in_play and v)  # type: ignore[no-any-return]


def to_act(stack: Stack, table_id: str, players: tuple[str, ...] = ("ana", "bob")) -> str:
    view = stack.view(players[0], table_id)
    return next(p for p in players if stack.view(p, table_id).your_seat == view.seat_to_act)
