"""Issue 13 finding 1, the wallet side, over real gRPC with real tokens on both stores: players take
(squat) the request ids the table service will use next, with their own CreateAccount, and the table
service's settlements, payouts and buy-ins still go through; a player (even one whose subject is
`table` or `operator`) can neither find nor touch the service's holds and transfers by those ids; and a
player's footprint in the wallet is bounded: its own player account, nothing more."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import grpc
import pytest
from poker.wallet.v1 import wallet_service_pb2 as pb
from poker.wallet.v1 import wallet_service_pb2_grpc as pb_grpc
from pokerrules.casino import BetKind, BetResult, Outcome, Settlement
from servicekit.auth import Caller, Role
from servicekit.clients.wallet import WalletCalls
from servicekit.errors import details_of
from servicekit.testing import RunningService, config_for_tests, running

from services.table.casino.money import HeldBet
from services.table.casino.money import Wallet as CasinoWallet
from services.table.poker.money import Escrow
from services.wallet.callers import scope
from services.wallet.server import service_spec

from .conftest import LedgerLocation

# The table service's next request ids (services/table/poker/money.py, casino/money.py, servicekit/clients/wallet.py).
BUY_IN = "pt-t1-m1-s1-buy_in"
CRASHED_BUY_IN = "pt-t1-m2-s2-buy_in"
PAYOUT = "pt-t1-q1-s1-out"
ANTE = "cas-c1-r1-s1-ANTE-0"
PAIR_PLUS = "cas-c1-r1-s1-PAIR_PLUS-0"
SETTLE = "cas-c1-r1-settle"
NEXT_IDS = [
    f"table-acct-{pb.ACCOUNT_KIND_TABLE_ESCROW}-table:t1",
    f"casino-acct-{pb.ACCOUNT_KIND_HOUSE}-casino",
    BUY_IN,
    f"{BUY_IN}-c",
    f"{BUY_IN}-undo",
    CRASHED_BUY_IN,
    f"{CRASHED_BUY_IN}-r",
    PAYOUT,
    ANTE,
    f"{ANTE}-c",
    PAIR_PLUS,
    f"{PAIR_PLUS}-r",
    SETTLE,
    f"{SETTLE}-s1",
    "fund-ana",
]


@contextmanager
def wallet(location: LedgerLocation) -> Iterator[RunningService]:
    config = config_for_tests("wallet", location.data_dir, database_url=location.database_url)
    with running(service_spec, config) as svc:
        yield svc


def stub(svc: RunningService, subject: str, role: Role = Role.PLAYER) -> pb_grpc.WalletServiceStub:
    return pb_grpc.WalletServiceStub(svc.channel(subject, role))


def refusal(fn, request):  # type: ignore[no-untyped-def]
    with pytest.raises(grpc.RpcError) as info:
        fn(request)
    return details_of(info.value)


def squat(svc: RunningService, request_ids: list[str]) -> dict[str, pb.CreateAccountRequest]:
    """Each id taken by a player's own CreateAccount (one account per player: one squatter per id), the
    last ones by players whose subjects are `table` and `operator`. Returns the squatters' requests."""
    subjects = [f"mallory-{n}" for n in range(len(request_ids) - 2)] + ["table", "operator"]
    requests = {}
    for request_id, subject in zip(request_ids, subjects, strict=True):
        request = pb.CreateAccountRequest(request_id=request_id, kind=pb.ACCOUNT_KIND_PLAYER, owner=subject)
        assert stub(svc, subject).CreateAccount(request).account.owner == subject
        requests[request_id] = request
    return requests


