"""WalletService over real gRPC on a real socket, on both stores: error codes and reasons, who may do
what, idempotent replays (concurrent and after a restart), the summary, and domain metrics."""

from __future__ import annotations

import random
import time
import urllib.request
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import grpc
import pytest
from poker.wallet.v1 import wallet_service_pb2 as pb
from poker.wallet.v1 import wallet_service_pb2_grpc as pb_grpc
from servicekit.auth import Role
from servicekit.errors import details_of
from servicekit.testing import RunningService, config_for_tests, running

from services.wallet.server import service_spec

from .conftest import LedgerLocation


@contextmanager
def wallet(location: LedgerLocation) -> Iterator[RunningService]:
    config = config_for_tests("wallet", location.data_dir, database_url=location.database_url)
    with running(service_spec, config) as svc:
        yield svc


def stub(svc: RunningService, subject: str = "table", role: Role = Role.SERVICE) -> pb_grpc.WalletServiceStub:
    return pb_grpc.WalletServiceStub(svc.channel(subject, role))


def rid() -> str:
    return "r-" + uuid.uuid4().hex[:16]


def open_player(s: pb_grpc.WalletServiceStub, owner: str, chips: int = 0) -> str:
    account_id = s.CreateAccount(
        pb.CreateAccountRequest(request_id=rid(), kind=pb.ACCOUNT_KIND_PLAYER, owner=owner)
    ).account.account_id
    if chips:
        s.Issue(
            pb.IssueRequest(
                request_id=rid(), account_id=account_id, amount=chips, reason=pb.ISSUE_REASON_PURCHASE
            )
        )
    return account_id


def call_error(fn, request):  # type: ignore[no-untyped-def]
    with pytest.raises(grpc.RpcError) as info:
        fn(request)
    return details_of(info.value)


def test_errors_carry_codes_and_reasons(location: LedgerLocation) -> None:
    with wallet(location) as svc:
        s = stub(svc)
        alice, bob = open_player(s, "alice", 100), open_player(s, "bob")
        err = call_error(
            s.Transfer,
            pb.TransferRequest(request_id=rid(), from_account_id=alice, to_account_id=bob, amount=101),
        )
        assert (err.code, err.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "INSUFFICIENT_FUNDS")
        err = call_error(
            s.Transfer,
            pb.TransferRequest(request_id=rid(), from_account_id=alice, to_account_id=bob, amount=0),
        )
        assert err.code is grpc.StatusCode.INVALID_ARGUMENT and err.violations[0].field == "amount"
        # Too large: the request's own field is named, not the postings' (found by tests/suites' fuzz).
        err = call_error(
            s.Transfer,
            pb.TransferRequest(request_id=rid(), from_account_id=alice, to_account_id=bob, amount=2**63 - 1),
        )
        assert (err.reason, [v.field for v in err.violations]) == ("AMOUNT_TOO_LARGE", ["amount"])
        err = call_error(
            s.Transfer,
            pb.TransferRequest(request_id="bad id", from_account_id=alice, to_account_id=bob, amount=1),
        )
        assert err.code is grpc.StatusCode.INVALID_ARGUMENT and err.violations[0].field == "request_id"
        err = call_error(
            s.Transfer,
            pb.TransferRequest(request_id=rid(), from_account_id=alice, to_account_id="acc_ghost", amount=1),
        )
        assert (err.code, err.reason) == (grpc.StatusCode.NOT_FOUND, "ACCOUNT_NOT_FOUND")
        s.Transfer(pb.TransferRequest(request_id="dup", from_account_id=alice, to_account_id=bob, amount=5))
        err = call_error(
            s.Transfer,
            pb.TransferRequest(request_id="dup", from_account_id=alice, to_account_id=bob, amount=6),
        )
        assert (err.code, err.reason, err.metadata["differs"]) == (
            grpc.StatusCode.ALREADY_EXISTS,
            "REQUEST_ID_REUSED",
            "postings",
        )
        unbalanced = pb.TransferSpec(
            request_id=rid(),
            postings=[
                pb.Posting(account_id=alice, side=pb.POSTING_SIDE_DEBIT, amount=3),
                pb.Posting(account_id=bob, side=pb.POSTING_SIDE_CREDIT, amount=2),
            ],
        )
        err = call_error(s.TransferBatch, pb.TransferBatchRequest(request_id=rid(), transfers=[unbalanced]))
        assert (err.code, err.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "UNBALANCED")
        assert s.GetAccount(pb.GetAccountRequest(account_id=alice)).account.balance == 95
        summary = s.GetLedgerSummary(pb.GetLedgerSummaryRequest())
        assert summary.invariants_hold and summary.chips_issued == 100


