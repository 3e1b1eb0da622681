"""The table service's shared wallet calls (servicekit.clients.wallet) against the real wallet: a
release is done once the hold's chips are free, however they got free, and never hides a capture; a refused
hold says why with the wallet's figures."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit.auth import Role
from servicekit.clients.wallet import WalletCalls
from servicekit.errors import DomainError, details_of, status_code
from servicekit.testing import RunningService

Deps = tuple[Path, RunningService, RunningService]


def _setup(deps: Deps) -> tuple[WalletCalls, wpb_grpc.WalletServiceStub, str, str]:
    wallet = deps[2]
    calls = WalletCalls(wallet.channel("table", Role.SERVICE), prefix="test")
    operator = wpb_grpc.WalletServiceStub(wallet.channel("ops", Role.OPERATOR))
    player = operator.CreateAccount(
        wpb.CreateAccountRequest(request_id="a-p", kind=wpb.ACCOUNT_KIND_PLAYER, owner="p")
    ).account.account_id
    operator.Issue(
        wpb.IssueRequest(request_id="i-p", account_id=player, amount=100, reason=wpb.ISSUE_REASON_PROMOTION)
    )
    house = calls.account(wpb.ACCOUNT_KIND_HOUSE, "test-house", create=True)
    return calls, operator, player, house


def _hold(hold_id: str, player: str, house: str, amount: int) -> wpb.HoldRequest:
    return wpb.HoldRequest(request_id=hold_id, from_account_id=player, to_account_id=house, amount=amount)


def _hold_id(deps: Deps, request_id: str) -> str:
    """The wallet's id of the table service's hold (found by the request id of its Hold)."""
    table = wpb_grpc.WalletServiceStub(deps[2].channel("table", Role.SERVICE))
    return str(table.GetHold(wpb.GetHoldRequest(hold_request_id=request_id)).hold.hold_id)


def test_release_is_done_whenever_the_chips_are_free(deps: Deps) -> None:
    calls, operator, player, house = _setup(deps)
    calls.release("never-made")  # its Hold never reached the wallet
    calls.hold(_hold("h1", player, house, 30), "refused")
    calls.release("h1")
    calls.release("h1")  # a replay
    calls.hold(_hold("h2", player, house, 20), "refused")
    operator.Release(wpb.ReleaseRequest(request_id="elsewhere", hold_id=_hold_id(deps, "h2")))
    calls.release("h2")  # released by another request: its chips are free, done
    account = operator.GetAccount(wpb.GetAccountRequest(account_id=player)).account
    assert (account.balance, account.pending) == (100, 0)


def test_release_of_a_captured_hold_is_an_error(deps: Deps) -> None:
    calls, operator, player, house = _setup(deps)
    calls.hold(_hold("h3", player, house, 10), "refused")
    operator.Capture(wpb.CaptureRequest(request_id="h3-c", hold_id=_hold_id(deps, "h3"), amount=10))
    with pytest.raises(grpc.RpcError) as error:
        calls.release("h3")
    assert details_of(error.value).reason == "HOLD_ALREADY_RESOLVED"


def test_a_refused_hold_says_why(deps: Deps) -> None:
    """The caller's client gets FAILED_PRECONDITION INSUFFICIENT_FUNDS, the caller's words, the wallet's
    figures."""
    calls, _, player, house = _setup(deps)
    with pytest.raises(DomainError) as error:
        calls.hold(_hold("h4", player, house, 101), "not enough free chips for this bet")
    refused = error.value
    assert (status_code(refused), refused.reason) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "INSUFFICIENT_FUNDS",
    )
    assert refused.message == "not enough free chips for this bet"
    assert (refused.metadata["available"], refused.metadata["needed"]) == ("100", "101")
