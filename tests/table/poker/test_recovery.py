"""Recovery of a table's money and seats without a process kill: the runtime over the real wallet and
dealer. A buy-in asked of the wallet but never committed at the table (the service died in between) is
undone at recovery; a table between hands comes back from its snapshot; a stack owed to a wallet is paid."""

from __future__ import annotations

from pathlib import Path

from poker.table.v1 import table_service_pb2 as pb
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import auth, testing
from servicekit.clients.wallet import WalletCalls
from servicekit.testing import RunningService

from services.table.poker.cards import Dealer
from services.table.poker.money import BUY_IN_HOLD_TTL_MS, Escrow
from services.table.poker.runtime import Options, PokerTable
from services.table.poker.store import TableStore
from services.table.poker.tables import parse_tables
from tests.table.conftest import wait_until
from tests.table.poker.conftest import MsClock

HU = parse_tables("hu:NLHE:50/100:2000-10000:6")[0]


def _table(
    data_dir: Path, dealer: RunningService, wallet: RunningService
) -> tuple[PokerTable, Escrow, TableStore]:
    token = auth.issue_token(auth.load_keys(data_dir), "table", auth.Role.SERVICE)
    escrow = Escrow(WalletCalls(testing.channel(wallet.address, token), prefix="poker"))
    store = TableStore(data_dir / "tables.sqlite3")
    table = PokerTable(
        HU.table_id,
        HU.settings,
        "",
        "",
        [],
        store,
        escrow,
        Dealer(testing.channel(dealer.address, token)),
        MsClock(),
        Options(bot_pacing=False, hand_pause_ms=0),
    )
    return table, escrow, store


def _fund(wallet: RunningService, player: str, chips: int) -> wpb_grpc.WalletServiceStub:
    ops = wpb_grpc.WalletServiceStub(wallet.channel("ops", auth.Role.OPERATOR))
    account = ops.CreateAccount(
        wpb.CreateAccountRequest(request_id=f"a-{player}", kind=wpb.ACCOUNT_KIND_PLAYER, owner=player)
    ).account.account_id
    ops.Issue(
        wpb.IssueRequest(
            request_id=f"i-{player}", account_id=account, amount=chips, reason=wpb.ISSUE_REASON_PROMOTION
        )
    )
    return ops


def _balance(ops: wpb_grpc.WalletServiceStub, kind: int, owner: str) -> int:
    found = ops.ListAccounts(wpb.ListAccountsRequest(kind=kind, owner=owner)).accounts
    return int(found[0].balance) if found else 0


def test_a_buy_in_never_committed_is_undone_at_recovery(
    deps: tuple[Path, RunningService, RunningService],
) -> None:
    data_dir, dealer, wallet = deps
    ops = _fund(wallet, "ana", 10_000)
    table, escrow, store = _table(data_dir, dealer, wallet)
    # The service logged its intent and the wallet moved the chips, then the service died.
    _, hold_id = store.begin_money("hu", "ana", 4_000, lambda n: f"pt-hu-m{n}-s1-buy_in")
    escrow.buy_in("hu", hold_id, "ana", 4_000)
    assert _balance(ops, wpb.ACCOUNT_KIND_PLAYER, "ana") == 6_000
    store.close()
    table, escrow, store = _table(data_dir, dealer, wallet)
    table.recover()
    assert _balance(ops, wpb.ACCOUNT_KIND_PLAYER, "ana") == 10_000
    assert _balance(ops, wpb.ACCOUNT_KIND_TABLE_ESCROW, "table:hu") == 0
    assert not table.state.seats
    # A new buy-in gets a new request id: nothing of the undone one is replayed.
    assert table.join("ana", 0, 3_000, None) == 1
    assert _balance(ops, wpb.ACCOUNT_KIND_TABLE_ESCROW, "table:hu") == 3_000
    assert ops.GetLedgerSummary(wpb.GetLedgerSummaryRequest()).invariants_hold
    store.close()


def test_a_table_between_hands_comes_back_from_its_snapshot(
    deps: tuple[Path, RunningService, RunningService],
) -> None:
    data_dir, dealer, wallet = deps
    _fund(wallet, "ana", 10_000)
    table, _, store = _table(data_dir, dealer, wallet)
    table.recovered = True
    table.join("ana", 3, 4_000, None)
    table.sit_out("ana")
    seq = table.seq
    store.close()
    again, _, store = _table(data_dir, dealer, wallet)
    again.recover()
    seat = again.state.seats[3]
    assert (seat.player, seat.stack, seat.sitting_out) == ("ana", 4_000, True)
    assert again.seq == seq
    assert again.info().seats[0].seat == 3
    assert again.info().settings.game == pb.GAME_NO_LIMIT_HOLDEM
    store.close()


def test_a_buy_in_hold_landing_after_its_undo_expires_and_frees_the_chips(
    deps: tuple[Path, RunningService, RunningService],
) -> None:
    """The table gave up on a buy-in and its undo found no hold; the Hold, delayed in the network, lands
    afterwards. It must not keep the player's chips reserved for good: buy-in holds carry a TTL."""
    data_dir, _, wallet = deps
    ops = _fund(wallet, "bea", 10_000)
    token = auth.issue_token(auth.load_keys(data_dir), "table", auth.Role.SERVICE)
    calls = WalletCalls(testing.channel(wallet.address, token), prefix="poker")
    escrow = Escrow(calls, hold_ttl_ms=300)
    escrow.undo_buy_in("hu", "late-hold", "bea")  # nothing to undo: the Hold has not arrived yet
    calls.hold(escrow.buy_in_hold("hu", "late-hold", "bea", 4_000), "refused")  # ...and now it does

    def available() -> int:
        found = ops.ListAccounts(wpb.ListAccountsRequest(kind=wpb.ACCOUNT_KIND_PLAYER, owner="bea"))
        return int(found.accounts[0].available)

    assert available() == 6_000
    wait_until(lambda: available() == 10_000)
    hold = calls.stub.GetHold(wpb.GetHoldRequest(hold_request_id="late-hold")).hold  # ids are per caller
    assert hold.status == wpb.HOLD_STATUS_EXPIRED
    assert _balance(ops, wpb.ACCOUNT_KIND_TABLE_ESCROW, "table:hu") == 0
    assert ops.GetLedgerSummary(wpb.GetLedgerSummaryRequest()).invariants_hold


def test_a_buy_in_hold_expires_on_its_own_by_default(
    deps: tuple[Path, RunningService, RunningService],
) -> None:
    data_dir, _, wallet = deps
    _fund(wallet, "cy", 10_000)
    token = auth.issue_token(auth.load_keys(data_dir), "table", auth.Role.SERVICE)
    escrow = Escrow(WalletCalls(testing.channel(wallet.address, token), prefix="poker"))
    assert escrow.buy_in_hold("hu", "h", "cy", 100).ttl_ms == BUY_IN_HOLD_TTL_MS > 0