def test_squatted_request_ids_do_not_stop_the_table_service(location: LedgerLocation) -> None:
    """Every mutating RPC, with the ids players took first: each succeeds, a repeat returns the first
    result, the same id with another parameter is REQUEST_ID_REUSED (the ledger unchanged)."""
    with wallet(location) as svc:
        squatted = squat(svc, NEXT_IDS)
        table = stub(svc, "table", Role.SERVICE)
        ana = table.CreateAccount(
            pb.CreateAccountRequest(request_id="acct-ana", kind=pb.ACCOUNT_KIND_PLAYER, owner="ana")
        ).account.account_id
        escrow = table.CreateAccount(
            pb.CreateAccountRequest(
                request_id=NEXT_IDS[0], kind=pb.ACCOUNT_KIND_TABLE_ESCROW, owner="table:t1"
            )
        ).account.account_id
        house = table.CreateAccount(
            pb.CreateAccountRequest(request_id=NEXT_IDS[1], kind=pb.ACCOUNT_KIND_HOUSE, owner="casino")
        ).account.account_id
        fund = pb.IssueRequest(
            request_id="fund-ana", account_id=ana, amount=1000, reason=pb.ISSUE_REASON_PURCHASE
        )
        hold = pb.HoldRequest(request_id=BUY_IN, from_account_id=ana, to_account_id=escrow, amount=200)
        capture = pb.CaptureRequest(request_id=f"{BUY_IN}-c", hold_request_id=BUY_IN, amount=200)
        payout = pb.TransferRequest(request_id=PAYOUT, from_account_id=escrow, to_account_id=ana, amount=150)
        undo = pb.TransferRequest(
            request_id=f"{BUY_IN}-undo", from_account_id=escrow, to_account_id=ana, amount=50
        )
        crashed = pb.HoldRequest(
            request_id=CRASHED_BUY_IN, from_account_id=ana, to_account_id=escrow, amount=70
        )
        release = pb.ReleaseRequest(request_id=f"{CRASHED_BUY_IN}-r", hold_request_id=CRASHED_BUY_IN)
        ante = pb.HoldRequest(request_id=ANTE, from_account_id=ana, to_account_id=house, amount=10)
        pair_plus = pb.HoldRequest(request_id=PAIR_PLUS, from_account_id=ana, to_account_id=house, amount=5)
        settle = pb.TransferBatchRequest(
            request_id=SETTLE,
            resolutions=[
                pb.HoldResolution(hold_request_id=ANTE, capture_amount=10, capture_request_id=f"{ANTE}-c"),
                pb.HoldResolution(hold_request_id=PAIR_PLUS),
            ],
            transfers=[
                pb.TransferSpec(
                    request_id=f"{SETTLE}-s1",
                    postings=[
                        pb.Posting(account_id=house, side=pb.POSTING_SIDE_DEBIT, amount=5),
                        pb.Posting(account_id=ana, side=pb.POSTING_SIDE_CREDIT, amount=5),
                    ],
                )
            ],
        )
        calls = [
            (table.Issue, fund),
            (table.Hold, hold),
            (table.Capture, capture),
            (table.Transfer, payout),
            (table.Transfer, undo),
            (table.Hold, crashed),
            (table.Release, release),
            (table.Hold, ante),
            (table.Hold, pair_plus),
            (table.TransferBatch, settle),
        ]
        first = [fn(request) for fn, request in calls]
        ledger = table.GetLedgerSummary(pb.GetLedgerSummaryRequest())
        assert ledger.invariants_hold, ledger.violations
        balance = table.GetAccount(pb.GetAccountRequest(account_id=ana)).account.balance
        assert balance == 1000 - 200 + 150 + 50 - 10 + 5
        # Repeats: the first result (a hold as it is now: it may have been captured since).
        for (fn, request), answer in zip(calls, first, strict=True):
            again = fn(request)
            if isinstance(answer, pb.HoldResponse):
                assert again.hold.hold_id == answer.hold.hold_id  # type: ignore[attr-defined]
            else:
                assert again == answer, request
        # The same ids with another parameter: refused, nothing changes.
        changed = [
            (
                table.Issue,
                pb.IssueRequest(request_id="fund-ana", account_id=ana, amount=999, reason=fund.reason),
            ),
            (
                table.Hold,
                pb.HoldRequest(request_id=BUY_IN, from_account_id=ana, to_account_id=escrow, amount=1),
            ),
            (table.Capture, pb.CaptureRequest(request_id=f"{BUY_IN}-c", hold_request_id=BUY_IN, amount=199)),
            (
                table.Transfer,
                pb.TransferRequest(request_id=PAYOUT, from_account_id=escrow, to_account_id=ana, amount=1),
            ),
            (table.Release, pb.ReleaseRequest(request_id=f"{CRASHED_BUY_IN}-r", hold_request_id=ANTE)),
            (
                table.TransferBatch,
                pb.TransferBatchRequest(request_id=SETTLE, resolutions=settle.resolutions[:1]),
            ),
            (
                table.CreateAccount,
                pb.CreateAccountRequest(request_id=NEXT_IDS[1], kind=pb.ACCOUNT_KIND_HOUSE, owner="x"),
            ),
        ]
        for fn, request in changed:
            error = refusal(fn, request)
            assert (error.code, error.reason) == (grpc.StatusCode.ALREADY_EXISTS, "REQUEST_ID_REUSED"), (
                request
            )
        assert table.GetAccount(pb.GetAccountRequest(account_id=ana)).account.balance == balance
        assert table.GetLedgerSummary(pb.GetLedgerSummaryRequest()).transfers == ledger.transfers
        # The squatters' own repeats are theirs: their own accounts.
        for request in squatted.values():
            again = stub(svc, request.owner).CreateAccount(request).account
            assert (again.kind, again.owner) == (pb.ACCOUNT_KIND_PLAYER, request.owner)