def test_players_read_only_their_own_accounts_and_history(location: LedgerLocation) -> None:
    with wallet(location) as svc:
        s = stub(svc)
        alice, bob = open_player(s, "alice", 100), open_player(s, "bob", 10)
        a_to_b = s.Transfer(
            pb.TransferRequest(request_id="a-to-b", from_account_id=alice, to_account_id=bob, amount=5)
        ).transfer.transfer_id
        b_to_a = s.Transfer(
            pb.TransferRequest(request_id="b-to-a", from_account_id=bob, to_account_id=alice, amount=1)
        ).transfer.transfer_id
        as_alice = stub(svc, "alice", Role.PLAYER)
        assert as_alice.GetAccount(pb.GetAccountRequest(account_id=alice)).account.balance == 96
        history = as_alice.ListTransfers(pb.ListTransfersRequest(account_id=alice))
        assert [t.transfer_id for t in history.transfers][:2] == [b_to_a, a_to_b]
        listed = as_alice.ListAccounts(pb.ListAccountsRequest())
        assert [a.account_id for a in listed.accounts] == [alice]
        assert (
            as_alice.GetTransfer(pb.GetTransferRequest(transfer_id=a_to_b)).transfer.postings[0].amount == 5
        )
        # The request ids are the table service's: alice finds nothing by them.
        by_request = pb.GetTransferRequest(transfer_request_id="a-to-b")
        assert call_error(as_alice.GetTransfer, by_request).code is grpc.StatusCode.NOT_FOUND
        assert s.GetTransfer(by_request).transfer.transfer_id == a_to_b
        denied = grpc.StatusCode.PERMISSION_DENIED
        assert call_error(as_alice.GetAccount, pb.GetAccountRequest(account_id=bob)).code is denied
        assert call_error(as_alice.ListTransfers, pb.ListTransfersRequest(account_id=bob)).code is denied
        assert call_error(as_alice.ListAccounts, pb.ListAccountsRequest(owner="bob")).code is denied
        move = pb.TransferRequest(request_id=rid(), from_account_id=bob, to_account_id=alice, amount=1)
        assert call_error(as_alice.Transfer, move).code is denied
        issue = pb.IssueRequest(request_id=rid(), account_id=alice, amount=1, reason=pb.ISSUE_REASON_PURCHASE)
        assert call_error(as_alice.Issue, issue).code is denied
        assert call_error(as_alice.GetLedgerSummary, pb.GetLedgerSummaryRequest()).code is denied
        as_carol = stub(svc, "carol", Role.PLAYER)
        assert call_error(as_carol.GetTransfer, pb.GetTransferRequest(transfer_id=a_to_b)).code is denied
        # A player may open its own player account, and only that.
        own = pb.CreateAccountRequest(request_id=rid(), kind=pb.ACCOUNT_KIND_PLAYER, owner="carol")
        assert as_carol.CreateAccount(own).account.owner == "carol"
        other = pb.CreateAccountRequest(request_id=rid(), kind=pb.ACCOUNT_KIND_PLAYER, owner="dave")
        assert call_error(as_carol.CreateAccount, other).code is denied
        anonymous = pb_grpc.WalletServiceStub(svc.channel(None))
        assert (
            call_error(anonymous.GetAccount, pb.GetAccountRequest(account_id=alice)).code
            is grpc.StatusCode.UNAUTHENTICATED
        )


def _workload(s: pb_grpc.WalletServiceStub, alice: str, bob: str, escrow: str) -> list[tuple[str, object]]:
    """One of each mutating request, with fresh ids."""
    hold_id = rid()
    return [
        (
            "Issue",
            pb.IssueRequest(request_id=rid(), account_id=alice, amount=50, reason=pb.ISSUE_REASON_AD_REWARD),
        ),
        (
            "Transfer",
            pb.TransferRequest(request_id=rid(), from_account_id=alice, to_account_id=bob, amount=7),
        ),
        (
            "TransferBatch",
            pb.TransferBatchRequest(
                request_id=rid(),
                transfers=[
                    pb.TransferSpec(
                        request_id=rid(),
                        postings=[
                            pb.Posting(account_id=alice, side=pb.POSTING_SIDE_DEBIT, amount=3),
                            pb.Posting(account_id=escrow, side=pb.POSTING_SIDE_CREDIT, amount=3),
                        ],
                    )
                ],
            ),
        ),
        ("Hold", pb.HoldRequest(request_id=hold_id, from_account_id=alice, to_account_id=escrow, amount=20)),
        ("Capture", pb.CaptureRequest(request_id=rid(), hold_request_id=hold_id, amount=11)),
        (
            "CreateAccount",
            pb.CreateAccountRequest(request_id=rid(), kind=pb.ACCOUNT_KIND_JACKPOT_POOL, owner=rid()),
        ),
    ]


def test_replays_concurrent_and_after_restart_have_one_effect(location: LedgerLocation) -> None:
    """Each request is sent 1-5 times at once, then all again after a restart: one effect each."""
    rng = random.Random(4)
    rounds = 4
    with wallet(location) as svc:
        s = stub(svc)
        alice, bob = open_player(s, "alice", 1_000), open_player(s, "bob")
        escrow = s.CreateAccount(
            pb.CreateAccountRequest(request_id=rid(), kind=pb.ACCOUNT_KIND_TABLE_ESCROW, owner="table-1")
        ).account.account_id
        sent: list[tuple[str, object, object]] = []
        with ThreadPoolExecutor(max_workers=8) as pool:
            for _ in range(rounds):
                for method, request in _workload(s, alice, bob, escrow):
                    # Capture must follow its Hold: each request's copies go out together, requests in order.
                    copies = [pool.submit(getattr(s, method), request) for _ in range(rng.randint(1, 5))]
                    answers = [f.result() for f in copies]
                    assert all(a == answers[0] for a in answers), method
                    sent.append((method, request, answers[0]))
    with wallet(location) as svc:  # a restarted wallet over the same database
        s = stub(svc)
        with ThreadPoolExecutor(max_workers=8) as pool:
            for method, request, first in sent:
                answers = [
                    f.result()
                    for f in [pool.submit(getattr(s, method), request) for _ in range(rng.randint(1, 5))]
                ]
                if method == "Hold":  # the hold has been captured since: same hold, later status
                    assert all(a.hold.hold_id == first.hold.hold_id for a in answers)  # type: ignore[attr-defined]
                elif method == "CreateAccount":  # same account
                    assert all(a.account.account_id == first.account.account_id for a in answers)  # type: ignore[attr-defined]
                else:
                    assert all(a == first for a in answers), method
        balances = {
            a: s.GetAccount(pb.GetAccountRequest(account_id=a)).account.balance for a in (alice, bob, escrow)
        }
        assert balances == {
            alice: 1_000 + rounds * (50 - 7 - 3 - 11),
            bob: rounds * 7,
            escrow: rounds * (3 + 11),
        }
        summary = s.GetLedgerSummary(pb.GetLedgerSummaryRequest())
        assert summary.invariants_hold, summary.violations
        assert summary.chips_issued == 1_000 + rounds * 50


def _metric(svc: RunningService, series: str) -> float:
    text = urllib.request.urlopen(svc.metrics_url, timeout=5).read().decode()
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    raise AssertionError(f"{series} not exported")