def test_a_player_named_table_or_operator_is_neither(location: LedgerLocation) -> None:
    """A player whose subject is `table` finds none of the table service's holds or transfers by their
    request ids, and cannot move, release or capture anything."""
    with wallet(location) as svc:
        table = stub(svc, "table", Role.SERVICE)
        ana = table.CreateAccount(
            pb.CreateAccountRequest(request_id="a", kind=pb.ACCOUNT_KIND_PLAYER, owner="ana")
        ).account.account_id
        house = table.CreateAccount(
            pb.CreateAccountRequest(request_id="h", kind=pb.ACCOUNT_KIND_HOUSE, owner="casino")
        ).account.account_id
        table.Issue(
            pb.IssueRequest(request_id="i", account_id=ana, amount=100, reason=pb.ISSUE_REASON_PURCHASE)
        )
        table.Hold(pb.HoldRequest(request_id=ANTE, from_account_id=ana, to_account_id=house, amount=10))
        table.Transfer(
            pb.TransferRequest(request_id=PAYOUT, from_account_id=house, to_account_id=ana, amount=3)
        )
        for subject in ("table", "operator"):
            impostor = stub(svc, subject)
            for fn, request in (
                (impostor.GetHold, pb.GetHoldRequest(hold_request_id=ANTE)),
                (impostor.GetTransfer, pb.GetTransferRequest(transfer_request_id=PAYOUT)),
            ):
                assert refusal(fn, request).code is grpc.StatusCode.NOT_FOUND
            for fn, request in (
                (impostor.Release, pb.ReleaseRequest(request_id="x", hold_request_id=ANTE)),
                (impostor.Capture, pb.CaptureRequest(request_id="x", hold_request_id=ANTE)),
                (
                    impostor.Transfer,
                    pb.TransferRequest(request_id=PAYOUT, from_account_id=ana, to_account_id=house, amount=3),
                ),
                (impostor.GetLedgerSummary, pb.GetLedgerSummaryRequest()),
            ):
                assert refusal(fn, request).code is grpc.StatusCode.PERMISSION_DENIED
        held = table.GetHold(pb.GetHoldRequest(hold_request_id=ANTE)).hold
        assert held.status == pb.HOLD_STATUS_PENDING
        assert table.GetAccount(pb.GetAccountRequest(account_id=ana)).account.balance == 103


def test_the_table_services_money_code_works_with_squatted_ids(location: LedgerLocation) -> None:
    """The wallet's callers in the tree, over the real wallet: a poker buy-in, its crash recovery
    (`Escrow.undo_buy_in` finds the hold by its request id), a payout, and a casino round settled in one
    batch, then settled around a hold the table had released, with every request id squatted first."""
    with wallet(location) as svc:
        squat(
            svc,
            [
                BUY_IN,
                f"{BUY_IN}-c",
                f"{BUY_IN}-undo",
                CRASHED_BUY_IN,
                f"{CRASHED_BUY_IN}-r",
                PAYOUT,
                ANTE,
                f"{ANTE}-c",
                PAIR_PLUS,
                f"{PAIR_PLUS}-r",
                SETTLE,
                f"{SETTLE}-s1",
                "cas-c1-r2-s1-ANTE-0",
                "cas-c1-r2-settle",
            ],
        )
        calls = WalletCalls(svc.channel("table", Role.SERVICE), prefix="table")
        escrow = Escrow(calls)
        ana = escrow.player("ana", create=True)
        ops = stub(svc, "ops", Role.OPERATOR)
        ops.Issue(
            pb.IssueRequest(request_id="i", account_id=ana, amount=1000, reason=pb.ISSUE_REASON_PROMOTION)
        )
        escrow.buy_in("t1", BUY_IN, "ana", 200)
        escrow.undo_buy_in("t1", BUY_IN, "ana")  # committed at the wallet, not at the table: all back
        escrow.undo_buy_in("t1", BUY_IN, "ana")  # idempotent
        calls.hold(
            pb.HoldRequest(
                request_id=CRASHED_BUY_IN, from_account_id=ana, to_account_id=escrow.escrow("t1"), amount=70
            ),
            "refused",
        )
        escrow.undo_buy_in("t1", CRASHED_BUY_IN, "ana")  # the table crashed between Hold and Capture
        assert ops.GetAccount(pb.GetAccountRequest(account_id=ana)).account.pending == 0
        escrow.buy_in("t1", "pt-t1-m3-s1-buy_in", "ana", 300)
        escrow.pay_out("t1", PAYOUT, "ana", 300)
        escrow.pay_out("t1", PAYOUT, "ana", 300)  # a retry is a replay
        assert escrow.escrow_balance("t1") == 0
        casino = CasinoWallet(svc.channel("table", Role.SERVICE))
        holds = [HeldBet(1, "ANTE", ANTE, 10), HeldBet(1, "PAIR_PLUS", PAIR_PLUS, 5)]
        for held in holds:
            casino.hold(held.hold_id, "ana", held.amount, "test")
        results = (
            BetResult(1, "ana", BetKind.ANTE, 10, Outcome.LOSE, returned=0, won=0, lost=10),
            BetResult(1, "ana", BetKind.PAIR_PLUS, 5, Outcome.WIN, returned=5, won=5, lost=0),
        )
        for _ in range(2):
            casino.settle("c1", 1, Settlement(results), holds, {1: "ana"})
        second = [
            HeldBet(1, "ANTE", "cas-c1-r2-s1-ANTE-0", 10),
            HeldBet(1, "PAIR_PLUS", "cas-c1-r2-s1-PP-0", 5),
        ]
        for held in second:
            casino.hold(held.hold_id, "ana", held.amount, "test")
        casino.release("cas-c1-r2-s1-PP-0")  # a Clear Bets whose `unhold` a crash lost
        for _ in range(2):
            casino.settle("c1", 2, Settlement(results), second, {1: "ana"})
        account = ops.GetAccount(pb.GetAccountRequest(account_id=ana)).account
        assert (account.balance, account.pending) == (1000 - 10 + 5 - 10 + 5, 0)
        summary = ops.GetLedgerSummary(pb.GetLedgerSummaryRequest())
        assert summary.invariants_hold, summary.violations