def test_domain_metrics_are_exported(location: LedgerLocation) -> None:
    with wallet(location) as svc:
        s = stub(svc)
        alice, bob = open_player(s, "alice", 10), open_player(s, "bob")
        before = _metric(svc, 'poker_wallet_transfers_total{kind="TRANSFER"}')
        chips_before = _metric(svc, 'poker_wallet_chips_moved_total{kind="TRANSFER"}')
        again = pb.TransferRequest(request_id=rid(), from_account_id=alice, to_account_id=bob, amount=4)
        for _ in range(3):  # a replay changes nothing, in the ledger or in the metrics
            s.Transfer(again)
        assert _metric(svc, 'poker_wallet_transfers_total{kind="TRANSFER"}') == before + 1
        assert _metric(svc, 'poker_wallet_chips_moved_total{kind="TRANSFER"}') == chips_before + 4
        text = urllib.request.urlopen(svc.metrics_url, timeout=5).read().decode()
        assert 'poker_wallet_transfers_total{kind="TRANSFER"}' in text
        assert 'poker_wallet_chips_moved_total{kind="ISSUE"}' in text
        assert 'grpc_server_handled_total{grpc_code="OK",grpc_method="Transfer"' in text
        assert "alice" not in text and alice not in text  # no player or account id as a label


def test_holds_over_grpc_capture_release_and_sweep(location: LedgerLocation) -> None:
    """Table buy-ins and casino bets use holds; an expired hold's chips come back by the sweeper."""
    with wallet(location) as svc:
        s = stub(svc)
        alice = open_player(s, "alice", 100)
        escrow = s.CreateAccount(
            pb.CreateAccountRequest(request_id=rid(), kind=pb.ACCOUNT_KIND_TABLE_ESCROW, owner="table-9")
        ).account.account_id
        bad = pb.TransferRequest(request_id=rid(), from_account_id=alice, to_account_id="no good", amount=1)
        assert call_error(s.Transfer, bad).violations[0].field == "to_account_id"
        buy_in = s.Hold(
            pb.HoldRequest(request_id="buyin-1", from_account_id=alice, to_account_id=escrow, amount=60)
        )
        assert buy_in.hold.status == pb.HOLD_STATUS_PENDING
        as_alice = stub(svc, "alice", Role.PLAYER)
        assert as_alice.GetHold(pb.GetHoldRequest(hold_id=buy_in.hold.hold_id)).hold.amount == 60
        assert as_alice.GetAccount(pb.GetAccountRequest(account_id=alice)).account.available == 40
        captured = s.Capture(pb.CaptureRequest(request_id="seat-1", hold_request_id="buyin-1"))
        assert captured.hold.status == pb.HOLD_STATUS_CAPTURED and captured.transfer.postings[1].amount == 60
        assert captured.hold.hold_id == buy_in.hold.hold_id
        err = call_error(s.Release, pb.ReleaseRequest(request_id=rid(), hold_id=buy_in.hold.hold_id))
        assert (err.code, err.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "HOLD_ALREADY_RESOLVED")
        s.Hold(pb.HoldRequest(request_id="bet-1", from_account_id=alice, to_account_id=escrow, amount=30))
        assert (
            s.Release(pb.ReleaseRequest(request_id=rid(), hold_request_id="bet-1")).hold.status
            == pb.HOLD_STATUS_RELEASED
        )
        s.Hold(
            pb.HoldRequest(
                request_id="bet-2", from_account_id=alice, to_account_id=escrow, amount=40, ttl_ms=150
            )
        )
        deadline = time.monotonic() + 10
        while s.GetHold(pb.GetHoldRequest(hold_request_id="bet-2")).hold.status != pb.HOLD_STATUS_EXPIRED:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        while s.GetAccount(pb.GetAccountRequest(account_id=alice)).account.pending:  # swept
            assert time.monotonic() < deadline, "the sweeper did not free the expired hold"
            time.sleep(0.1)
        assert s.GetAccount(pb.GetAccountRequest(account_id=alice)).account.available == 40
        assert s.GetLedgerSummary(pb.GetLedgerSummaryRequest()).invariants_hold


def test_transfer_batch_resolves_holds_over_grpc(location: LedgerLocation) -> None:
    """Issue 5: a casino round settles in one TransferBatch: its bets' holds captured or released and the
    house's payouts, in one transaction; a replay returns the same response; errors carry their reasons."""
    with wallet(location) as svc:
        s = stub(svc)
        alice = open_player(s, "alice", 100)
        house = s.CreateAccount(
            pb.CreateAccountRequest(request_id=rid(), kind=pb.ACCOUNT_KIND_HOUSE, owner="casino")
        ).account.account_id
        for hold_id, amount in (("ante-1", 10), ("bonus-1", 5)):
            s.Hold(
                pb.HoldRequest(request_id=hold_id, from_account_id=alice, to_account_id=house, amount=amount)
            )
        payout = pb.TransferSpec(
            request_id="round-1-pay",
            postings=[
                pb.Posting(account_id=house, side=pb.POSTING_SIDE_DEBIT, amount=10),
                pb.Posting(account_id=alice, side=pb.POSTING_SIDE_CREDIT, amount=10),
            ],
        )
        request = pb.TransferBatchRequest(
            request_id="round-1",
            transfers=[payout],
            resolutions=[
                pb.HoldResolution(hold_request_id="ante-1"),  # the Ante wins: stake back, 10 paid
                pb.HoldResolution(
                    hold_request_id="bonus-1", capture_amount=5, capture_request_id="round-1-bonus"
                ),
            ],
        )
        first = s.TransferBatch(request)
        assert first.batch_id.startswith("batch_")
        assert [(t.kind, t.batch_id) for t in first.transfers] == [
            (pb.TRANSFER_KIND_CAPTURE, first.batch_id),
            (pb.TRANSFER_KIND_BATCH, first.batch_id),
        ]
        held = {
            r: s.GetHold(pb.GetHoldRequest(hold_request_id=r)).hold.hold_id for r in ("ante-1", "bonus-1")
        }
        assert [(h.hold_id, h.status) for h in first.holds] == [
            (held["ante-1"], pb.HOLD_STATUS_RELEASED),
            (held["bonus-1"], pb.HOLD_STATUS_CAPTURED),
        ]
        capture = s.GetTransfer(pb.GetTransferRequest(transfer_request_id="round-1-bonus")).transfer
        assert capture == first.transfers[0] and first.holds[1].capture_transfer_id == capture.transfer_id
        assert s.TransferBatch(request) == first
        account = s.GetAccount(pb.GetAccountRequest(account_id=alice)).account
        assert (account.balance, account.available, account.pending) == (105, 105, 0)
        s.Hold(pb.HoldRequest(request_id="ante-2", from_account_id=alice, to_account_id=house, amount=10))
        again = pb.TransferBatchRequest(
            request_id="round-2",
            resolutions=[
                pb.HoldResolution(hold_request_id="ante-2"),
                pb.HoldResolution(hold_id=held["ante-1"]),
            ],
        )
        err = call_error(s.TransferBatch, again)
        assert (err.code, err.reason, err.metadata["hold_id"]) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "HOLD_NOT_PENDING",
            held["ante-1"],
        )
        bad = pb.TransferBatchRequest(
            request_id="round-2", resolutions=[pb.HoldResolution(hold_request_id="ante-2", capture_amount=-1)]
        )
        err = call_error(s.TransferBatch, bad)
        assert err.code is grpc.StatusCode.INVALID_ARGUMENT
        assert err.violations[0].field == "resolutions[0].capture_amount"
        assert s.GetHold(pb.GetHoldRequest(hold_request_id="ante-2")).hold.status == pb.HOLD_STATUS_PENDING
        changed = pb.TransferBatchRequest(
            request_id="round-1", transfers=[payout], resolutions=request.resolutions[:1]
        )
        err = call_error(s.TransferBatch, changed)
        assert (err.reason, err.metadata["differs"]) == ("REQUEST_ID_REUSED", "resolutions")
        assert s.GetLedgerSummary(pb.GetLedgerSummaryRequest()).invariants_hold