def _stored_requests(location: LedgerLocation, caller: str) -> int:
    sql = "SELECT COUNT(*) FROM requests WHERE caller = ?"
    if location.backend == "sqlite":
        import sqlite3

        db = sqlite3.connect(location.data_dir / "wallet.sqlite3")
        try:
            return int(db.execute(sql, (caller,)).fetchone()[0])
        finally:
            db.close()
    import psycopg

    with psycopg.connect(location.database_url) as conn:
        row = conn.execute(sql.replace("?", "%s"), (caller,)).fetchone()
        assert row is not None
        return int(row[0])


def test_a_players_footprint_is_its_own_account(location: LedgerLocation) -> None:
    """A player may open only its own PLAYER account, so at most one (one per kind and owner); every
    other CreateAccount is refused and stores nothing, whatever its request id; it touches only its own
    accounts and holds and never moves chips."""
    with wallet(location) as svc:
        mallory = stub(svc, "mallory")
        own = mallory.CreateAccount(
            pb.CreateAccountRequest(request_id="r-0", kind=pb.ACCOUNT_KIND_PLAYER, owner="mallory")
        ).account
        for n in range(1, 30):
            again = pb.CreateAccountRequest(request_id=f"r-{n}", kind=pb.ACCOUNT_KIND_PLAYER, owner="mallory")
            assert refusal(mallory.CreateAccount, again).reason == "ACCOUNT_EXISTS"
        for kind, owner in (
            (pb.ACCOUNT_KIND_PLAYER, "ana"),
            (pb.ACCOUNT_KIND_JACKPOT_POOL, "mallory"),
            (pb.ACCOUNT_KIND_TABLE_ESCROW, "mallory"),
            (pb.ACCOUNT_KIND_HOUSE, "casino"),
        ):
            request = pb.CreateAccountRequest(request_id="r-x", kind=kind, owner=owner)
            assert refusal(mallory.CreateAccount, request).code is grpc.StatusCode.PERMISSION_DENIED
        assert [a.account_id for a in mallory.ListAccounts(pb.ListAccountsRequest()).accounts] == [
            own.account_id
        ]
        assert _stored_requests(location, scope(Caller("mallory", Role.PLAYER))) == 1
        # Only its own accounts and holds.
        table = stub(svc, "table", Role.SERVICE)
        ana = table.CreateAccount(
            pb.CreateAccountRequest(request_id="a", kind=pb.ACCOUNT_KIND_PLAYER, owner="ana")
        ).account.account_id
        table.Issue(
            pb.IssueRequest(request_id="i", account_id=ana, amount=50, reason=pb.ISSUE_REASON_PURCHASE)
        )
        table.Issue(
            pb.IssueRequest(
                request_id="j", account_id=own.account_id, amount=50, reason=pb.ISSUE_REASON_PURCHASE
            )
        )
        hers = table.Hold(
            pb.HoldRequest(request_id="h1", from_account_id=ana, to_account_id=own.account_id, amount=5)
        )
        mine = table.Hold(
            pb.HoldRequest(request_id="h2", from_account_id=own.account_id, to_account_id=ana, amount=5)
        )
        denied = grpc.StatusCode.PERMISSION_DENIED
        assert refusal(mallory.GetHold, pb.GetHoldRequest(hold_id=hers.hold.hold_id)).code is denied
        assert mallory.GetHold(pb.GetHoldRequest(hold_id=mine.hold.hold_id)).hold.amount == 5
        assert refusal(mallory.GetAccount, pb.GetAccountRequest(account_id=ana)).code is denied
        for fn, request in (
            (mallory.Release, pb.ReleaseRequest(request_id="x", hold_id=mine.hold.hold_id)),
            (mallory.Capture, pb.CaptureRequest(request_id="x", hold_id=mine.hold.hold_id)),
            (
                mallory.Hold,
                pb.HoldRequest(request_id="x", from_account_id=ana, to_account_id=own.account_id, amount=1),
            ),
            (
                mallory.Transfer,
                pb.TransferRequest(
                    request_id="x", from_account_id=ana, to_account_id=own.account_id, amount=1
                ),
            ),
            (
                mallory.TransferBatch,
                pb.TransferBatchRequest(
                    request_id="x", resolutions=[pb.HoldResolution(hold_id=mine.hold.hold_id)]
                ),
            ),
            (
                mallory.Issue,
                pb.IssueRequest(
                    request_id="x", account_id=own.account_id, amount=1, reason=pb.ISSUE_REASON_PURCHASE
                ),
            ),
        ):
            assert refusal(fn, request).code is denied
        assert _stored_requests(location, scope(Caller("mallory", Role.PLAYER))) == 1
        assert table.GetAccount(pb.GetAccountRequest(account_id=own.account_id)).account.pending == 5


def test_malformed_ids_in_reads_are_invalid_and_never_echoed(location: LedgerLocation) -> None:
    """Malformed ids, owners and page tokens are INVALID_ARGUMENT naming the field (never echoed); unknown
    ids and request ids NOT_FOUND."""
    with wallet(location) as svc:
        table = stub(svc, "table", Role.SERVICE)
        huge = "x" * 100_000
        ana = table.CreateAccount(
            pb.CreateAccountRequest(request_id="a", kind=pb.ACCOUNT_KIND_PLAYER, owner="ana")
        ).account.account_id
        for fn, request, field in (
            (table.GetHold, pb.GetHoldRequest(hold_request_id=huge), "hold_request_id"),
            (table.GetHold, pb.GetHoldRequest(hold_id=huge), "hold_id"),
            (table.GetHold, pb.GetHoldRequest(), "hold_id"),
            (table.GetTransfer, pb.GetTransferRequest(transfer_request_id="bad id"), "transfer_request_id"),
            (table.GetTransfer, pb.GetTransferRequest(transfer_id=huge), "transfer_id"),
            (table.GetAccount, pb.GetAccountRequest(account_id=huge), "account_id"),
            (table.Capture, pb.CaptureRequest(request_id="c", hold_request_id=huge), "hold_request_id"),
            (table.Release, pb.ReleaseRequest(request_id="r"), "hold_id"),
            (table.ListAccounts, pb.ListAccountsRequest(owner=huge), "owner"),
            (table.ListAccounts, pb.ListAccountsRequest(page_token=huge), "page_token"),
            (table.ListTransfers, pb.ListTransfersRequest(account_id=ana, page_token=huge), "page_token"),
        ):
            with pytest.raises(grpc.RpcError) as info:
                fn(request)
            error = details_of(info.value)
            assert error.code is grpc.StatusCode.INVALID_ARGUMENT and error.violations[0].field == field
            assert huge not in (info.value.details() or "")
        for fn, request, reason in (
            (table.GetHold, pb.GetHoldRequest(hold_request_id="never"), "HOLD_NOT_FOUND"),
            (table.GetTransfer, pb.GetTransferRequest(transfer_request_id="never"), "TRANSFER_NOT_FOUND"),
            (table.Release, pb.ReleaseRequest(request_id="r", hold_request_id="never"), "HOLD_NOT_FOUND"),
        ):
            error = refusal(fn, request)
            assert (error.code, error.reason) == (grpc.StatusCode.NOT_FOUND, reason)
